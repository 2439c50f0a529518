"""Front-end benchmark: parse + IR + loop analysis time per 1,000 lines.

Generates a large Fortran file of varied routines (fixed and free form), parses it with
``parse_file`` (cache off) a few times and reports the median time per 1,000 lines.
The figure goes to bench/results/parse_bench.txt with the date and the command.

    .venv/bin/python bench/parse_bench.py [--lines 20000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from port_fortran.fortran import parse_file

FREE_TEMPLATES = [
    """subroutine axpy_{i}(n, a, x, y)
  integer, intent(in) :: n
  real(8), intent(in) :: a, x(n)
  real(8), intent(inout) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = y(i) + a*x(i)
  end do
end subroutine axpy_{i}
""",
    """subroutine stencil_{i}(nx, ny, u, unew)
  integer, intent(in) :: nx, ny
  real(8), intent(in) :: u(0:nx+1, 0:ny+1)
  real(8), intent(out) :: unew(nx, ny)
  integer :: i, j
  do j = 1, ny
    do i = 1, nx
      unew(i, j) = 0.25d0*(u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
    end do
  end do
end subroutine stencil_{i}
""",
    """function dot_{i}(n, x, y) result(s)
  integer, intent(in) :: n
  real(8), intent(in) :: x(n), y(n)
  real(8) :: s
  integer :: i
  s = 0.0d0
  do i = 1, n
    s = s + x(i)*y(i)
  end do
end function dot_{i}
""",
    """subroutine mixed_{i}(n, a, b, flag, m)
  integer, intent(in) :: n
  real(8), intent(inout) :: a(n)
  real(8), intent(in) :: b(n)
  character(len=1), intent(in) :: flag
  real(8), intent(out) :: m
  integer :: i
  m = -huge(m)
  if (flag == 'N') then
    do i = 2, n
      a(i) = a(i-1) + b(i)
    end do
  else
    do i = 1, n
      if (b(i) > m) m = b(i)
      a(i) = sqrt(abs(b(i))) + max(b(i), 0.0d0)
    end do
  end if
  select case (n)
  case (1)
    a(1) = 0
  case default
    a(n) = 1
  end select
end subroutine mixed_{i}
""",
]

FIXED_TEMPLATES = [
    """      SUBROUTINE HIST{i}(N, IDX, NB, IH)
      INTEGER N, NB, IDX(N), IH(NB), I
      DO 10 I = 1, N
         IH(IDX(I)) = IH(IDX(I)) + 1
   10 CONTINUE
      RETURN
      END
""",
    """      SUBROUTINE TRN{i}(M, N, A, LDA, B, LDB)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION A(LDA,*), B(LDB,*)
      COMMON /CB{i}/ ALPHA, BETA
      DO 10 J = 1, N
      DO 10 I = 1, M
         B(J,I) = ALPHA*A(I,J) + BETA
   10 CONTINUE
      IF (M .GT. 0) GOTO 20
      M = 0
   20 CONTINUE
      RETURN
      END
""",
]


def generate(lines: int, form: str) -> str:
    templates = FREE_TEMPLATES if form == "free" else FIXED_TEMPLATES
    out, n, i = [], 0, 0
    while n < lines:
        t = templates[i % len(templates)].format(i=i)
        out.append(t)
        n += t.count("\n")
        i += 1
    return "".join(out)


def run(lines: int, repeats: int) -> dict:
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for form, ext in (("free", ".f90"), ("fixed", ".f")):
            text = generate(lines // 2, form)
            p = Path(d) / f"gen{ext}"
            p.write_text(text)
            nlines = text.count("\n")
            walls, cpus = [], []
            nk = 0
            for _ in range(repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                sf = parse_file(p, use_cache=False, timeout=0)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                assert not sf.errors, sf.errors[:3]
                nk = len(sf.kernels)
            res[form] = (nlines, nk, statistics.median(walls), statistics.median(cpus))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "parse_bench.txt"))
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    res = run(args.lines, args.repeats)
    tot_lines = sum(v[0] for v in res.values())
    tot_time = sum(v[2] for v in res.values())
    tot_cpu = sum(v[3] for v in res.values())
    per_k = tot_time / tot_lines * 1000
    per_k_cpu = tot_cpu / tot_lines * 1000
    try:
        import os
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    report = [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"command: {' '.join([Path(sys.executable).name, 'bench/parse_bench.py'] + (argv if argv is not None else sys.argv[1:]))}",
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}",
        f"what: parse_file (read + fparser2 + IR + intents + loop analysis), cache off, median of {args.repeats}",
        f"load average at the end: {load:.1f} on {os.cpu_count()} CPUs (wall time suffers on a shared machine; "
        "CPU time does not)",
    ]
    for form, (nl, nk, t, c) in res.items():
        report.append(f"{form}: {nl} lines, {nk} kernels, wall {t:.2f} s ({t / nl * 1000:.3f} s per 1000 lines), "
                      f"CPU {c:.2f} s ({c / nl * 1000:.3f} s per 1000 lines)")
    report.append(f"RESULT: {per_k_cpu:.3f} s CPU per 1000 lines, {per_k:.3f} s wall per 1000 lines "
                  f"({tot_lines} lines)")
    text = "\n".join(report) + "\n"
    print(text, end="")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
