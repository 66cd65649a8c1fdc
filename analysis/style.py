"""The one figure style of carrier: palette, markers, series assignment, titles, legends, bounds.

Contract (checked by analysis/figure_check.py on every figure plots.save writes):
- series i of a figure gets colour COLORS[i % 7] and marker MARKERS[(i % 7 + i // 7) % 10], and
  the line style LINESTYLES[i // 7]: the (colour, marker) pairs of series 0..69 are all distinct,
  and so are COLORS[i % 7], MARKERS[i % 10] for a caller that indexes both with i (lcm 70).
  Up to MAX_SERIES = 16 series per figure; more is unreadable, so callers refuse (cli.py).
- COLORS are Okabe and Ito's colour-blind-safe palette without its black, which is kept for
  bounds and references (BOUND_COLOR, no marker, one line style each from BOUND_STYLES).
- one legend per figure, outside every axes: right of a single axes, below a grid of panels
  (shared_legend); fonts no smaller than LEGEND_FONTSIZE.
- a bound is drawn where it is finite and positive, or the legend says it is vacuous
  (bound_line); a relative-error axis gets the relative form of the bound.
- titles name what the data fix: op, format, n, input (title()).
Determinism: the style is matplotlib's defaults plus RC (never a user's matplotlibrc), and the
assignment depends only on the series order the caller gives.
"""
import math

import matplotlib
import numpy as np

# Okabe & Ito (2008) "Color Universal Design", black left out: blue, vermillion, bluish green,
# reddish purple, orange, sky blue, yellow (last: the weakest on white).
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", ":", "-.")
BOUND_COLOR = "black"
BOUND_STYLES = ("--", ":", "-.", (0, (10, 3)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 4)),
                (0, (6, 2, 1, 2)))
MAX_SERIES = 16
LEGEND_FONTSIZE = 8.5

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "font.family": "DejaVu Sans",
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.prop_cycle": matplotlib.cycler(color=list(COLORS)),
    "legend.fontsize": LEGEND_FONTSIZE,
    "legend.framealpha": 0.9,
    "svg.hashsalt": "carrier-analysis",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "path.simplify": False,
}


def apply():
    """matplotlib's defaults plus RC, globally (for scripts that draw with pyplot directly)."""
    matplotlib.rcdefaults()
    matplotlib.rcParams.update(RC)


def context():
    """A context with matplotlib's defaults plus RC."""
    matplotlib.rcdefaults()
    return matplotlib.rc_context(RC)


def series_style(i):
    """{color, marker, linestyle} of the i-th series (0-based) of a figure."""
    c, r = i % len(COLORS), i // len(COLORS)
    return {"color": COLORS[c], "marker": MARKERS[(c + r) % len(MARKERS)],
            "linestyle": LINESTYLES[r % len(LINESTYLES)]}


def assign(names):
    """{name: series_style} in the order given (duplicates keep their first style)."""
    out = {}
    for name in names:
        if name not in out:
            out[name] = series_style(len(out))
    return out


def bound_style(j):
    """{color, linestyle} of the j-th bound curve of a figure: black, no marker."""
    return {"color": BOUND_COLOR, "linestyle": BOUND_STYLES[j % len(BOUND_STYLES)],
            "marker": "None"}


def too_many_series(count, what="figure", hint="filter or facet"):
    """None when count <= MAX_SERIES, else the one-line refusal text."""
    if count <= MAX_SERIES:
        return None
    return (f"{what}: {count} series exceed the {MAX_SERIES} one figure can tell apart; "
            f"{hint}")


def title(what, **fixed):
    """'WHAT: op sum, format fp16, n = 1024, input uniform01' from the fields given (a list or
    tuple value of several items is written 'a|b'; None, '' and [] are left out). Keys: op,
    format (or dtype), n, input, and any other name=value."""
    names = {"dtype": "format"}
    parts = []
    for key, value in fixed.items():
        if value is None or value == "" or (isinstance(value, (list, tuple)) and not value):
            continue
        if isinstance(value, (list, tuple)):
            value = "|".join(str(v) for v in value) if len(value) <= 3 else \
                f"{value[0]}..{value[-1]}"
        k = names.get(key, key)
        parts.append(f"n = {value}" if k == "n" else f"{k} {value}")
    return f"{what}: {', '.join(parts)}" if parts else what


