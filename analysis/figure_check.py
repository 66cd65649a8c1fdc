"""Checks that a matplotlib Figure is fit to publish in carrier's style (analysis/style.py).

problems(fig) lists, one line each:
- two series of one axes, or two entries of one legend, drawn with the same (colour, marker):
  a series is a labelled Line2D, PathCollection (scatter) or bar container; its identity is
  (colour, marker shape), or (colour, line style) for a line without markers, or (colour, 'bar');
- one label drawn with two different identities in different panels (a shared legend would lie);
- a legend that overlaps the data area of any axes, or reaches past the figure's edge (cut off),
  or more than one legend in the figure, or legend text smaller than 7 pt;
- a legend entry that names a bound ('bound', gamma, γ; not 'vacuous') without a drawn artist:
  a line or points with at least one finite point inside the axes' view;
- more than style.MAX_SERIES series entries in one legend.
Blank legend entries (no line, no marker: notes such as 'bound vacuous here') are not series.

check(fig, name) raises FigureCheckError with every problem; install() makes every
Figure.savefig check first, as CARRIER_FIGURE_CHECK says: 'strict' raises, 'off' skips,
anything else (the default) prints each problem to stderr as 'figure_check: NAME: ...'.
"""
import os
import re
import sys

import matplotlib
import matplotlib.figure
import numpy as np
from matplotlib.collections import Collection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.patches import Rectangle

from . import style

BOUND_WORDS = re.compile(r"bound|\\gamma|γ", re.IGNORECASE)
MIN_FONT_PT = 7.0


class FigureCheckError(AssertionError):
    pass


def _hex(c):
    try:
        return to_hex(c, keep_alpha=False)
    except (ValueError, TypeError):
        return str(c)


def _shape(path):
    v = np.round(np.asarray(path.vertices, dtype=np.float64), 3)
    return hash((v.tobytes(), tuple(path.codes) if path.codes is not None else None))


def _marker_shape(marker):
    if marker in (None, "", "None", "none", " "):
        return None
    ms = MarkerStyle(marker)
    return _shape(ms.get_path().transformed(ms.get_transform()))


def _ls(line):
    ls = line.get_linestyle()
    return None if ls in ("None", "none", "", " ") else str(line._dash_pattern)


def identity(artist):
    """(colour, marker shape | 'line:' dashes | 'bar') of a series artist; None for a blank."""
    if isinstance(artist, Line2D):
        shape = _marker_shape(artist.get_marker())
        if shape is not None:
            fc = artist.get_markerfacecolor()
            col = artist.get_color() if fc in ("none", "None") else fc
            return (_hex(col), shape)
        ls = _ls(artist)
        return None if ls is None else (_hex(artist.get_color()), "line:" + ls)
    if isinstance(artist, PathCollection):
        paths = artist.get_paths()
        fcs = artist.get_facecolors()
        col = fcs[0] if len(fcs) else (artist.get_edgecolors()[0]
                                       if len(artist.get_edgecolors()) else "none")
        return (_hex(col), _shape(paths[0]) if paths else None)
    if isinstance(artist, BarContainer):
        return identity(artist.patches[0]) if artist.patches else None
    if isinstance(artist, Rectangle):
        return (_hex(artist.get_facecolor()), f"bar{artist.get_hatch() or ''}")
    if isinstance(artist, Collection):  # fill_between and other areas: the face colour
        fcs = artist.get_facecolors()
        return (_hex(fcs[0]) if len(fcs) else "none", "fill")
    try:
        return (_hex(artist.get_color()), type(artist).__name__)
    except AttributeError:
        return (type(artist).__name__, id(artist))


def _labelled(ax):
    """(label, artist) of the series artists of ax that carry a legend label."""
    out = []
    for a in list(ax.lines) + list(ax.collections):
        lab = a.get_label()
        if lab and not lab.startswith("_"):
            out.append((lab, a))
    for c in ax.containers:
        lab = c.get_label()
        if isinstance(c, BarContainer) and lab and not lab.startswith("_"):
            out.append((lab, c))
    return out


def _drawn(artist, ax):
    """True when the artist has a finite point inside ax's view limits."""
    if isinstance(artist, Line2D):
        x, y = (np.asarray(v, dtype=np.float64) for v in artist.get_data())
    elif isinstance(artist, PathCollection):
        off = np.asarray(artist.get_offsets(), dtype=np.float64).reshape(-1, 2)
        x, y = off[:, 0], off[:, 1]
    elif isinstance(artist, BarContainer):
        return len(artist.patches) > 0
    else:
        return artist.get_visible()
    if not artist.get_visible() or x.size == 0:
        return False
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    ok = np.isfinite(x) & np.isfinite(y) & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return bool(ok.any())


