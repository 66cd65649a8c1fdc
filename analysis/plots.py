"""The five standard figures of a sweep, rendered deterministically.

Determinism contract: the same table and arguments give byte-identical files. The style is
fixed here (rcdefaults plus the overrides in _STYLE, never the user's matplotlibrc), series
follow the order of first appearance in the table, jitter is a fixed pattern, and every saver
strips what would vary between runs: the PNG 'Software' text chunk, the SVG date (and ids are
hashed with a fixed svg.hashsalt), the PDF CreationDate/Producer.

Every plot writes OUT_PREFIX.<fmt> for each requested format and returns the written paths.
Errors of exactly 0 cannot sit on a log axis: they are left out and the legend says how many.
"""
import math
import os
import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from . import bounds as _bounds
from . import figure_check, style
from .io import AnalysisError, require

FORMATS = ("png", "svg", "pdf")
# The palette, markers and rc overrides live in style.py (one style for every figure); these
# names stay for callers that index them directly (COLORS[i], MARKERS[i]: distinct pairs).
COLORS, MARKERS = style.COLORS, style.MARKERS
_COLORS, _MARKERS, _STYLE = list(COLORS), list(MARKERS), style.RC


def _style():
    """A context with matplotlib's defaults plus style.RC."""
    return style.context()


def new_figure(width=6.4, height=4.2, nrows=1, ncols=1, **kw):
    """A figure and axes in the fixed style (use inside or outside a plot call)."""
    style.apply()
    return plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kw)


def save(fig, out_prefix, formats=("png", "svg")):
    """Write fig as OUT_PREFIX.<fmt> for each format with no time or version metadata, after
    style.finish (one legend, outside the data) and figure_check.report (CARRIER_FIGURE_CHECK:
    strict raises FigureCheckError, off skips, default warns on stderr)."""
    style.finish(fig)
    figure_check.report(fig, os.path.basename(out_prefix))
    fig._carrier_checked = True  # figure_check.install()'s savefig hook: checked once
    paths = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise AnalysisError(f"unknown figure format '{fmt}'; allowed: {', '.join(FORMATS)}")
        path = f"{out_prefix}.{fmt}"
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        if fmt == "png":
            meta = {"Software": None}
        elif fmt == "svg":
            meta = {"Date": None, "Creator": None}
        else:
            meta = {"CreationDate": None, "Producer": None, "Creator": None}
        with matplotlib.rc_context({"svg.hashsalt": "carrier-analysis"}):
            fig.savefig(path, format=fmt, metadata=meta)
        paths.append(path)
    plt.close(fig)
    return paths


def _label(values):
    return " ".join(v for v in values if v != "") or "all"


_AUTO_SERIES = ("op", "dtype", "acc", "round", "exp", "schedule", "backend", "input")


def _series(table, series):
    """series=None: the parameter columns of _AUTO_SERIES that take more than one value."""
    if series is not None:
        return tuple(series)
    return tuple(c for c in _AUTO_SERIES if c in table.columns and len(table.unique(c)) > 1)


def _groups(table, series):
    """(label, sub-table) per distinct combination of the series columns, first-seen order."""
    if not series:
        return [("all", table)]
    keys = {}
    for r in table.rows:
        keys.setdefault(tuple(r[c] for c in series), []).append(r)
    return [(_label(k), type(table)(table.columns, rows, table.source)) for k, rows in keys.items()]


def _positive(x, y):
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0)
    return x[keep], y[keep], int(np.count_nonzero(np.isfinite(y) & (y == 0)))


def _median_by(x, y):
    xs = np.unique(x)
    return xs, np.array([np.median(y[x == v]) for v in xs])


def _u_values(table, u):
    """The unit roundoffs for the default bound curves: given, from column u, or from dtype."""
    if u is not None:
        return [(None, float(u))]
    if "u" in table.columns:
        vals = sorted({v for v in table.floats("u") if np.isfinite(v) and v > 0}, reverse=True)
        return [(None, v) for v in vals]
    if "dtype" in table.columns:
        out = []
        for d in table.unique("dtype"):
            try:
                out.append((d, _bounds.unit_roundoff(d)))
            except ValueError as e:
                raise AnalysisError(str(e)) from None
        return out
    raise AnalysisError("error-vs-n: default bounds need a 'u' or 'dtype' column, or u=...")


