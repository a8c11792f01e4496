#!/usr/bin/env python3
"""Per-emulator coverage of the parameter-parsing code from a libFuzzer `-print_coverage=1` log.

Usage: coverage.py LOG [LOG...]   (one column per log, e.g. before/after)

libFuzzer prints one `COVERED_FUNC:`/`UNCOVERED_FUNC: hits: N edges: a/b NAME FILE:LINE` line per
instrumented function at exit. Counted here: the functions defined in each emulator's parameter
readers and operations (`emulator/p.rs`, `params.rs`, `ops/`, and the router `mod.rs` that reads
the request's parameters) plus simkit's shared readers (`reader.rs`, `params.rs`).
"""
import re
import sys

GROUPS = {
    "tencent": re.compile(r"providers/tencent/src/emulator/(p\.rs|mod\.rs|ops/)"),
    "alibaba": re.compile(r"providers/alibaba/src/emulator/(params\.rs|mod\.rs|ops/)"),
    "jdcloud": re.compile(r"providers/jdcloud/src/emulator/(route\.rs|mod\.rs|ops/)"),
    "simkit readers": re.compile(r"crates/simkit/src/(reader|params)\.rs"),
}
LINE = re.compile(r"^(COVERED|UNCOVERED)_FUNC: hits: \d+ edges: (\d+)/(\d+) .* (\S+):\d+$")


def tally(path):
    out = {g: [0, 0, 0, 0] for g in GROUPS}  # funcs hit, funcs, edges hit, edges
    seen = set()
    for line in open(path, errors="replace"):
        m = LINE.match(line.strip())
        if not m or line in seen:
            continue
        seen.add(line)
        covered, hit, total, file = m.group(1) == "COVERED", int(m.group(2)), int(m.group(3)), m.group(4)
        for g, rx in GROUPS.items():
            if rx.search(file):
                t = out[g]
                t[0] += covered
                t[1] += 1
                t[2] += hit
                t[3] += total
    return out


logs = sys.argv[1:]
if not logs:
    sys.exit(__doc__)
tallies = [tally(p) for p in logs]
print("| group | " + " | ".join(f"{p}: functions, edges" for p in logs) + " |")
print("|---|" + "---|" * len(logs))
for g in GROUPS:
    cells = []
    for t in tallies:
        fh, f, eh, e = t[g]
        if f == 0:
            sys.exit(f"{g}: no functions of this group in the log (not built with -print_coverage=1?)")
        cells.append(f"{fh}/{f} ({100 * fh // f} %), {eh}/{e} ({100 * eh // max(e, 1)} %)")
    print(f"| {g} | " + " | ".join(cells) + " |")
