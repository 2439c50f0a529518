"""Loop verdicts over the corpus without building anything: every unit read as one program
(front end, program model, dependence analysis), then per DO loop of the unit's own
routines whether it is parallel, why not (the first reason code), and for loops that call
routines whether the calls were analysed (issue 13: device functions for callees in loops).

A few minutes on the shared 2-core machine instead of the full run's 40; compare two
versions of the tool by running it with each on PYTHONPATH:

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/realcode/loop_census.py [--src DIR] [--codes a,b] [--json OUT]

Prints the counts (all loops and outermost loops) and, per cause, the callees that keep
loops with calls serial.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus as C  # noqa: E402

from port_fortran.fortran import ir  # noqa: E402


def census(src: Path, names=None) -> dict:
    counts: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    blocked: collections.Counter = collections.Counter()
    parallel_calls: list[str] = []
    for code, unit, mine, prog in C.read_units(src, names):
        if isinstance(prog, Exception):
            print(f"{code.name}/{unit.name}: {type(prog).__name__}: {prog}", file=sys.stderr)
            counts["units failed"] += 1
            continue
        for r in prog.all_routines():
            k = prog.kernel_of(r)
            if r.file not in mine or not isinstance(k, ir.Kernel):
                continue
            _visit(k, k.body, True, counts, reasons, blocked, parallel_calls, code.name)
    return {"counts": dict(sorted(counts.items())), "first_reason": dict(reasons.most_common()),
            "calls_blocked_by": dict(blocked.most_common()), "parallel_with_calls": parallel_calls}


def _visit(k, body, outer, counts, reasons, blocked, parallel_calls, code) -> None:
    for s in body:
        if not isinstance(s, ir.Do):
            _visit(k, ir.children(s), outer, counts, reasons, blocked, parallel_calls, code)
            continue
        info = s.info
        tags = ["loops"] + (["outer loops"] if outer else [])
        for t in tags:
            counts[t] += 1
            if info.parallel:
                counts[f"{t}: parallel"] += 1
            if info.calls:
                counts[f"{t}: with calls"] += 1
                if info.parallel:
                    counts[f"{t}: with calls, parallel"] += 1
                if any(d.code == "call-in-loop" for d in info.reasons):
                    counts[f"{t}: with calls, a callee not analysable"] += 1
        if outer and not info.parallel and info.reasons:
            reasons[info.reasons[0].code] += 1
        for d in info.reasons:
            if d.code == "call-in-loop":
                msg = d.message
                cause = msg[msg.rfind("[") + 1:-1] if msg.endswith("]") else \
                    ("external" if "external" in msg else "not a routine of the tree")
                blocked[cause] += 1
                break
        if info.calls and info.parallel:
            parallel_calls.append(f"{code} {Path(k.file).name}:{s.line} {k.name} calls {', '.join(info.calls)}")
        _visit(k, s.body, False, counts, reasons, blocked, parallel_calls, code)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(HERE / "src"), help="where get.py put the codes")
    ap.add_argument("--codes", help="comma-separated code names (default: all)")
    ap.add_argument("--json", help="write the census here too")
    a = ap.parse_args(argv)
    out = census(Path(a.src), a.codes.split(",") if a.codes else None)
    text = json.dumps(out, indent=1)
    if a.json:
        Path(a.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
