"""Front-end scaling: parse + analysis time against the size of ONE routine.

`parse_bench.py` measures throughput on many small routines; this benchmark asks whether
the front end stays near-linear when a single routine grows (legacy codes have routines of
thousands of lines, and the Livermore loops file is one 8,000-line unit when its main
program is counted). It generates one subroutine of about 1k, 5k and 20k lines (loops,
stencils, reductions, IF blocks, GOTOs, long operator chains) and times each phase
separately:

- read: form detection, cpp, INCLUDE, fixed-form clean-up (``reader.read_source``);
- fparser: fparser2's parse tree (``parse._fparse``);
- build: parse tree -> IR (``build.FileBuilder``);
- analysis: intents, argument facts, loop dependence (``analysis.analyse_file``).

It also times ``parse_file`` on real files given with ``--file`` (e.g. the largest files of
a corpus). CPU seconds (``time.process_time``) are reported: wall time on a shared machine
says little. The table goes to ``bench/results/frontend_scaling.txt``; the last column is
CPU per 1,000 lines, which stays flat when growth is linear.

    python bench/frontend_scaling.py [--sizes 1000,5000,20000] [--file F ...] [--out PATH]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

BLOCKS = [
    # a 2-D stencil with a long operator chain
    """      do j = 2, n - 1
        do i = 2, n - 1
          b(i, j) = 0.25d0 * (a(i-1, j) + a(i+1, j) + a(i, j-1)
     &      + a(i, j+1)) + 0.125d0 * a(i, j) - 0.0625d0 * (a(i-1, j-1)
     &      + a(i+1, j+1)) + c(i) * d(j) - s{k}
        end do
      end do
""",
    # a reduction with a private temporary
    """      s{k} = 0.0d0
      do i = 1, n
        t = a(i, {m}) * c(i)
        s{k} = s{k} + t * t
      end do
""",
    # a recurrence (serial) under a condition
    """      if (s{k} .gt. 0.0d0) then
        do i = 2, n
          c(i) = c(i - 1) * 0.5d0 + d(i)
        end do
      else
        c(1) = d(1)
      end if
""",
    # a labelled DO with a GOTO-structured early exit
    """      do {l1} i = 1, n
        if (d(i) .lt. 0.0d0) goto {l2}
        d(i) = sqrt(d(i)) + max(d(i), 1.0d0)
{l1} continue
{l2} continue
""",
    # an indirect (scattered) update
    """      do i = 1, n
        idx(i) = mod(i * {m}, n) + 1
        c(idx(i)) = c(idx(i)) + a(i, 1)
      end do
""",
]


def generate_routine(lines: int) -> str:
    """One fixed-form subroutine of about ``lines`` lines."""
    head = [
        "      subroutine big(n, a, b, c, d, idx)",
        "      implicit none",
        "      integer n, i, j, idx(n)",
        "      double precision a(n, n), b(n, n), c(n), d(n), t",
    ]
    body: list[str] = []
    nblocks = 0
    decl_s: list[str] = []
    count = len(head) + 2
    while count < lines:
        k = nblocks
        text = BLOCKS[k % len(BLOCKS)].format(k=k % 900 + 100, m=k % 7 + 1, l1=10000 + k, l2=50000 + k)
        body.append(text)
        count += text.count("\n")
        nblocks += 1
    for k in sorted({kk % 900 + 100 for kk in range(nblocks)}):
        decl_s.append(f"s{k}")
    decls = []
    for i in range(0, len(decl_s), 8):
        decls.append("      double precision " + ", ".join(decl_s[i:i + 8]))
    return "\n".join(head + decls) + "\n" + "".join(body) + "      return\n      end\n"


def phases(path: Path) -> dict:
    """CPU seconds of each front-end phase on one file (no cache, no time limit)."""
    from port_fortran.fortran.analysis import analyse_file
    from port_fortran.fortran.build import FileBuilder
    from port_fortran.fortran.parse import parse_units
    from port_fortran.fortran.reader import read_source

    text = path.read_text(errors="replace")
    t0 = time.process_time()
    src = read_source(str(path), (), {}, text=text)
    t1 = time.process_time()
    units, errors = parse_units(src)
    t2 = time.process_time()
    fb = FileBuilder(src, text.split("\n"))
    sf = fb.build_units(units)
    t3 = time.process_time()
    analyse_file(sf)
    t4 = time.process_time()
    return {"lines": text.count("\n"), "kernels": len(sf.kernels), "errors": len(errors) + len(sf.errors),
            "read": t1 - t0, "fparser": t2 - t1, "build": t3 - t2, "analysis": t4 - t3, "total": t4 - t0}


def parse_file_cpu(path: Path) -> dict:
    from port_fortran.fortran import parse_file

    t0 = time.process_time()
    sf = parse_file(path, use_cache=False, timeout=0)
    t = time.process_time() - t0
    return {"lines": path.read_text(errors="replace").count("\n"), "kernels": len(sf.kernels),
            "errors": [f"{e.code}@{e.line}" for e in sf.errors][:3], "total": t}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,20000")
    ap.add_argument("--file", action="append", default=[], help="also time parse_file on this file")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "frontend_scaling.txt"))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in args.sizes.split(",") if x]:
            p = Path(d) / f"big{n}.f"
            p.write_text(generate_routine(n))
            r = phases(p)
            rows.append(f"routine {n:>6}: {r['lines']:>6} lines, {r['kernels']} kernel(s), {r['errors']} error(s); "
                        f"CPU s: read {r['read']:.2f}, fparser {r['fparser']:.2f}, build {r['build']:.2f}, "
                        f"analysis {r['analysis']:.2f}, total {r['total']:.2f} "
                        f"({r['total'] / r['lines'] * 1000:.3f} s per 1000 lines)")
            print(rows[-1], flush=True)
    for f in args.file:
        r = parse_file_cpu(Path(f))
        rows.append(f"file {f}: {r['lines']} lines, {r['kernels']} kernels, errors {r['errors']}; "
                    f"parse_file CPU {r['total']:.2f} s ({r['total'] / max(r['lines'], 1) * 1000:.3f} s per 1000 lines)")
        print(rows[-1], flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    head = [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"command: python bench/frontend_scaling.py {' '.join(argv if argv is not None else sys.argv[1:])}",
        f"machine: {platform.machine()} python {platform.python_version()}, load {load:.1f} on {os.cpu_count()} CPUs",
        "what: CPU seconds per front-end phase for one generated routine of N lines; parse_file on real files",
    ]
    text = "\n".join(head + rows) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
