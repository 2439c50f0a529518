#!/usr/bin/env python3
"""How long `verify` takes per kernel on the sample kernels (builds excluded).

Ports each chosen sample kernel with the rules model, builds it once per backend (reused
between runs: builds are incremental), then times ``Harness.verify`` ``--repeats`` times per
backend and prints the median per kernel and over all kernels. With ``--timing-size`` the
proof at the timing sizes (what ``bench`` runs before timing) is timed too, separately.

    PYTHONPATH=$PWD .venv/bin/python bench/verify_time.py --backends serial,openmp \
        --kernel daxpy --kernel dgemm [--all] [--repeats 3] [--out /tmp/pf-verify-time] [--timing-size]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from port_fortran.fortran import discover, parse_file  # noqa: E402
from port_fortran.harness import Harness  # noqa: E402
from port_fortran.records import TranslationRefused  # noqa: E402
from port_fortran.translate import translate_kernel, write_port  # noqa: E402

DEFAULT = ["daxpy", "ddot", "dgemv", "dgemm", "jacobi2d", "jacobi3d", "csr_spmv", "nbody_forces"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--all", action="store_true", help="every sample kernel the rules model ports")
    ap.add_argument("--backends", default="serial,openmp")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="/tmp/pf-verify-time")
    ap.add_argument("--timing-size", action="store_true", help="also time the proof at the timing sizes")
    a = ap.parse_args(argv)
    names = a.kernel or DEFAULT
    backends = [b for b in a.backends.split(",") if b]
    inc = [str(ROOT / "fortran_kernels" / "include")]
    per: dict[str, list[float]] = {}
    proof: dict[str, float] = {}
    for path in discover([str(ROOT / "fortran_kernels")]):
        sf = parse_file(str(path), include_dirs=inc)
        for k in sf.kernels:
            if k.name not in names and not a.all:
                continue
            pdir = Path(a.out) / path.name / k.name
            try:
                port = translate_kernel(k, sf)
            except TranslationRefused as exc:
                print(f"{k.name}: refused ({exc})", file=sys.stderr)
                continue
            if any(not (pdir / f).is_file() or (pdir / f).read_text() != t for f, t in port.files.items()):
                write_port(port, pdir)  # unchanged files are left alone: the builds stay current
            h = Harness(k, sf, pdir, include_dirs=inc, threads=a.threads)
            for b in backends:
                res = h.build(b)
                if not res.ok:
                    print(f"{k.name} [{b}]: build failed", file=sys.stderr)
                    continue
                times = []
                for _ in range(a.repeats):
                    t0 = time.monotonic()
                    v = h.verify(b)
                    times.append(time.monotonic() - t0)
                    if not v.passed:
                        print(f"{k.name} [{b}]: NOT verified: {v.reason}", file=sys.stderr)
                per[f"{k.name} [{b}]"] = times
                line = f"{k.name} [{b}]: verify median {statistics.median(times):.2f} s ({len(v.cases)} cases)"
                if a.timing_size and hasattr(h, "prove_timing"):
                    t0 = time.monotonic()
                    pv = h.prove_timing(b, cached=False)
                    proof[f"{k.name} [{b}]"] = time.monotonic() - t0
                    line += f"; timing-size proof {proof[f'{k.name} [{b}]']:.2f} s ({'ok' if pv.passed else pv.reason})"
                print(line, flush=True)
    meds = [statistics.median(t) for t in per.values()]
    if meds:
        print(f"median over {len(meds)} kernel x backend: verify {statistics.median(meds):.2f} s"
              + (f"; timing-size proof {statistics.median(proof.values()):.2f} s" if proof else "")
              + f" (load average at the end: {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
