#!/usr/bin/env python3
"""Two versions of port-fortran on the same kernels, interleaved in one run (before / after).

For every kernel and round, ``bench/kokkos_vs_fortran.py --kernel K`` runs from the BEFORE
checkout, then from the AFTER one (each with its own translator and compat header, each
verifying its ports on serial and openmp before timing them, each timing the original in the
same invocation). Ratios Kokkos/Fortran are taken within one invocation, so drifting load on a
shared machine moves both sides of a ratio; running the two versions back to back per kernel
and repeating rounds shows how much the ratios move between runs (the spread reported).

    python bench/ab_compare.py --before /path/to/main-checkout [--after .] [SRC...] \\
        [--kernel K ...] [--threads 1] [--repeats 15] [--rounds 2] [--kokkos-root PREFIX]

Writes bench/results/cpu_<date>_ab.md (or --results-file) with the commands, per kernel and
side the median over rounds of Serial/F and OpenMP/F@T, and their min-max over rounds.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kernels_of(sources: list[str], include: list[str], root: Path) -> list[tuple[str, str]]:
    """(file, kernel) of every routine in the sources (this checkout's front end)."""
    sys.path.insert(0, str(root))
    from port_fortran.fortran import discover, parse_file
    out = []
    for path in discover(sources):
        sf = parse_file(str(path), include_dirs=include)
        out += [(str(path), k.name) for k in sf.kernels]
    return out


def run_side(root: Path, src: str, kernel: str, out: Path, args, log) -> dict:
    """One kokkos_vs_fortran.py invocation of ``root`` on one kernel; its timings by variant."""
    cmd = [sys.executable, str(root / "bench" / "kokkos_vs_fortran.py"), src, "--kernel", kernel,
           "--threads", str(args.threads), "--repeats", str(args.repeats), "--out", str(out),
           "--results", str(out / "results" / kernel)]
    for inc in args.include:
        cmd += ["-I", inc]
    env = {**os.environ, "PYTHONPATH": str(root)}
    if args.kokkos_root:
        env["Kokkos_ROOT"] = args.kokkos_root
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    log.write(f"$ PYTHONPATH={root} {shlex.join(cmd)}\n{res.stdout}{res.stderr}\n")
    log.flush()
    tfile = out / Path(src).name / kernel / "timings.json"
    if res.returncode != 0 or not tfile.exists() or tfile.stat().st_mtime < args.started:
        return {}
    data = json.loads(tfile.read_text())
    by: dict[str, dict] = {}
    for t in data.get("timings", []):
        key = t["variant"] + ("" if t.get("kernel_only", True) else "+copies")
        by[key] = t
    return by


def ratios(tm: dict) -> tuple:
    fs = tm.get("fortran-serial")
    fT = tm.get("fortran-openmp") or fs
    ks = tm.get("kokkos-serial") or tm.get("kokkos-serial+copies")
    ko = tm.get("kokkos-openmp") or tm.get("kokkos-openmp+copies")
    rs = ks["median_s"] / fs["median_s"] if ks and fs else None
    ro = ko["median_s"] / fT["median_s"] if ko and fT else None
    return rs, ro, fs["median_s"] if fs else None


def summary(vals: list) -> str:
    v = [x for x in vals if x is not None]
    if not v:
        return "–"
    med = statistics.median(v)
    return f"{med:.2f}" + (f" ({min(v):.2f}-{max(v):.2f})" if len(v) > 1 else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=[str(ROOT / "fortran_kernels")])
    ap.add_argument("--before", required=True, help="checkout of the version to compare against (e.g. main)")
    ap.add_argument("--after", default=str(ROOT), help="checkout of the new version (default: this one)")
    ap.add_argument("--kernel", action="append", default=[], help="only these kernels")
    ap.add_argument("-I", dest="include", action="append", default=[str(ROOT / "fortran_kernels" / "include")])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--kokkos-root", default=None, help="host Kokkos install (Serial+OpenMP) both sides build with")
    ap.add_argument("--before-label", default=None, help="what BEFORE is when it is not a git checkout (e.g. a commit)")
    ap.add_argument("--out", default="/tmp/port-fortran-ab")
    ap.add_argument("--results-file", default=None)
    args = ap.parse_args(argv)
    args.started = time.time()
    command = "python bench/ab_compare.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    sides = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    revs = {s: subprocess.run(["git", "-C", str(p), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?" for s, p in sides.items()}
    if args.before_label:
        revs["before"] = args.before_label
    todo = [(f, k) for f, k in kernels_of(args.sources, args.include, sides["after"])
            if not args.kernel or k in args.kernel]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[tuple, dict[str, list]] = {}
    with open(out / "ab.log", "a") as log:
        for rnd in range(args.rounds):
            for f, k in todo:
                for side in ("before", "after") if rnd % 2 == 0 else ("after", "before"):
                    tm = run_side(sides[side], f, k, out / side, args, log)
                    r = results.setdefault((f, k), {})
                    rs, ro, fsec = ratios(tm) if tm else (None, None, None)
                    r.setdefault(side + "_s", []).append(rs)
                    r.setdefault(side + "_o", []).append(ro)
                    r.setdefault(side + "_f", []).append(fsec)
                    print(f"round {rnd + 1} {k} {side}: Serial/F={rs} OpenMP/F={ro}", flush=True)
                write(args, command, revs, sides, results, time.time() - args.started)
    print(f"wrote {write(args, command, revs, sides, results, time.time() - args.started)}")
    return 0


def write(args, command, revs, sides, results, seconds) -> Path:
    today = dt.date.today().isoformat()
    path = Path(args.results_file) if args.results_file else ROOT / "bench" / "results" / f"cpu_{today}_ab.md"
    T = args.threads
    lines = [f"# Before / after on the sample kernels ({today})", "",
             f"- before: `{sides['before']}` at {revs['before']}; after: `{sides['after']}` at {revs['after']}",
             f"- command: `{command}` (took {seconds / 60:.1f} min)",
             f"- each cell: median over {args.rounds} round(s) of the ratio Kokkos/Fortran, each ratio from one "
             f"`kokkos_vs_fortran.py` invocation (median of {args.repeats} calls, both verified first), "
             "(min-max over rounds) beside it; '–': not ported, not verified or not timed (see ab.log)",
             f"- OpenMP/F@{T}: Kokkos OpenMP at {T} thread(s) over the original at {T} (its OpenMP build "
             "where it has directives, else serial)", "",
             f"| kernel | Fortran serial | Serial/F before | Serial/F after | OpenMP/F@{T} before | OpenMP/F@{T} after |",
             "|---|---|---|---|---|---|"]
    for (f, k), r in results.items():
        fs = [x for x in r.get("after_f", []) + r.get("before_f", []) if x]
        fsec = f"{statistics.median(fs) * 1e3:.3g} ms" if fs else "–"
        lines.append(f"| {k} ({Path(f).name}) | {fsec} | {summary(r.get('before_s', []))} | "
                     f"{summary(r.get('after_s', []))} | {summary(r.get('before_o', []))} | "
                     f"{summary(r.get('after_o', []))} |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    sys.exit(main())
