"""CLAIMS.md: the claim rules of papers/README.md, enforced.

Two kinds of row, kept in two tables and counted separately:

- a *reproduction* compares our number with a number, table entry or figure read-off that the
  paper (or its authors' script) publishes. Its published value, the value's location (section,
  figure, table or script line) and the tolerance come from the folder's claims.toml, written
  before the run, never from the script that judges the run; the verdict is computed here from
  that tolerance (Spec.check), so no caller decides "match" by hand. A claim whose published
  value was looked for and not found is a reproduction row with published = "not found" and a
  `searched` note instead of a location; it has no verdict and counts as "not found".
- a *sanity* row is a bound check or a self-consistency check (a measured error against a
  worst-case bound, a count that holds by construction, an emulation agreeing with carrier). It
  can catch a bug, but a wrong implementation of the paper would usually pass it, so it is never
  counted in "N of M reproduced".

write_claims refuses (one line on stderr, exit 2) a reproduction row without a location or a
tolerance, a row whose kind is unknown, and a claims.toml entry that no row used (a stale
config). claims.toml format (one table per reproduction id):

    [stagnation-harmonic-fp16]
    published = "7.0859375 at term 513"      # as shown in CLAIMS.md
    value     = [7.0859375, 513]             # number or list of numbers compared with ours
    location  = "Higham, ASNA 2nd ed., Section 4.2, p. 81"
    exact     = true                         # or rel = R, abs = A, factor = F, min/max = window

    declared  = "2026-11-30"                 # when the entry was written (or a commit hash)

    [some-claim]
    published = "not found"
    searched  = "the paper's Sections 3-5 and Figures 1-4 (full text via search)"

    [settings]                               # reserved: windows and thresholds of sanity rows
    slope_min = 0.4                          # (Spec.setting), fixed before the run like the rest

A reproduction entry also says when it was written, before the run it judges: `declared`, a
date (YYYY-MM-DD: the git date of the commit that first added the entry, `git log -S`) or that
commit's hash. An entry without it, one whose `first_run` (the date of the first run it judges)
precedes it, one marked `chosen_after_run = true` (a model or reading picked after seeing a
run) or one marked `calibration = true` (a value the model was built from: comparing with it
reads the source back) is refused as a reproduction: such a comparison is a sanity row
(cross_check). A folder
counts one published number once: two reproduction rows whose entries have the same published
value at the same location (or the same published text), or one entry used by two reproduction
rows, are refused.

The file carries no date, so regenerating it from the same CSVs gives the same bytes. The last
line is machine-readable (summary_counts reads it; papers/README.md's table is built from it).
summary refuses a CLAIMS.md that write_claims did not write (no reproductions table) and a
folder that counts reproductions without a claims.toml.
"""
import dataclasses
import math
import os
import platform
import re
import sys
import tomllib

NOT_FOUND = "not found"
KINDS = ("reproduction", "sanity")
_TOLERANCE_KEYS = ("exact", "rel", "abs", "factor", "min", "max")
_DECLARED_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}|[0-9a-f]{7,40})$")
_COUNTS_RE = re.compile(r"<!-- claims: reproduced=(\d+) not_reproduced=(\d+) not_found=(\d+) "
                        r"sanity=(\d+) -->")


class ClaimError(Exception):
    """A row or a claims.toml entry that breaks the claim rules (one line)."""


def refuse(message):
    """The one-line refusal: print 'claims: MESSAGE' on stderr and exit 2."""
    sys.stderr.write(f"claims: {message}\n")
    sys.exit(2)


@dataclasses.dataclass
class Claim:
    claim: str
    command: str
    ours: str
    published: str
    match: object  # reproduction: True/False (None when not found); sanity: bool or a word
    figure: str = None
    note: str = None
    kind: str = "reproduction"
    location: str = None
    tolerance: str = None
    identity: tuple = None  # (entry key, published value, location) of a reproduction row


def sanity(claim, command, ours, expected, holds, *, figure=None, note=None):
    """A sanity row: a bound or self-consistency check; never counted as a reproduction."""
    return Claim(claim, command, ours, expected, holds, figure=figure, note=note, kind="sanity")


def _numbers(v):
    if isinstance(v, (list, tuple)):
        return [float(x) for x in v]
    return [float(v)]