def _pairs(items, where):
    """Problems for distinct labels sharing one identity."""
    out, owner = [], {}
    for lab, key in items:
        if key is None:
            continue
        other = owner.setdefault(key, lab)
        if other != lab:
            out.append(f"{where}: '{other}' and '{lab}' share colour {key[0]} and marker/line "
                       f"{key[1] if isinstance(key[1], str) else 'shape'}")
    return out


def problems(fig):
    """Every problem of fig (empty list: fit to publish)."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    seen = {}  # label -> identity across panels
    all_labelled = []
    for k, ax in enumerate(fig.axes):
        items = [(lab, identity(a)) for lab, a in _labelled(ax)]
        name = f"axes {k} ('{ax.get_title()}')" if ax.get_title() else f"axes {k}"
        out += _pairs(sorted(set(items), key=lambda t: (t[0], str(t[1]))), name)
        for lab, key in items:
            if key is None:
                continue
            prev = seen.setdefault(lab, key)
            if prev != key:
                out.append(f"label '{lab}' is drawn in two styles in different panels")
        all_labelled += [(lab, a, ax) for lab, a in _labelled(ax)]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends += list(fig.legends)
    if len(legends) > 1:
        out.append(f"{len(legends)} legends: one shared legend per figure")
    fb = fig.bbox
    for leg in legends:
        lb = leg.get_window_extent(r)
        for k, ax in enumerate(fig.axes):
            ab = ax.get_window_extent(r)
            ix = min(lb.x1, ab.x1) - max(lb.x0, ab.x0)
            iy = min(lb.y1, ab.y1) - max(lb.y0, ab.y0)
            if ix > 1 and iy > 1:
                out.append(f"legend overlaps the data area of axes {k} "
                           f"({ix:.0f} x {iy:.0f} px)")
        if lb.x0 < fb.x0 - 1 or lb.y0 < fb.y0 - 1 or lb.x1 > fb.x1 + 1 or lb.y1 > fb.y1 + 1:
            out.append(f"legend reaches past the figure's edge (legend {lb.bounds}, figure "
                       f"{fb.bounds}): cut off")
        small = [t.get_text() for t in leg.get_texts() if t.get_fontsize() < MIN_FONT_PT]
        if small:
            out.append(f"legend text under {MIN_FONT_PT:g} pt: {small[:3]}")
        hs = getattr(leg, "legend_handles", None) or leg.legendHandles
        entries = [(t.get_text(), identity(h)) for h, t in zip(hs, leg.get_texts())]
        out += _pairs(entries, "legend")
        series = [lab for lab, key in entries
                  if key is not None and key[0] != _hex(style.BOUND_COLOR)]
        if len(series) > style.MAX_SERIES:
            out.append(f"legend has {len(series)} series (> {style.MAX_SERIES}): filter or "
                       "facet")
        for lab, key in entries:
            if not BOUND_WORDS.search(lab) or "vacuous" in lab.lower():
                continue
            drawn = [a for la, a, ax in all_labelled
                     if (la == lab or (key is not None and identity(a) == key))
                     and _drawn(a, ax)]
            if not drawn:
                out.append(f"legend names the bound '{lab}' but no artist of it is drawn "
                           "inside the axes (draw it, or label it 'vacuous')")
    return out


def check(fig, name="figure"):
    """Raise FigureCheckError listing every problem of fig."""
    found = problems(fig)
    if found:
        raise FigureCheckError(f"{name}: " + "; ".join(found))


def mode():
    return os.environ.get("CARRIER_FIGURE_CHECK", "warn")


def report(fig, name):
    """Check fig as CARRIER_FIGURE_CHECK says (strict: raise; off: skip; else warn)."""
    m = mode()
    if m == "off":
        return []
    found = problems(fig)
    if found and m == "strict":
        raise FigureCheckError(f"{name}: " + "; ".join(found))
    for p in found:
        sys.stderr.write(f"figure_check: {name}: {p}\n")
    return found


_ORIGINAL_SAVEFIG = None


def install():
    """Make every Figure.savefig of this process run report() first (idempotent)."""
    global _ORIGINAL_SAVEFIG
    if _ORIGINAL_SAVEFIG is not None:
        return
    _ORIGINAL_SAVEFIG = matplotlib.figure.Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        if not getattr(self, "_carrier_checked", False):
            report(self, os.path.basename(str(fname)))
        return _ORIGINAL_SAVEFIG(self, fname, *args, **kwargs)

    matplotlib.figure.Figure.savefig = savefig