def bound_line(ax, x, y, label, j=0, cap=None, vacuous="vacuous here (not drawn)", **kw):
    """Draw bound y(x) where finite, > 0 (and <= cap); when nothing is left, a blank legend entry
    'LABEL: VACUOUS' instead of a line the reader would look for."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = np.isfinite(y) & (y > 0) & np.isfinite(x)
    if cap is not None:
        keep &= y <= cap
    if not keep.any():
        return ax.plot([], [], " ", label=f"{label}: {vacuous}")[0]
    style = dict(bound_style(j), lw=1.1, alpha=0.85)
    style.update(kw)
    return ax.plot(x[keep], y[keep], label=label, **style)[0]


def relative_bound(bound, reference, kind="absolute"):
    """The relative form of a bound: bound / |reference| when kind says absolute, else bound;
    inf or nan (vacuous) stays as it is, a zero reference gives inf."""
    b = np.asarray(bound, dtype=np.float64)
    if "relative" in str(kind):
        return b
    ref = np.abs(np.asarray(reference, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ref > 0, b / np.where(ref > 0, ref, 1.0), np.inf)


# ---- legends ------------------------------------------------------------------------------

def _legend_entries(fig):
    """(handles, labels, title, markerscale) of every legend of fig, deduplicated by label, in
    axes order; the legends' own proxy artists are reused, so explicit handles survive (they
    already carry the old legend's markerscale, so the new one is 1)."""
    handles, labels, seen, ttl, mscale = [], [], set(), "", 1.0
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends += list(fig.legends)
    if not legends:  # no legend yet: every labelled artist of every axes, in axes order
        for ax in fig.axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in seen:
                    seen.add(lab)
                    handles.append(h)
                    labels.append(lab)
    for leg in legends:
        t = leg.get_title().get_text()
        ttl = ttl or t
        hs = getattr(leg, "legend_handles", None) or leg.legendHandles
        for h, text in zip(hs, leg.get_texts()):
            lab = text.get_text()
            if lab in seen:
                continue
            seen.add(lab)
            handles.append(h)
            labels.append(lab)
    return legends, handles, labels, ttl, mscale


def _strip(legends, fig):
    for leg in legends:
        if leg in fig.legends:
            fig.legends.remove(leg)
        else:
            leg.remove()


def _px(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def shared_legend(fig, where=None, title=None):
    """Replace every legend of fig by one legend outside the data: right of the axes when fig
    has one axes (and the legend is not taller than it), else centred below all panels. The
    figure grows by the legend's size, so the panels keep theirs. Returns the legend (or None
    when fig had no legend entries)."""
    legends, handles, labels, ttl, mscale = _legend_entries(fig)
    if not handles:
        _strip(legends, fig)
        return None
    _strip(legends, fig)
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    data_axes = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    ttl = title if title is not None else ttl
    kw = dict(title=ttl or None, markerscale=mscale, fontsize=LEGEND_FONTSIZE,
              title_fontsize=LEGEND_FONTSIZE, frameon=False)
    if where is None:
        where = "right" if len(data_axes) == 1 and len(handles) <= 14 else "below"
    w_in, h_in = fig.get_size_inches()
    dpi = fig.dpi
    if where == "right":
        ax = data_axes[0]
        leg = ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                        borderaxespad=0.0, **kw)
        r = _px(fig)
        extra = leg.get_window_extent(r).width / dpi + 0.15
        fig.set_size_inches(w_in + extra, h_in)
        return leg
    # Below: as many columns as fit the figure width.
    ncol = len(handles)
    while True:
        leg = fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                         ncol=ncol, **kw)
        r = _px(fig)
        bb = leg.get_window_extent(r)
        if bb.width <= 0.98 * w_in * dpi or ncol == 1:
            break
        fig.legends.remove(leg)
        ncol = max(1, min(ncol - 1, int(ncol * 0.98 * w_in * dpi / bb.width)))
    extra = bb.height / dpi + 0.1
    fig.set_size_inches(w_in, h_in + extra)
    frac = extra / (h_in + extra)
    eng = fig.get_layout_engine()
    eng.set(rect=(0.0, frac, 1.0, 1.0 - frac))
    return leg


def finish(fig):
    """The last step before saving: any legend inside an axes (or several per figure) becomes
    one shared legend outside the data; nothing else changes."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends += list(fig.legends)
    if not legends:
        return fig
    if len(legends) == 1 and _outside(fig, legends[0]):
        return fig
    shared_legend(fig)
    return fig


def _outside(fig, leg):
    r = _px(fig)
    lb = leg.get_window_extent(r)
    return not any(lb.overlaps(a.get_window_extent(r)) for a in fig.axes)


def fmt_u(u):
    """u=2^-11 for a power of two, else u=1.2e-07."""
    e = math.log2(u)
    return f"u=2^{int(e)}" if e == int(e) else f"u={u:.3g}"