class Spec:
    """The reproduction entries of one claims.toml, each used once by the figure script."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                self.entries = tomllib.load(f)
        except OSError as e:
            raise ClaimError(f"{path}: cannot read ({e.strerror})") from None
        except tomllib.TOMLDecodeError as e:
            raise ClaimError(f"{path}: not valid TOML ({e})") from None
        self.settings = self.entries.pop("settings", {})
        if not isinstance(self.settings, dict):
            raise ClaimError(f"{path}: [settings] is not a table")
        self.used = set()
        self.settings_used = set()
        for key, e in self.entries.items():
            self._validate(key, e)

    def _validate(self, key, e):
        where = f"{self.path}: [{key}]"
        if not isinstance(e, dict):
            raise ClaimError(f"{where} is not a table")
        if "published" not in e:
            raise ClaimError(f"{where} has no 'published'")
        if e["published"] == NOT_FOUND:
            if not e.get("searched"):
                raise ClaimError(f"{where}: a value not found needs 'searched' (where we looked)")
            return
        if not e.get("location"):
            raise ClaimError(f"{where}: a reproduction needs 'location' (section, figure, "
                             "table or script line of the published value)")
        tol = [k for k in _TOLERANCE_KEYS if k in e]
        if not tol:
            raise ClaimError(f"{where}: a reproduction needs a tolerance (one of "
                             f"{', '.join(_TOLERANCE_KEYS)})")
        if "value" not in e and not ({"min", "max"} & set(tol)):
            raise ClaimError(f"{where}: a tolerance other than a min/max window needs 'value'")
        if "exact" in e and e["exact"] is not True:
            raise ClaimError(f"{where}: exact must be true")
        for field in ("declared", "first_run"):
            if field in e and not _DECLARED_RE.match(str(e[field])):
                raise ClaimError(f"{where}: {field} = {e[field]!r} is not a date YYYY-MM-DD or "
                                 "a commit hash")

    def declared_check(self, key):
        """Refuse spec[key] as a reproduction unless it was declared before the run it judges."""
        e = self.entry(key)
        where = f"{self.path}: [{key}]"
        if "declared" not in e:
            raise ClaimError(f"{where}: a reproduction needs 'declared' (the date or commit that "
                             "first wrote the entry, before the run; git log -S)")
        if e.get("chosen_after_run"):
            raise ClaimError(f"{where}: chosen after the run (chosen_after_run): not a "
                             "reproduction; use cross_check (a sanity row)")
        if e.get("calibration"):
            raise ClaimError(f"{where}: a source the model was built from (calibration): not a "
                             "reproduction; use cross_check (a sanity row)")
        first = str(e.get("first_run", ""))
        decl = str(e["declared"])
        if re.match(r"^\d{4}-", first) and re.match(r"^\d{4}-", decl) and decl > first:
            raise ClaimError(f"{where}: declared {decl}, after its first run {first}: not a "
                             "reproduction; use cross_check (a sanity row)")

    def entry(self, key):
        if key not in self.entries:
            raise ClaimError(f"{self.path}: no entry [{key}] (reproduction rows take their "
                             "published value, location and tolerance from here)")
        self.used.add(key)
        return self.entries[key]

    def setting(self, name):
        """A window or threshold of a sanity row, from [settings]."""
        if name not in self.settings:
            refuse(f"{self.path}: [settings] has no '{name}'")
        self.settings_used.add(name)
        return self.settings[name]

    def tolerance_text(self, key):
        e = self.entry(key)
        parts = []
        if e.get("exact"):
            parts.append("exact")
        if "rel" in e:
            parts.append(f"relative {e['rel']:g}")
        if "abs" in e:
            parts.append(f"absolute {e['abs']:g}")
        if "factor" in e:
            parts.append(f"within a factor {e['factor']:g}")
        if "min" in e or "max" in e:
            parts.append(f"ours in [{e.get('min', '-inf')}, {e.get('max', 'inf')}]")
        return ", ".join(parts)

    def check(self, key, ours):
        """Whether ours (a number or a list matching 'value') is within the entry's tolerance."""
        e = self.entry(key)
        mine = _numbers(ours)
        if any(not math.isfinite(x) for x in mine):
            return False
        if "min" in e and any(x < float(e["min"]) for x in mine):
            return False
        if "max" in e and any(x > float(e["max"]) for x in mine):
            return False
        if "value" not in e:
            return True
        theirs = _numbers(e["value"])
        if len(theirs) != len(mine):
            raise ClaimError(f"{self.path}: [{key}] value has {len(theirs)} number(s), ours "
                             f"{len(mine)}")
        for a, b in zip(mine, theirs):
            if e.get("exact") and a != b:
                return False
            if "rel" in e and abs(a - b) > float(e["rel"]) * abs(b):
                return False
            if "abs" in e and abs(a - b) > float(e["abs"]):
                return False
            if "factor" in e:
                f = float(e["factor"])
                if b == 0 or a / b > f or a / b < 1 / f:
                    return False
        return True

    def unused(self):
        return ([k for k in self.entries if k not in self.used] +
                [f"settings.{k}" for k in self.settings if k not in self.settings_used])