def _u_name(name, u):
    if name:
        return name
    e = math.log2(u)
    return f"u=2^{int(e)}" if e == int(e) else f"u={u:.3g}"


FACET_ALIASES = {"format": "dtype"}
_FIXED = ("op", "dtype", "n", "input")


def facet_columns(facet):
    """None | 'op' | 'op,format' | ['op', 'dtype'] -> a tuple of column names (format = dtype)."""
    if not facet:
        return ()
    items = facet.split(",") if isinstance(facet, str) else list(facet)
    return tuple(FACET_ALIASES.get(c.strip(), c.strip()) for c in items if c.strip())


def fixed_fields(table, skip=()):
    """{op, dtype, n, input: value} for the columns every row agrees on; n as 'lo..hi' else."""
    out = {}
    for c in _FIXED:
        if c in skip or c not in table.columns:
            continue
        vals = [v for v in table.unique(c) if v != ""]
        if len(vals) == 1:
            out[c] = vals[0]
        elif c == "n" and vals:
            ns = table.floats("n")
            ns = ns[np.isfinite(ns)]
            if ns.size:
                out["n"] = f"{int(ns.min())}..{int(ns.max())}"
    return out


def _panels(table, facet):
    """({facet col: value}, sub-table) per facet combination, first-seen order."""
    if not facet:
        return [({}, table)]
    keys = {}
    for r in table.rows:
        keys.setdefault(tuple(r[c] for c in facet), []).append(r)
    return [(dict(zip(facet, k)), type(table)(table.columns, rows, table.source))
            for k, rows in keys.items()]


def _series_figure(table, out_prefix, *, what, x_of, y, series, facet, bound_curves, bound_cap,
                   title, formats, xlabel, xbase):
    """The shared body of error_vs_n and error_vs_tile: one panel per facet combination, one
    style per series label across all panels (style.assign), faint trials and the median per x
    as a line, bound curves (bound_curves(sub) -> [(label, fn)]) in black, one shared legend."""
    panels = _panels(table, facet)
    groups = [_groups(sub, series) for _, sub in panels]
    styles = style.assign([label for gs in groups for label, _ in gs])
    per = " x ".join(f"{len(table.unique(c))} {c}" for c in series) or "one"
    refusal = style.too_many_series(
        len(styles), what, hint=f"one line per {per} value(s); filter (--where COL=V, --op, "
                                f"--format) or facet (--facet COL[,COL], e.g. op,format,input) "
                                f"instead")
    if refusal:
        raise AnalysisError(refusal)
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    w, h = (6.4, 4.2) if len(panels) == 1 else (4.2 * ncols, 3.4 * nrows)
    with _style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained",
                                 squeeze=False)
        bound_index, drawn, vacuous = {}, set(), []
        for k, ((fix, sub), gs) in enumerate(zip(panels, groups)):
            ax = axes.flat[k]
            zeros_here = shown_here = 0
            for label, g in gs:
                st = styles[label]
                x, v, zeros = _positive(x_of(g), g.floats(y))
                zeros_here += zeros
                shown_here += x.size
                if x.size == 0:
                    ax.plot([], [], color=st["color"], marker=st["marker"], label=label)
                    continue
                ax.scatter(x, v, s=8, color=st["color"], alpha=0.25, marker=st["marker"],
                           linewidths=0)
                xs, med = _median_by(x, v)
                ax.plot(xs, med, color=st["color"], marker=st["marker"], ls=st["linestyle"],
                        ms=4, lw=1.4, label=label)
            xall = x_of(sub)
            xall = np.unique(xall[np.isfinite(xall) & (xall > 0)])
            if xall.size:
                grid = np.geomspace(xall.min(), xall.max(), 64)
                for label, fn in bound_curves(sub):
                    j = bound_index.setdefault(label, len(bound_index))
                    vals = np.asarray(fn(grid), dtype=np.float64)
                    keep = np.isfinite(vals) & (vals > 0)
                    if bound_cap is not None:
                        keep &= vals <= bound_cap
                    if keep.any():
                        ax.plot(grid[keep], vals[keep], lw=1.0, alpha=0.8, label=label,
                                **style.bound_style(j))
                        drawn.add(label)
                    elif label not in vacuous:
                        vacuous.append(label)
            ax.set_xscale("log", base=xbase)
            ax.set_yscale("log")
            if shown_here == 0 and not ax.lines[len(gs):]:
                # Nothing positive to draw (every error zero, e.g. sums exact in the format): a
                # log axis needs limits of its own, and the panel says why it is empty.
                ax.set_ylim(1e-8, 1.0)
                if xall.size:
                    ax.set_xlim(xall.min() / 1.5, xall.max() * 1.5)
                ax.text(0.5, 0.5, "every error is zero" if zeros_here else "no data",
                        transform=ax.transAxes, ha="center", va="center", fontsize=9)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(y.replace("_", " "))
            note = f" ({zeros_here} zero errors not shown)" if zeros_here else ""
            if len(panels) > 1:
                ax.set_title(style.title("", **fix).lstrip(": ") + note, fontsize=9.5)
            else:
                ax.set_title((title or style.title(what, **fixed_fields(table))) + note)
        for ax in list(axes.flat[len(panels):]):
            fig.delaxes(ax)
        first = axes.flat[0]
        cap = f" (> {bound_cap:g})" if bound_cap is not None else ""
        for label in vacuous:
            if label not in drawn:  # a legend never names a bound it does not draw
                first.plot([], [], " ", label=f"{label}: vacuous on this range{cap}, not drawn")
        if len(panels) > 1:
            fig.suptitle(title or style.title(what, **fixed_fields(table, skip=facet)))
        style.shared_legend(fig)
        return save(fig, out_prefix, formats)


