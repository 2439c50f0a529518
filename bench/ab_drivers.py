#!/usr/bin/env python3
"""Re-time the drivers ``ab_compare.py`` built and proved, interleaved, for a noisy machine.

``ab_compare.py`` leaves, per side and kernel, the original's timing driver and the port's
driver per backend, each proven at the timing sizes (``<out>/<side>/<file>/<kernel>/build``).
On a machine shared with other jobs a median of a few calls moves by 2x between runs. This
script runs, for ``--rounds`` rounds, the original, the BEFORE port and the AFTER port one
after the other on the same input file (the timing case the bench wrote), ``--repeats`` calls
each, and reports per variant the minimum and the median over every call of every round, and
the ratios to the original of both (the minimum is the least disturbed call).

    python bench/ab_drivers.py --out /tmp/port-fortran-ab [--kernel K ...] [--backend serial] \\
        [--threads 1] [--rounds 5] [--repeats 10] [--results-file FILE]
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

WARMUP = 2


def times(cmd: list[str], cwd: Path, env: dict) -> list[float]:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **env}, timeout=600)
    out = []
    for line in res.stdout.splitlines():
        if line.strip().startswith("PF_TIME"):
            out.append(float(line.split()[1].replace("D", "E")))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the --out of ab_compare.py")
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--backend", default="serial", choices=["serial", "openmp"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--results-file", default=None)
    args = ap.parse_args(argv)
    command = "python bench/ab_drivers.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    out = Path(args.out)
    t = 1 if args.backend == "serial" else args.threads
    env = {"OMP_NUM_THREADS": str(t), "KOKKOS_NUM_THREADS": str(t), "OMP_DYNAMIC": "false"}
    if t > 1:
        env.update({"OMP_PROC_BIND": "spread", "OMP_PLACES": "threads"})
    rows = []
    for after_dir in sorted((out / "after").glob("*/*/build")):
        kdir = after_dir.parent
        name, fname = kdir.name, kdir.parent.name
        if args.kernel and name not in args.kernel:
            continue
        before_dir = out / "before" / fname / name / "build"
        work = after_dir / "bench"
        fin = work / "in.bin"
        exes = {"fortran": after_dir / "reference-timing" / "ref_driver",
                "before": before_dir / args.backend / "pf_driver",
                "after": after_dir / args.backend / "pf_driver"}
        if not fin.exists() or not all(p.exists() for p in exes.values()):
            print(f"{name}: drivers or inputs missing (not proven on both sides?)", flush=True)
            continue
        samples: dict[str, list[float]] = {k: [] for k in exes}
        for _ in range(args.rounds):
            for k, exe in exes.items():
                mode = "time" if k == "fortran" else "time-views"
                fenv = {"OMP_NUM_THREADS": "1"} if k == "fortran" else env
                samples[k] += times([str(exe), mode, str(fin), str(WARMUP), str(args.repeats)], work, fenv)
        if not all(samples.values()):
            print(f"{name}: a driver printed no times", flush=True)
            continue
        mins = {k: min(v) for k, v in samples.items()}
        meds = {k: statistics.median(v) for k, v in samples.items()}
        rows.append((name, fname, mins, meds, len(samples["fortran"])))
        print(f"{name}: min F={mins['fortran']:.3g}s before={mins['before']:.3g}s after={mins['after']:.3g}s; "
              f"ratio of mins before={mins['before'] / mins['fortran']:.2f} after={mins['after'] / mins['fortran']:.2f}",
              flush=True)
    lines = [f"Command: `{command}`", "",
             f"Kokkos {args.backend} ({t} thread(s), kernel only: views in place) over the serial original; "
             f"{args.rounds} rounds x {args.repeats} calls per variant, interleaved (original, before, after).", "",
             "| kernel | calls | Fortran min | before min | after min | before/F (min) | after/F (min) | "
             "before/F (median) | after/F (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, fname, mins, meds, n in rows:
        lines.append(f"| {name} ({fname}) | {n} | {mins['fortran'] * 1e3:.3g} ms | {mins['before'] * 1e3:.3g} ms | "
                     f"{mins['after'] * 1e3:.3g} ms | {mins['before'] / mins['fortran']:.2f} | "
                     f"{mins['after'] / mins['fortran']:.2f} | {meds['before'] / meds['fortran']:.2f} | "
                     f"{meds['after'] / meds['fortran']:.2f} |")
    text = "\n".join(lines) + "\n"
    if args.results_file:
        Path(args.results_file).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