def load_spec(path):
    """The folder's claims.toml, validated; a bad file is the one-line refusal."""
    try:
        return Spec(path)
    except ClaimError as e:
        refuse(str(e))


def reproduction(spec, key, claim, command, ours_text, ours_value, *, figure=None, note=None):
    """A reproduction row judged by the tolerance of spec[key] (or a 'not found' row)."""
    try:
        e = spec.entry(key)
        if e["published"] == NOT_FOUND:
            return Claim(claim, command, ours_text, NOT_FOUND, None, figure=figure,
                         note=note, location=f"searched: {e['searched']}")
        spec.declared_check(key)
        value = tuple(_numbers(e["value"])) if "value" in e else None
        return Claim(claim, command, ours_text, e["published"], spec.check(key, ours_value),
                     figure=figure, note=note,
                     location=f"{e['location']} (declared {e['declared']})",
                     tolerance=spec.tolerance_text(key),
                     identity=(f"{spec.path}: [{key}]", value, _norm(e["location"]),
                               _norm(e["published"])))
    except ClaimError as err:
        refuse(str(err))


def _norm(text):
    return " ".join(str(text).lower().split())


def cross_check(spec, key, claim, command, ours_text, ours_value, *, figure=None, note=None):
    """A sanity row against a value published elsewhere than the folder's paper (spec[key]).

    Judged by the entry's tolerance like a reproduction, but never counted as one: the rules
    count only values that the paper or its authors' script publishes."""
    try:
        e = spec.entry(key)
        if e["published"] == NOT_FOUND:
            raise ClaimError(f"{spec.path}: [{key}] is 'not found'; a cross-check needs a value")
        expected = f"{e['published']} ({e['location']}; {spec.tolerance_text(key)})"
        return Claim(claim, command, ours_text, expected, spec.check(key, ours_value),
                     figure=figure, note=note, kind="sanity")
    except ClaimError as err:
        refuse(str(err))