def error_vs_n(table, out_prefix, *, y="rel_error", series=None, u=None,
               bounds="default", lam=1.0, bound_cap=1.0, facet=None, title=None,
               formats=("png", "svg")):
    """Error against n on log-log axes, every trial faint, the median per n as a line.

    series=None: one line per combination of the parameter columns that vary in the table
    (facet columns left out); more than style.MAX_SERIES lines is an AnalysisError.
    facet: None, a column or 'op,format' (format = dtype): one panel per value, one legend.
    bound_cap: bound curves are drawn only where <= bound_cap (None: everywhere); a bound that
    is nowhere drawable is named 'vacuous ... not drawn' in the legend, never as a line.
    bounds: "default" overlays gamma_n = nu/(1-nu) and lam*sqrt(n)*u for each unit roundoff in
    the panel (or the given u) -- the relative-error bounds of a sum of same-sign terms; a list
    of (label, fn(n) -> bound) draws those instead; None none.
    """
    facet = facet_columns(facet)
    require(table, ["n", y] + list(series or ()) + list(facet), "error-vs-n", table.source)
    series = tuple(c for c in _series(table, series) if c not in facet)
    if len(table) == 0:
        raise AnalysisError(f"error-vs-n: {table.source} has no rows to plot")

    def curves(sub):
        if bounds is None:
            return []
        if bounds != "default":
            return list(bounds)
        out = []
        for name, uu in _u_values(sub, u):
            tag = _u_name(name, uu)
            out.append((f"$\\gamma_n$ ({tag})", lambda n, uu=uu: _bounds.gamma(n, uu)))
            lam_text = "" if lam == 1 else f"{lam:g}"
            out.append((f"${lam_text}\\sqrt{{n}}u$ ({tag})",
                        lambda n, uu=uu: _bounds.prob_bound(n, uu, lam)))
        return out

    return _series_figure(table, out_prefix, what=f"{y.replace('_', ' ')} vs n",
                          x_of=lambda t: t.floats("n"), y=y, series=series, facet=facet,
                          bound_curves=curves, bound_cap=bound_cap, title=title,
                          formats=formats, xlabel="n", xbase=10)


_TILE = re.compile(r"^blocked:(\d+)")


def _tiles(table, tile):
    if tile == "schedule":
        out = np.full(len(table), np.nan)
        for i, s in enumerate(table.column("schedule")):
            m = _TILE.match(s)
            if m:
                out[i] = float(m.group(1))
        return out
    return table.floats(tile)


