"""Merge corpus result files of runs of the same tool commit on different machines.

``python bench/realcode/merge_results.py BASE.json OVERRIDE.json [...] --out results_<date>_merged``
keeps BASE's rows except for the units an OVERRIDE ran (its rows replace them), recomputes
the tables with ``run_corpus``'s own functions and writes ``<out>.md`` / ``<out>.json``. The
header says which units came from which file and why (``--why``), so a table mixing a GPU
host's run with a re-run of some units elsewhere says so.

``--routines a,b,c``: the overrides ran only those routines of their units (``port-fortran
run ... --kernel a --kernel b``, then ``run_corpus.py --report-only``): only their rows are
replaced, every other row of those units stays BASE's (a unit too long to run again whole,
Nekbone's main one, after a change that touches a few of its routines).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_corpus as rc  # noqa: E402


def merge(base: dict, overrides: list[dict], routines: frozenset = frozenset()) -> dict:
    rows = list(base["rows"])
    units = list(base.get("units", []))
    for o in overrides:
        ran = {(u["code"], u["unit"]) for u in o.get("units", [])}
        if routines:  # only these rows of the units it ran: the rest stay the base's
            key = lambda r: (r["code"], r["unit"], r["file"], r["routine"])  # noqa: E731
            new = {key(r): r for r in o["rows"] if (r["code"], r["unit"]) in ran and r["routine"] in routines}
            missing = {(r["code"], r["unit"], r["routine"]) for r in rows
                       if (r["code"], r["unit"]) in ran and r["routine"] in routines and key(r) not in new}
            if missing:
                raise SystemExit(f"the override has no row for {sorted(missing)}")
            rows = [new.get(key(r), r) for r in rows]
            continue
        rows = [r for r in rows if (r["code"], r["unit"]) not in ran] + list(o["rows"])
        units = [u for u in units if (u["code"], u["unit"]) not in ran] + list(o.get("units", []))
    # every code of every file, in order: an override may bring a code the base never ran
    names = [a for a in base["aggregate"] if a != "total"]
    for r in rows:
        if r["code"] not in names:
            names.append(r["code"])
    out = dict(base)
    out["rows"], out["units"] = rows, units
    out["aggregate"] = rc.aggregate_by_code(rows, names)
    out["seconds"] = sum(u.get("seconds") or 0.0 for u in units)
    out["units_done"] = sum(1 for u in units if u.get("status") == "done")
    out["units_error"] = sum(1 for u in units if u.get("status") == "error")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("overrides", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True, help="output path without suffix")
    ap.add_argument("--why", default="", help="why the overriding units were run again")
    ap.add_argument("--routines", default="", help="comma-separated: replace only these routines' rows")
    args = ap.parse_args(argv)
    base = json.loads(args.base.read_text())
    overrides = [json.loads(p.read_text()) for p in args.overrides]
    only = frozenset(x.strip().lower() for x in args.routines.split(",") if x.strip())
    merged = merge(base, overrides, only)
    parts = [f"{args.base.name} ({base.get('machine', '?')})"]
    for p, o in zip(args.overrides, overrides):
        ran = ", ".join(f"{u['code']}/{u['unit']}" for u in o.get("units", []))
        parts.append(f"{p.name} ({o.get('machine', '?')}): {ran}"
                     + (f" (only the rows of {', '.join(sorted(only))})" if only else ""))
    merged["command"] = (f"merged: {'; '.join(parts)}" + (f". Why: {args.why}" if args.why else "")
                         + f". Runs: {base.get('command', '')} || " + " || ".join(o.get("command", "") for o in overrides))
    md = rc.render_markdown(merged)
    args.out.with_suffix(".md").write_text(md)
    args.out.with_suffix(".json").write_text(json.dumps(merged, indent=1))
    t = merged["aggregate"]["total"]
    print(f"{t['routines']} routines, {t['with_loops']} with loops; verified {t['verified']} "
          f"({t['verified_parallel']} with a parallel loop); loops verified {t['verified_with_loops']} "
          f"({t['pct_loops_verified']} %), with a parallel loop {t['verified_parallel_with_loops']} "
          f"({t['pct_loops_verified_parallel']} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