def cpu_model():
    """The CPU's 'model name' from /proc/cpuinfo, else platform.processor(), else 'unknown'."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _verdict(c):
    if c.kind == "sanity":
        return {True: "holds", False: "**fails**"}.get(c.match, str(c.match))
    if c.published == NOT_FOUND:
        return NOT_FOUND
    return "yes" if c.match is True else "**no**"


def validate(claim_list):
    """Raise ClaimError for the first row that breaks the rules (module docstring)."""
    for i, c in enumerate(claim_list, start=1):
        what = f"row {i} ('{c.claim[:60]}')"
        if c.kind not in KINDS:
            raise ClaimError(f"{what}: kind '{c.kind}' is not one of {', '.join(KINDS)}")
        if c.kind == "sanity":
            continue
        if c.published == NOT_FOUND:
            if c.match is not None or not c.location:
                raise ClaimError(f"{what}: a 'not found' row has no verdict and says where "
                                 "we searched")
            continue
        if not c.location:
            raise ClaimError(f"{what}: reproduction row without a location of the published "
                             "value (label it sanity if nothing published is compared)")
        if not c.tolerance:
            raise ClaimError(f"{what}: reproduction row without a tolerance")
        if c.match not in (True, False):
            raise ClaimError(f"{what}: a reproduction verdict is yes or no, got {c.match!r}")
    _check_counted_once(claim_list)


def _check_counted_once(claim_list):
    """Raise ClaimError when two reproduction rows count one published number (module doc)."""
    seen = {}
    for i, c in enumerate(claim_list, start=1):
        if c.kind != "reproduction" or c.published == NOT_FOUND or c.identity is None:
            continue
        key, value, location, published = c.identity
        ids = [("entry", key), ("text", published)]
        if value is not None:
            ids.append(("value", value, location))
        for ident in ids:
            if ident in seen:
                raise ClaimError(f"row {i} ('{c.claim[:60]}') counts the published number of "
                                 f"row {seen[ident]} again ({ident[0]}: {key}); one reproduction "
                                 "per published number, the other readings are sanity rows")
            seen[ident] = i


def counts(claim_list):
    rep = [c for c in claim_list if c.kind == "reproduction"]
    found = [c for c in rep if c.published != NOT_FOUND]
    return {"reproduced": sum(c.match is True for c in found),
            "not_reproduced": sum(c.match is False for c in found),
            "not_found": len(rep) - len(found),
            "sanity": len(claim_list) - len(rep)}


def write_claims(path, title, claim_list, *, preamble=None, hardware=None, spec=None):
    """Write CLAIMS.md: the reproductions table, then the sanity table, then the counts.

    Refuses (exit 2, one line) a row that breaks the rules, or a spec entry no row used.
    hardware defaults to the CPU model and logical CPU count of this machine."""
    try:
        validate(claim_list)
        if spec is not None and spec.unused():
            raise ClaimError(f"{spec.path}: entries no claim used: {', '.join(spec.unused())}")
    except ClaimError as e:
        refuse(f"{path}: {e}")
    hw = hardware or f"{cpu_model()}, {os.cpu_count()} logical CPUs"
    lines = [f"# {title}", ""]
    if preamble:
        lines += [preamble.strip(), ""]
    lines += [f"Hardware: {hw}. Rules: [papers/README.md](../README.md#claim-rules) (a "
              "reproduction compares with a published value under a tolerance fixed in "
              "claims.toml before the run; sanity rows are never counted).", ""]

    def fig(c):
        return f"[{os.path.basename(c.figure)}]({c.figure})" if c.figure else ""

    rep = [c for c in claim_list if c.kind == "reproduction"]
    san = [c for c in claim_list if c.kind == "sanity"]
    lines += ["## Reproductions", ""]
    if rep:
        lines += ["| # | Claim | Command | Ours | Published | Where published | Tolerance | "
                  "Reproduced | Figure |", "|---|---|---|---|---|---|---|---|---|"]
        for i, c in enumerate(rep, start=1):
            claim = c.claim + (f" ({c.note})" if c.note else "")
            lines.append("| " + " | ".join([f"R{i}", _cell(claim), f"`{_cell(c.command)}`",
                                            _cell(c.ours), _cell(c.published),
                                            _cell(c.location), _cell(c.tolerance or ""),
                                            _verdict(c), fig(c)]) + " |")
    else:
        lines.append("(none)")
    lines += ["", "## Sanity checks (not reproductions)", ""]
    if san:
        lines += ["| # | Check | Command | Ours | Expected | Holds | Figure |",
                  "|---|---|---|---|---|---|---|"]
        for i, c in enumerate(san, start=1):
            claim = c.claim + (f" ({c.note})" if c.note else "")
            lines.append("| " + " | ".join([f"S{i}", _cell(claim), f"`{_cell(c.command)}`",
                                            _cell(c.ours), _cell(c.published), _verdict(c),
                                            fig(c)]) + " |")
    else:
        lines.append("(none)")
    k = counts(claim_list)
    lines += ["", f"{k['reproduced']} of {k['reproduced'] + k['not_reproduced']} reproduction "
              f"claims with a published value reproduced, {k['not_reproduced']} not; "
              f"{k['not_found']} published value(s) not found; {k['sanity']} sanity row(s), "
              "not counted.", "",
              f"<!-- claims: reproduced={k['reproduced']} not_reproduced={k['not_reproduced']} "
              f"not_found={k['not_found']} sanity={k['sanity']} -->", ""]
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines))
    return path


def summary_counts(claims_md):
    """(title, counts dict) read back from a CLAIMS.md written by write_claims."""
    with open(claims_md, encoding="utf-8") as f:
        text = f.read()
    m = _COUNTS_RE.search(text)
    if not m:
        raise ClaimError(f"{claims_md}: no counts line (regenerate it with its reproduce.sh)")
    if "\n## Reproductions\n" not in text or "\n## Sanity checks (not reproductions)\n" not in text:
        raise ClaimError(f"{claims_md}: not written by analysis.claims.write_claims (no "
                         "reproductions and sanity tables)")
    counted = int(m.group(1)) + int(m.group(2))
    rep = text.split("\n## Reproductions\n", 1)[1].split("\n## Sanity checks", 1)[0]
    for line in rep.splitlines():
        cells = [x.strip() for x in line.split(" | ")]
        if line.startswith("| R") and len(cells) > 7 and cells[7] in ("yes", "**no**") \
                and "(declared " not in cells[5]:
            raise ClaimError(f"{claims_md}: reproduction {cells[0].lstrip('| ')} has no "
                             "declared date (regenerate it with its reproduce.sh)")
    toml = os.path.join(os.path.dirname(claims_md), "claims.toml")
    if counted and not os.path.isfile(toml):
        raise ClaimError(f"{claims_md}: counts {counted} reproduction(s) without a claims.toml")
    title = text.splitlines()[0].lstrip("# ").strip()
    title = re.sub(r":? claims( and our numbers)?$", "", title)
    keys = ("reproduced", "not_reproduced", "not_found", "sanity")
    return title, dict(zip(keys, (int(g) for g in m.groups())))


SUMMARY_BEGIN = "<!-- claims-summary:begin (generated: python3 -m analysis.claims summary) -->"
SUMMARY_END = "<!-- claims-summary:end -->"


def summary_table(papers_dir):
    """The markdown table over every papers/*/CLAIMS.md, in folder order."""
    rows = ["| paper | reproduced | not reproduced | not found | sanity | command |",
            "|---|---|---|---|---|---|"]
    for name in sorted(os.listdir(papers_dir)):
        md = os.path.join(papers_dir, name, "CLAIMS.md")
        if not os.path.isfile(md):
            continue
        try:
            title, k = summary_counts(md)
        except ClaimError as e:  # written before the claim rules: regenerate that folder
            why = _cell(str(e).split(": ", 1)[-1])
            rows.append(f"| [{name}]({name}/CLAIMS.md) | ? | ? | ? | ? | "
                        f"`bash papers/{name}/reproduce.sh` (CLAIMS.md breaks the rules: {why}) |")
            continue
        rows.append(f"| [{_cell(title)}]({name}/CLAIMS.md) | {k['reproduced']} | "
                    f"{k['not_reproduced']} | {k['not_found']} | {k['sanity']} | "
                    f"`bash papers/{name}/reproduce.sh` |")
    return "\n".join(rows)


def update_summary(readme, papers_dir):
    """Replace the block between SUMMARY_BEGIN and SUMMARY_END in readme with summary_table."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    if SUMMARY_BEGIN not in text or SUMMARY_END not in text:
        raise ClaimError(f"{readme}: no summary markers ({SUMMARY_BEGIN} ... {SUMMARY_END})")
    head, rest = text.split(SUMMARY_BEGIN, 1)
    _, tail = rest.split(SUMMARY_END, 1)
    new = f"{head}{SUMMARY_BEGIN}\n{summary_table(papers_dir)}\n{SUMMARY_END}{tail}"
    if new != text:
        with open(readme, "w", encoding="utf-8", newline="\n") as f:
            f.write(new)
    return readme


def main(argv=None):
    """python3 -m analysis.claims summary [PAPERS_DIR] | counts CLAIMS.md..."""
    argv = sys.argv[1:] if argv is None else argv
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        if argv[:1] == ["summary"]:
            papers = argv[1] if len(argv) > 1 else os.path.join(root, "papers")
            print(update_summary(os.path.join(papers, "README.md"), papers))
            return 0
        if argv[:1] == ["counts"] and len(argv) > 1:
            for md in argv[1:]:
                _, k = summary_counts(md)
                print(md, *(f"{n}={v}" for n, v in k.items()))
            return 0
    except (ClaimError, OSError) as e:
        refuse(str(e))
    refuse("usage: python3 -m analysis.claims summary [PAPERS_DIR] | counts CLAIMS.md...")
    return 2


if __name__ == "__main__":
    sys.exit(main())