def error_vs_tile(table, out_prefix, *, tile="schedule", y="rel_error", series=None,
                  bounds=None, bound_cap=1.0, facet=None, title=None, formats=("png", "svg")):
    """Error against tile size (log2 x, log y). tile="schedule" reads B from blocked:B[:...].

    Rows whose schedule is not blocked are left out; none left is an error. series=None: the
    varying parameter columns other than the schedule (and the facet columns). bounds: a list
    of (label, fn(b) -> bound) or None; facet as error_vs_n.
    """
    facet = facet_columns(facet)
    require(table, [tile, y] + list(series or ()) + list(facet), "error-vs-tile", table.source)
    series = tuple(c for c in _series(table, series)
                   if (c != "schedule" or tile != "schedule") and c not in facet)
    tiles = _tiles(table, tile)
    keep_rows = [r for r, t in zip(table.rows, tiles) if np.isfinite(t)]
    if not keep_rows:
        raise AnalysisError(f"error-vs-tile: no row of {table.source} has a tile size in "
                            f"'{tile}' (schedules blocked:B)")
    sub_all = type(table)(table.columns, keep_rows, table.source)
    return _series_figure(sub_all, out_prefix, what=f"{y.replace('_', ' ')} vs tile size",
                          x_of=lambda t: _tiles(t, tile), y=y, series=series, facet=facet,
                          bound_curves=lambda sub: list(bounds or []), bound_cap=bound_cap,
                          title=title, formats=formats,
                          xlabel="tile size b" if tile == "schedule" else tile, xbase=2)


def error_by_order(table, out_prefix, *, order="schedule", y="rel_error", kind="box",
                   title=None, formats=("png", "svg")):
    """The spread over trials of the error for each merge order, as boxes or a strip plot."""
    if kind not in ("box", "strip"):
        raise AnalysisError(f"error-by-order: kind must be box or strip, got '{kind}'")
    require(table, [order, y], "error-by-order", table.source)
    if len(table) == 0:
        raise AnalysisError(f"error-by-order: {table.source} has no rows to plot")
    names = table.unique(order)
    with _style():
        fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(names) + 2), 4.2),
                               layout="constrained")
        data, zeros = [], 0
        for name in names:
            v = table.where(**{order: name}).floats(y)
            z = int(np.count_nonzero(v == 0))
            zeros += z
            data.append(v[np.isfinite(v) & (v > 0)])
        pos = np.arange(1, len(names) + 1)
        if kind == "box":
            ax.boxplot([d if d.size else np.array([np.nan]) for d in data], positions=pos,
                       widths=0.6, showfliers=True, flierprops={"markersize": 3})
        else:
            for i, d in enumerate(data):
                if d.size == 0:
                    continue
                # A fixed jitter pattern (not random) keeps the strip reproducible.
                off = (np.arange(d.size) % 7 - 3) * 0.06
                ax.scatter(pos[i] + off, d, s=10, color=_COLORS[i % len(_COLORS)], alpha=0.7,
                           linewidths=0)
                ax.plot([pos[i] - 0.3, pos[i] + 0.3], [np.median(d)] * 2, color="black", lw=1.2)
        ax.set_xticks(pos)
        ax.set_xticklabels(names, rotation=30 if len(names) > 4 else 0, ha="right"
                           if len(names) > 4 else "center")
        ax.set_yscale("log")
        ax.set_xlabel(order)
        ax.set_ylabel(y.replace("_", " "))
        ttl = title or f"{y.replace('_', ' ')} by {order}"
        if zeros:
            ttl += f" ({zeros} zero errors not shown)"
        ax.set_title(ttl)
        return save(fig, out_prefix, formats)


_REDUCERS = {"median": np.median, "max": np.max, "mean": np.mean}


