"""Command line: python3 -m analysis PLOT --csv FILE [options] -o OUT_PREFIX.

Every failure (bad flag, missing file, missing columns, no rows, more series than one figure
can tell apart: style.MAX_SERIES) is one line on stderr starting with 'analysis:' and exit code 2;
argparse's own usage errors also exit 2. --facet op|format splits error-vs-n/-tile into panels
with one shared legend; --op/--format/--where filter rows.
"""
import argparse
import sys

from . import io, plots

PLOTS = ["error-vs-n", "error-vs-tile", "error-by-order", "heatmap", "perf-bars"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints the usage block otherwise)
        sys.stderr.write(f"analysis: {message}\n")
        sys.exit(2)


def _parser():
    p = _Parser(prog="python3 -m analysis", description="Render a sweep CSV as a figure.")
    p.add_argument("plot", choices=PLOTS)
    p.add_argument("--csv", required=True, help="sweep trials.csv (perf-bars: bench CSV/JSON)")
    p.add_argument("-o", "--out", required=True, help="output prefix; writes PREFIX.<fmt>")
    p.add_argument("--where", action="append", default=[], metavar="COL=V1|V2",
                   help="keep rows whose COL is one of the values (repeatable)")
    p.add_argument("--op", default=None, metavar="OP1,OP2",
                   help="keep rows of these ops (same as --where op=OP1|OP2)")
    p.add_argument("--format", dest="dtype", default=None, metavar="F1,F2",
                   help="keep rows of these formats (same as --where dtype=F1|F2)")
    p.add_argument("--facet", default=None, metavar="op|format|COL[,COL]",
                   help="error-vs-n/-tile: one panel per value of these columns (format = "
                        "dtype), one shared legend")
    p.add_argument("--y", default="rel_error", help="error column (default rel_error)")
    p.add_argument("--series", default=None, help="comma-separated columns naming a line")
    p.add_argument("--bounds", choices=["default", "none"], default="default")
    p.add_argument("--u", type=float, default=None, help="unit roundoff for the bound curves")
    p.add_argument("--lam", type=float, default=1.0, help="lambda of lambda*sqrt(n)*u")
    p.add_argument("--tile", default="schedule", help="tile column (default: from blocked:B)")
    p.add_argument("--order", default="schedule")
    p.add_argument("--kind", choices=["box", "strip"], default="box")
    p.add_argument("--rows", default="dtype")
    p.add_argument("--cols", default="schedule")
    p.add_argument("--value", default=None, help="heatmap value column (default: --y)")
    p.add_argument("--reduce", choices=["median", "max", "mean"], default="median")
    p.add_argument("--baseline", default=None, help="perf-bars baseline variant")
    p.add_argument("--title", default=None)
    p.add_argument("--formats", default="png,svg", help="comma list of png, svg, pdf")
    return p


def _filter(table, wheres, args=None):
    wheres = list(wheres)
    if args is not None and args.op:
        wheres.append("op=" + args.op.replace(",", "|"))
    if args is not None and args.dtype:
        wheres.append("dtype=" + args.dtype.replace(",", "|"))
    for w in wheres:
        if "=" not in w:
            raise io.AnalysisError(f"--where '{w}': expected COL=VALUE[|VALUE...]")
        col, vals = w.split("=", 1)
        table = table.where(**{col: vals.split("|")})
    return table


def main(argv=None):
    args = _parser().parse_args(argv)
    formats = tuple(f for f in args.formats.split(",") if f)
    try:
        bad = [f for f in formats if f not in plots.FORMATS] or ([] if formats else ["(none)"])
        if bad:
            raise io.AnalysisError(f"--formats {args.formats}: unknown format(s) "
                                   f"{', '.join(bad)}; allowed: {', '.join(plots.FORMATS)}")
        if args.plot == "perf-bars":
            table = _filter(io.read_bench(args.csv), args.where)
            paths = plots.perf_bars(table, args.out, baseline=args.baseline, title=args.title,
                                    formats=formats)
        else:
            table = _filter(io.read_table(args.csv), args.where, args)
            if len(table) == 0:
                raise io.AnalysisError(f"{args.plot}: no row of {args.csv} passes the filters "
                                       f"{' '.join(args.where)} op={args.op} format={args.dtype}")
            series = None if args.series is None else [s for s in args.series.split(",") if s]
            if args.plot == "error-vs-n":
                paths = plots.error_vs_n(
                    table, args.out, y=args.y,
                    series=series, u=args.u,
                    bounds=None if args.bounds == "none" else "default", lam=args.lam,
                    facet=args.facet, title=args.title, formats=formats)
            elif args.plot == "error-vs-tile":
                paths = plots.error_vs_tile(
                    table, args.out, tile=args.tile, y=args.y,
                    series=series, facet=args.facet,
                    title=args.title, formats=formats)
            elif args.plot == "error-by-order":
                paths = plots.error_by_order(table, args.out, order=args.order, y=args.y,
                                             kind=args.kind, title=args.title, formats=formats)
            else:
                paths = plots.heatmap(table, args.out, rows=args.rows, cols=args.cols,
                                      value=args.value or args.y, reduce=args.reduce,
                                      title=args.title, formats=formats)
    except io.AnalysisError as e:
        sys.stderr.write(f"analysis: {e}\n")
        return 2
    for p in paths:
        print(p)
    return 0
