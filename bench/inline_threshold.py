"""Where a kernel of little work should stop running on the calling thread (issue 15).

On Kokkos OpenMP a kernel labelled with the work of one iteration (``pf::Label``, written by
the translator for straight-line bodies) runs on the calling thread when iterations x work
is at most ``PF_INLINE_WORK`` (8192 by default, ``pf_kokkos_compat.hpp``). This measures
the crossover on the machine it runs on: the same kernel (``y(i) = a * x(i) + y(i)``,
labelled 2 references an iteration, and a 5-point stencil row, labelled 5) at sizes from 32
to 2^20 iterations, built twice against the project's compat header and the Kokkos OpenMP
install port-fortran finds -- every kernel shared among the threads (``PF_INLINE_WORK=0``)
and every kernel on the calling thread (``PF_INLINE_WORK`` above every size) -- each launch
timed as the median of many calls. It prints, per size, both times and which is faster,
then the smallest work where sharing wins at every larger size, against the threshold.

    python bench/inline_threshold.py --threads 2        # the 2-core machine
    python bench/inline_threshold.py --threads 16       # the GPU host's 16 cores
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROGRAM = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "pf_kokkos_compat.hpp"
// argv: n reps; prints "axpy <n> <median us>" and "row5 <n> <median us>"
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char** argv) {
  pf::ensure_initialized();
  const long n = std::atol(argv[1]);
  const int reps = std::atoi(argv[2]);
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n + 2), y("y", n + 2), z("z", n + 2);
  for (long i = 0; i < n + 2; ++i) { x(i) = 1.0 + 1e-3 * i; y(i) = 0.5; z(i) = 0.0; }
  const double a = 1.0000001;
  std::vector<double> t1, t2;
  for (int r = 0; r < reps; ++r) {
    auto s = std::chrono::steady_clock::now();
    pf::parallel_for(pf::Label("axpy", 2), pf::range(1, n), [=](const int i) { y(i) = a * x(i) + y(i); });
    auto m = std::chrono::steady_clock::now();
    pf::parallel_for(pf::Label("row5", 5), pf::range(1, n), [=](const int i) {
      z(i) = 0.25 * (x(i - 1) + x(i + 1) + y(i)) - x(i); });
    auto e = std::chrono::steady_clock::now();
    t1.push_back(std::chrono::duration<double, std::micro>(m - s).count());
    t2.push_back(std::chrono::duration<double, std::micro>(e - m).count());
  }
  double chk = 0; for (long i = 0; i < n + 2; ++i) chk += y(i) + z(i);
  std::printf("axpy %ld %.4f\nrow5 %ld %.4f\ncheck %g\n", n, median(t1), n, median(t2), chk);
  return 0;  // the Views go before Kokkos does (pf::ensure_initialized finalizes at exit)
}
"""


def build(work: Path, threshold: int) -> Path:
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.translate.render import compat_header, runtime_header, strings_header

    inst = find_install("openmp")
    if inst is None:
        sys.exit("no Kokkos install with the openmp backend: run `port-fortran kokkos install --backends serial,openmp`")
    for name, text in (("pf_kokkos_compat.hpp", compat_header()), ("pf_runtime.hpp", runtime_header()),
                       ("pf_strings.hpp", strings_header()), ("inline_bench.cpp", PROGRAM)):
        (work / name).write_text(text)
    lib = next(p for p in (Path(inst.prefix) / "lib", Path(inst.prefix) / "lib64") if (p / "libkokkoscore.a").exists())
    exe = work / f"inline_bench_{threshold}"
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O3", "-march=native", "-fopenmp", "-DPF_BACKEND_OPENMP",
           f"-DPF_INLINE_WORK={threshold}", "-I", str(work), "-isystem", f"{inst.prefix}/include",
           str(work / "inline_bench.cpp"), "-o", str(exe), str(lib / "libkokkoscontainers.a"),
           str(lib / "libkokkoscore.a"), "-ldl"]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, n: int, threads: int) -> dict[str, float]:
    reps = max(50, min(2000, int(4e6 // max(n, 1))))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"}
    out = subprocess.run([str(exe), str(n), str(reps)], capture_output=True, text=True, env=env, check=True).stdout
    return {w[0]: float(w[2]) for w in (line.split() for line in out.splitlines()) if w[0] in ("axpy", "row5")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=3, help="runs of each build per size (median taken)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        shared, inline = build(work, 0), build(work, 1 << 30)
        sizes = [32 << k for k in range(16)]  # 32 .. 2^20
        print(f"threads {args.threads}; median of {args.runs} runs, each the median of many calls (microseconds)")
        print(f"{'kernel':6} {'iterations':>10} {'work':>8} {'shared':>10} {'in place':>10}  faster")
        crossover = {}
        for kernel, per in (("axpy", 2), ("row5", 5)):
            wins = []
            for n in sizes:
                s = statistics.median(run(shared, n, args.threads)[kernel] for _ in range(args.runs))
                i = statistics.median(run(inline, n, args.threads)[kernel] for _ in range(args.runs))
                wins.append((n * per, s < i))
                print(f"{kernel:6} {n:>10} {n * per:>8} {s:>10.3f} {i:>10.3f}  {'shared' if s < i else 'in place'}")
            # the smallest work from which sharing wins at every larger size
            cross = next((w for k, (w, _) in enumerate(wins) if all(x for _, x in wins[k:])), None)
            crossover[kernel] = cross
        from port_fortran.translate.render import compat_header
        default = next(int(line.split()[-1]) for line in compat_header().splitlines()
                       if line.startswith("#define PF_INLINE_WORK"))
        for kernel, cross in crossover.items():
            print(f"{kernel}: sharing wins from a work of {cross} on (PF_INLINE_WORK {default})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