def heatmap(table, out_prefix, *, rows="dtype", cols="schedule", value="rel_error",
            reduce="median", log=True, title=None, formats=("png", "svg")):
    """A rows x cols grid of reduce(value) over the trials of each cell, annotated."""
    if reduce not in _REDUCERS:
        raise AnalysisError(f"heatmap: reduce must be one of {', '.join(_REDUCERS)}, got "
                            f"'{reduce}'")
    require(table, [rows, cols, value], "heatmap", table.source)
    if len(table) == 0:
        raise AnalysisError(f"heatmap: {table.source} has no rows to plot")
    rnames, cnames = table.unique(rows), table.unique(cols)
    grid = np.full((len(rnames), len(cnames)), np.nan)
    vals = table.floats(value)
    rcol, ccol = table.column(rows), table.column(cols)
    for i, rn in enumerate(rnames):
        for j, cn in enumerate(cnames):
            v = vals[[a == rn and b == cn for a, b in zip(rcol, ccol)]]
            v = v[np.isfinite(v)]
            if v.size:
                grid[i, j] = _REDUCERS[reduce](v)
    with _style():
        fig, ax = plt.subplots(figsize=(max(4.0, 1.0 * len(cnames) + 2.2),
                                        max(2.5, 0.55 * len(rnames) + 1.6)),
                               layout="constrained")
        shown = grid.copy()
        if log:
            with np.errstate(divide="ignore"):
                shown = np.where(grid > 0, np.log10(np.where(grid > 0, grid, 1.0)), np.nan)
        masked = np.ma.masked_invalid(shown)
        cmap = matplotlib.colormaps["viridis"].copy()
        cmap.set_bad("#dddddd")
        im = ax.imshow(masked, cmap=cmap, aspect="auto", interpolation="nearest")
        cb = fig.colorbar(im, ax=ax)
        cb.set_label(f"log10 {reduce} {value}" if log else f"{reduce} {value}")
        for i in range(len(rnames)):
            for j in range(len(cnames)):
                text = "n/a" if not np.isfinite(grid[i, j]) else f"{grid[i, j]:.1e}"
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="white" if np.isfinite(shown[i, j]) and shown[i, j] <
                        np.nanmean(shown) else "black")
        ax.set_xticks(range(len(cnames)))
        ax.set_xticklabels(cnames, rotation=30 if len(cnames) > 3 else 0,
                           ha="right" if len(cnames) > 3 else "center")
        ax.set_yticks(range(len(rnames)))
        ax.set_yticklabels(rnames)
        ax.set_xlabel(cols)
        ax.set_ylabel(rows)
        ax.grid(False)
        ax.set_title(title or f"{reduce} {value.replace('_', ' ')}: {rows} x {cols}")
        return save(fig, out_prefix, formats)


def perf_bars(bench, out_prefix, *, baseline=None, title=None, formats=("png", "svg")):
    """Grouped bars of seconds per case and variant, each labelled with its speed-up over the
    baseline variant of the same case (seconds(baseline) / seconds(variant))."""
    require(bench, ["case", "variant", "seconds"], "perf-bars", bench.source)
    if len(bench) == 0:
        raise AnalysisError(f"perf-bars: {bench.source} has no rows to plot")
    cases, variants = bench.unique("case"), bench.unique("variant")
    base = baseline if baseline is not None else variants[0]
    if base not in variants:
        raise AnalysisError(f"perf-bars: baseline '{base}' is not a variant of {bench.source}; "
                            f"variants: {', '.join(variants)}")
    secs = bench.floats("seconds")
    if not np.all(np.isfinite(secs)) or np.any(secs <= 0):
        raise AnalysisError(f"perf-bars: {bench.source} column seconds must be finite and > 0")
    t = {}
    for r, s in zip(bench.rows, secs):
        key = (r["case"], r["variant"])
        t[key] = min(s, t.get(key, math.inf))  # the best of repeated rows
    width = 0.8 / len(variants)
    with _style():
        fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(cases) + 2), 4.2),
                               layout="constrained")
        for j, v in enumerate(variants):
            xs = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(cases))]
            hs = [t.get((c, v), np.nan) for c in cases]
            hatch = (None, "//", "..", "xx")[(j // len(COLORS)) % 4]
            ax.bar(xs, hs, width=width * 0.95, color=COLORS[j % len(COLORS)], hatch=hatch,
                   label=v)
            for x, c, h in zip(xs, cases, hs):
                b = t.get((c, base))
                if np.isfinite(h) and b is not None:
                    ax.text(x, h, f"x{b / h:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases)
        ax.set_ylabel("seconds (best)")
        ax.set_title(title or f"time per case; labels: speed-up over {base}")
        ax.legend(title="variant")
        return save(fig, out_prefix, formats)
