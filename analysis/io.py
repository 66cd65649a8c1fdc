"""Tables of strings read from the CSVs `carrier` writes (experiments/sweep/FORMAT.md).

A Table keeps every cell as the string the CSV holds: the parameters of a sweep (op, dtype,
schedule, n) are compared as text, and numbers are parsed only where a plot asks for them
(Table.floats), so no value is silently reformatted on the way from the CSV to the figure.
"""
import csv
import json
import math
import os

import numpy as np


class AnalysisError(Exception):
    """A one-line, user-facing error; the command line prints it and exits 2."""


class MissingColumnsError(AnalysisError):
    """A table lacks the columns an operation needs; the message names them."""


class Table:
    """Rows of a CSV as dicts of strings, with the header order kept in `columns`."""

    def __init__(self, columns, rows, source="table"):
        self.columns = list(columns)
        self.rows = list(rows)
        self.source = source

    def __len__(self):
        return len(self.rows)

    def column(self, name):
        require(self, [name], "column", self.source)
        return [r.get(name, "") for r in self.rows]

    def floats(self, name):
        """The column as float64; an empty cell is nan, 'nan'/'inf'/'-inf' parse as such."""
        out = np.empty(len(self.rows), dtype=np.float64)
        for i, text in enumerate(self.column(name)):
            text = text.strip()
            if text == "":
                out[i] = math.nan
                continue
            try:
                out[i] = float(text)
            except ValueError:
                raise AnalysisError(f"{self.source}: column '{name}' row {i + 1} is not a number: "
                                    f"'{text}'") from None
        return out

    def where(self, **conditions):
        """Rows whose column equals the value (or one of the values of a list), as strings."""
        require(self, list(conditions), "where", self.source)
        allowed = {k: {str(x) for x in (v if isinstance(v, (list, tuple, set)) else [v])}
                   for k, v in conditions.items()}
        rows = [r for r in self.rows if all(r.get(k, "") in vs for k, vs in allowed.items())]
        return Table(self.columns, rows, self.source)

    def where_fn(self, predicate):
        return Table(self.columns, [r for r in self.rows if predicate(r)], self.source)

    def unique(self, name):
        """Distinct values in order of first appearance (so figures follow the config order)."""
        seen = {}
        for v in self.column(name):
            seen.setdefault(v, None)
        return list(seen)

    def sorted_by(self, *names, numeric=()):
        require(self, list(names), "sort", self.source)

        def key(r):
            return tuple(_num(r[n]) if n in numeric else r[n] for n in names)

        return Table(self.columns, sorted(self.rows, key=key), self.source)


def _num(text):
    try:
        return float(text)
    except ValueError:
        return math.inf


def require(table, columns, what, source=None):
    """Raise MissingColumnsError naming every column of `columns` the table lacks."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        src = source or table.source
        raise MissingColumnsError(f"{what}: {src} lacks column(s) needed: {', '.join(missing)}")


def read_table(path):
    """Read a CSV with a header row. Missing file, empty file or ragged rows are errors."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise AnalysisError(f"no such CSV file: {path}")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise AnalysisError(f"{path}: empty file (no header row)") from None
        header = [h.strip() for h in header]
        rows = []
        for lineno, rec in enumerate(reader, start=2):
            if not rec:
                continue
            if len(rec) != len(header):
                raise AnalysisError(f"{path}:{lineno}: {len(rec)} fields, header has "
                                    f"{len(header)}")
            rows.append(dict(zip(header, rec)))
    return Table(header, rows, name)


def table_from_rows(columns, rows, source="table"):
    """Build a Table from dicts or sequences; cells are converted with str()."""
    out = []
    for r in rows:
        if isinstance(r, dict):
            out.append({c: _cell(r.get(c, "")) for c in columns})
        else:
            out.append({c: _cell(v) for c, v in zip(columns, r)})
    return Table(columns, out, source)


def _cell(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(v)


def write_csv(path, columns, rows):
    """Write a CSV deterministically: LF line ends, floats as repr() (round-trip)."""
    table = rows if isinstance(rows, Table) else table_from_rows(columns, rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in table.rows:
            w.writerow([r.get(c, "") for c in columns])


BENCH_COLUMNS = ["case", "variant", "seconds"]


def read_bench(path):
    """A bench table (README.md, "Bench schema"): CSV or JSON with case, variant, seconds."""
    if path.endswith(".json"):
        if not os.path.isfile(path):
            raise AnalysisError(f"no such JSON file: {path}")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except json.JSONDecodeError as e:
            raise AnalysisError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
        records = data.get("bench") if isinstance(data, dict) else data
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise AnalysisError(f"{path}: expected a list of records or {{\"bench\": [...]}}")
        columns = []
        for r in records:
            for k in r:
                if k not in columns:
                    columns.append(k)
        table = table_from_rows(columns, records, os.path.basename(path))
    else:
        table = read_table(path)
    require(table, BENCH_COLUMNS, "bench", table.source)
    return table
