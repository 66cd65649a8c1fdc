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
from .io import AnalysisError, require

FORMATS = ("png", "svg", "pdf")
_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
COLORS, MARKERS = tuple(_COLORS), tuple(_MARKERS)  # the fixed cycles, for custom figures
_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.prop_cycle": matplotlib.cycler(color=_COLORS),
    "legend.fontsize": 7.5,
    "legend.framealpha": 0.85,
    "svg.hashsalt": "carrier-analysis",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "path.simplify": False,
}


def _style():
    """A context with matplotlib's defaults plus our fixed overrides."""
    matplotlib.rcdefaults()
    return matplotlib.rc_context(_STYLE)


def new_figure(width=6.4, height=4.2):
    """A figure and axes in the fixed style (use inside or outside a plot call)."""
    matplotlib.rcdefaults()
    matplotlib.rcParams.update(_STYLE)
    return plt.subplots(figsize=(width, height), layout="constrained")


def save(fig, out_prefix, formats=("png", "svg")):
    """Write fig as OUT_PREFIX.<fmt> for each format with no time or version metadata."""
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


def error_vs_n(table, out_prefix, *, y="rel_error", series=None, u=None,
               bounds="default", lam=1.0, bound_cap=1.0, title=None, formats=("png", "svg")):
    """Error against n on log-log axes, every trial faint, the median per n as a line.

    series=None: one line per combination of the parameter columns that vary in the table.
    bound_cap: bound curves are drawn only where <= bound_cap (None: everywhere).
    bounds: "default" overlays gamma_n = nu/(1-nu) and lam*sqrt(n)*u for each unit roundoff in
    the table (or the given u); a list of (label, fn(n) -> bound) draws those instead; None none.
    """
    require(table, ["n", y] + list(series or ()), "error-vs-n", table.source)
    series = _series(table, series)
    if len(table) == 0:
        raise AnalysisError(f"error-vs-n: {table.source} has no rows to plot")
    with _style():
        fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
        all_n = table.floats("n")
        for i, (label, sub) in enumerate(_groups(table, series)):
            x, v, zeros = _positive(sub.floats("n"), sub.floats(y))
            color, marker = _COLORS[i % len(_COLORS)], _MARKERS[i % len(_MARKERS)]
            if zeros:
                label = f"{label} ({zeros} zero errors not shown)"
            if x.size == 0:
                ax.plot([], [], color=color, marker=marker, label=label)
                continue
            ax.scatter(x, v, s=8, color=color, alpha=0.25, marker=marker, linewidths=0)
            xs, med = _median_by(x, v)
            ax.plot(xs, med, color=color, marker=marker, ms=4, lw=1.4, label=label)
        ns = np.unique(all_n[np.isfinite(all_n) & (all_n > 0)])
        if ns.size:
            grid = np.geomspace(ns.min(), ns.max(), 64)
            _draw_bounds(ax, table, grid, bounds, u, lam, bound_cap)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(y.replace("_", " "))
        ax.set_title(title or f"{y.replace('_', ' ')} vs n")
        _legend(ax)
        return save(fig, out_prefix, formats)


def _legend(ax):
    """Inside the axes when short; to the right of them (outside the data) when long."""
    n = len(ax.get_legend_handles_labels()[0])
    if n > 6:
        w, h = ax.figure.get_size_inches()
        ax.figure.set_size_inches(w + 3.0, h)  # room for the legend, the axes keep their size
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    else:
        ax.legend(loc="best")


def _draw_bounds(ax, table, grid, bounds, u, lam, cap=1.0):
    """Bound curves in black line styles; drawn only where finite, positive and <= cap (a
    relative-error bound above 1 says nothing, and its pole would squash the data)."""
    styles = ["--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3))]
    if bounds is None:
        return
    if bounds == "default":
        curves = []
        for name, uu in _u_values(table, u):
            tag = _u_name(name, uu)
            curves.append((f"$\\gamma_n$ ({tag})", lambda n, uu=uu: _bounds.gamma(n, uu)))
            curves.append((f"${lam:g}\\sqrt{{n}}u$ ({tag})",
                           lambda n, uu=uu: _bounds.prob_bound(n, uu, lam)))
    else:
        curves = list(bounds)
    for j, (label, fn) in enumerate(curves):
        vals = np.asarray(fn(grid), dtype=np.float64)
        keep = np.isfinite(vals) & (vals > 0)
        if cap is not None:
            keep &= vals <= cap
        ax.plot(grid[keep], vals[keep], color="black", lw=1.0, ls=styles[j % len(styles)],
                alpha=0.8, label=label)


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
                  bounds=None, bound_cap=1.0, title=None, formats=("png", "svg")):
    """Error against tile size (log2 x, log y). tile="schedule" reads B from blocked:B[:...].

    Rows whose schedule is not blocked are left out; none left is an error. series=None: the
    varying parameter columns other than the schedule.
    """
    require(table, [tile, y] + list(series or ()), "error-vs-tile", table.source)
    series = tuple(c for c in _series(table, series) if c != "schedule" or tile != "schedule")
    tiles = _tiles(table, tile)
    keep_rows = [r for r, t in zip(table.rows, tiles) if np.isfinite(t)]
    if not keep_rows:
        raise AnalysisError(f"error-vs-tile: no row of {table.source} has a tile size in "
                            f"'{tile}' (schedules blocked:B)")
    sub_all = type(table)(table.columns, keep_rows, table.source)
    with _style():
        fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
        for i, (label, sub) in enumerate(_groups(sub_all, series)):
            x, v, zeros = _positive(_tiles(sub, tile), sub.floats(y))
            color, marker = _COLORS[i % len(_COLORS)], _MARKERS[i % len(_MARKERS)]
            if zeros:
                label = f"{label} ({zeros} zero errors not shown)"
            if x.size == 0:
                ax.plot([], [], color=color, marker=marker, label=label)
                continue
            ax.scatter(x, v, s=8, color=color, alpha=0.25, marker=marker, linewidths=0)
            xs, med = _median_by(x, v)
            ax.plot(xs, med, color=color, marker=marker, ms=4, lw=1.4, label=label)
        if bounds:
            t = _tiles(sub_all, tile)
            grid = np.geomspace(np.nanmin(t), np.nanmax(t), 64)
            _draw_bounds(ax, sub_all, grid, bounds, None, 1.0, bound_cap)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("tile size b" if tile == "schedule" else tile)
        ax.set_ylabel(y.replace("_", " "))
        ax.set_title(title or f"{y.replace('_', ' ')} vs tile size")
        _legend(ax)
        return save(fig, out_prefix, formats)


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
            ax.bar(xs, hs, width=width * 0.95, color=_COLORS[j % len(_COLORS)], label=v)
            for x, c, h in zip(xs, cases, hs):
                b = t.get((c, base))
                if np.isfinite(h) and b is not None:
                    ax.text(x, h, f"x{b / h:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases)
        ax.set_ylabel("seconds (best)")
        ax.set_title(title or f"time per case; labels: speed-up over {base}")
        ax.legend(loc="best")
        return save(fig, out_prefix, formats)
