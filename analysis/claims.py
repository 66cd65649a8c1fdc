"""CLAIMS.md: one table row per published claim, beside our measured number.

Each row says what the paper claims, the command that measures it, our number, the published
number, whether they match (the caller decides, with the tolerance stated in the claim text),
and the hardware. The file carries no date, so regenerating it on the same machine from the
same CSVs gives the same bytes.
"""
import dataclasses
import os
import platform


@dataclasses.dataclass
class Claim:
    claim: str
    command: str
    ours: str
    published: str
    match: object  # True -> "yes", False -> "no", a string verbatim (e.g. "trend")
    figure: str = None
    note: str = None


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


def _match(m):
    if m is True:
        return "yes"
    if m is False:
        return "**no**"
    return str(m)


def write_claims(path, title, claim_list, *, preamble=None, hardware=None):
    """Write the markdown table of claim_list to path (parent folders are created).

    hardware defaults to the CPU model and logical CPU count of this machine."""
    hw = hardware or f"{cpu_model()}, {os.cpu_count()} logical CPUs"
    lines = [f"# {title}", ""]
    if preamble:
        lines += [preamble.strip(), ""]
    lines += [f"Hardware: {hw}", "",
              "| # | Claim | Command | Ours | Published | Match | Figure | Hardware |",
              "|---|---|---|---|---|---|---|---|"]
    for i, c in enumerate(claim_list, start=1):
        claim = c.claim + (f" ({c.note})" if c.note else "")
        fig = f"[{os.path.basename(c.figure)}]({c.figure})" if c.figure else ""
        lines.append("| " + " | ".join([str(i), _cell(claim), f"`{_cell(c.command)}`",
                                        _cell(c.ours), _cell(c.published), _match(c.match),
                                        fig, _cell(hw)]) + " |")
    n_yes = sum(1 for c in claim_list if c.match is True)
    n_no = sum(1 for c in claim_list if c.match is False)
    lines += ["", f"{n_yes} of {len(claim_list)} claims match, {n_no} do not"
              + (f", {len(claim_list) - n_yes - n_no} qualified." if
                 len(claim_list) - n_yes - n_no else "."), ""]
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines))
    return path
