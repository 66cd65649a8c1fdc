#!/usr/bin/env python3
"""scripts/check_layers.py: the layering rules of the tree, checked from the sources.

  1. No include circle among core/ files (a header may not reach itself through
     `#include "core/..."` lines).
  2. experiments/registry/ (the op table, the bottom of experiments/) includes nothing from
     experiments/verbs/ or experiments/run/ (the verbs and the trial runner are above it).
  3. Hand-written AVX-512 (`__m512`, `_mm512`) only in files whose name contains `_x86` and
     in kernels/ (core/ and the algorithm files of precision/ stay portable).
  4. core/ reads no files: no <fstream>/<filesystem>, file streams, fopen, or the file readers
     of experiments/io (a file:PATH tree is read by experiments/io/tree_file.hpp and handed to
     core loaded; core/orders/file.hpp). Comments are not checked.

Run from anywhere: `python3 scripts/check_layers.py`. Prints what it checked; exit 1 naming
every violation (the include cycle as a path), 0 when clean. scripts/check-style.sh runs it.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".hpp", ".cpp", ".h", ".cuh", ".cu")


def files_under(folder):
    out = []
    for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
        for name in names:
            if name.endswith(SOURCES):
                out.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return sorted(out)


def includes(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def core_cycles():
    graph = {f: [i for i in includes(f) if i.startswith("core/")] for f in files_under("core")}
    state, stack, found = {}, [], []

    def visit(node):  # iterative-enough for core's depth; recursion is fine here
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt in graph and state.get(nxt) is None:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in graph:
        if state.get(node) is None:
            visit(node)
    return graph, found


def main():
    problems = []
    graph, cycles = core_cycles()
    for c in cycles:
        problems.append("include circle among core files: " + " -> ".join(c))
    edges = sum(len(v) for v in graph.values())
    print(f"check_layers: core: {len(graph)} files, {edges} core includes, "
          f"{len(cycles)} circle(s)")

    reg = files_under("experiments/registry")
    for f in reg:
        for inc in includes(f):
            if inc.startswith(("verbs/", "run/", "experiments/verbs/", "experiments/run/")):
                problems.append(f"{f} includes {inc} (the registry may not include verbs or run)")
    print(f"check_layers: experiments/registry: {len(reg)} files checked for verbs/run includes")

    isa = re.compile(r"__m512|_mm512")
    scanned = 0
    for folder in ("core", "precision", "experiments", "analysis", "tests"):
        for f in files_under(folder):
            if "_x86" in os.path.basename(f):
                continue
            scanned += 1
            with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
                for lineno, line in enumerate(fh, 1):
                    if isa.search(line):
                        problems.append(f"{f}:{lineno}: AVX-512 outside an *_x86 file")
                        break
    print(f"check_layers: {scanned} files outside kernels/ and *_x86* checked for AVX-512")

    file_io = re.compile(r"#\s*include\s*<(fstream|filesystem)>|\b(ifstream|ofstream|fstream|"
                         r"fopen|freopen|ReadTextFile|ReadTreeFile|LoadTreeFile)\b|std::filesystem")
    core_files = files_under("core")
    for f in core_files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                if file_io.search(line.split("//", 1)[0]):
                    problems.append(f"{f}:{lineno}: file I/O in core (read files in experiments/io)")
    print(f"check_layers: {len(core_files)} core files checked for file I/O")

    for p in problems:
        print("check_layers: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
