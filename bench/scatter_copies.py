"""Scattered updates on Kokkos OpenMP: per-thread copies (``pf::Scatter``) against atomics.

The histogram sample ``histx`` (fortran_kernels/histogram.f: ``IHIST(IB) = IHIST(IB) + 1``
with IB computed from X(I)) is translated three times: the default (copies while a copy stays
within 4 MB and the kernel updates at least a quarter as many times as threads x bins, else
atomics), ``scatter_copies`` (the optimizer's variant: copies whatever the size) and Kokkos'
own policies (``host_loops=False``: Kokkos atomics). Each is built against the OpenMP Kokkos
install and timed in-process (median of 15 calls after the first; runs of the three variants
interleaved) on N items over bin counts from a hundred to N, which is where contention turns
into cache misses. Writes a markdown table.

    .venv/bin/python bench/scatter_copies.py --threads 2 --items 5570560 [--out bench/results/x.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchbuild import cmake_build  # noqa: E402
from port_fortran.build_runner.kokkos import find_install  # noqa: E402
from port_fortran.fortran import parse_file  # noqa: E402
from port_fortran.records import TranslateOptions  # noqa: E402
from port_fortran.translate import translate_kernel, write_port  # noqa: E402

VARIANTS = {"default": TranslateOptions(), "scatter-copies": TranslateOptions(scatter_copies=True),
            "kokkos-atomics": TranslateOptions(host_loops=False)}

MAIN = r"""
#include "histx.kokkos.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int n = std::atoi(argv[1]);
    pf::View<double*> x("x", n);
    auto h = Kokkos::create_mirror_view(x);
    for (long i = 0; i < n; ++i) h(i) = -1.0 + 2.0 * ((i * 2654435761u) % 1000003) / 1000003.0;
    Kokkos::deep_copy(x, h);
    for (int a = 2; a < argc; ++a) {
      const int nb = std::atoi(argv[a]);
      pf::View<int*> hist("hist", nb);
      std::vector<double> t;
      for (int r = 0; r < 16; ++r) {
        const double t0 = now();
        histx_kokkos_views(n, x, nb, hist);
        Kokkos::fence();
        if (r) t.push_back(now() - t0);
      }
      std::sort(t.begin(), t.end());
      std::printf("%d %.6f\n", nb, t[t.size() / 2]);
    }
  }
  Kokkos::finalize();
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.16)
project(scatter_bench CXX)
find_package(Kokkos REQUIRED)
set(PF_BACKEND openmp CACHE STRING "")
add_subdirectory(port)
add_executable(bench main.cpp)
target_link_libraries(bench PRIVATE histx_kokkos)
"""


def build(variant: str, opts: TranslateOptions, work: Path, kokkos) -> Path:
    sf = parse_file(str(ROOT / "fortran_kernels" / "histogram.f"), include_dirs=(str(ROOT / "fortran_kernels" / "include"),))
    k = next(k for k in sf.kernels if k.name == "histx")
    d = work / variant
    write_port(translate_kernel(k, sf, opts), d / "port")
    (d / "main.cpp").write_text(MAIN)
    (d / "CMakeLists.txt").write_text(CMAKE)
    return cmake_build(d, kokkos, "-march=native", variant)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--items", type=int, default=5570560)
    ap.add_argument("--bins", default="100,10000,100000,250000,1000000,2000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    kokkos = find_install("openmp")
    if kokkos is None:
        sys.exit("no Kokkos install with OpenMP (port-fortran kokkos install --backends serial,openmp)")
    bins = [int(b) for b in args.bins.split(",")] + [args.items]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="spread", OMP_PLACES="threads")
    runs: dict[str, dict[int, list[float]]] = {v: {b: [] for b in bins} for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        exes = {name: build(name, opts, Path(tmp), kokkos) for name, opts in VARIANTS.items()}
        for _ in range(args.rounds):  # the variants interleaved, so a busy spell hits them alike
            for b in bins:
                for name, exe in exes.items():
                    out = subprocess.run([str(exe), str(args.items), str(b)], env=env, check=True,
                                         capture_output=True, text=True).stdout
                    runs[name][b] += [float(ln.split()[1]) for ln in out.splitlines() if ln.strip()]
    times = {v: {b: sorted(ts)[len(ts) // 2] for b, ts in per.items()} for v, per in runs.items()}
    cmd = " ".join(["python", "bench/scatter_copies.py"] + sys.argv[1:])
    lines = [f"- command: `{cmd}`", f"- machine: {platform.node()}, {os.cpu_count()} logical CPUs; "
             f"{args.threads} OpenMP threads; {kokkos.describe() if hasattr(kokkos, 'describe') else kokkos.prefix}",
             f"- histx over {args.items} items; ms, the median over {args.rounds} interleaved runs of each "
             "variant's median of 15 calls", "",
             "| bins | " + " | ".join(VARIANTS) + " | copies / atomics |", "|---:|" + "---:|" * (len(VARIANTS) + 1)]
    for b in bins:
        row = [f"{times[v][b] * 1e3:.2f}" for v in VARIANTS]
        ratio = times["scatter-copies"][b] / times["kokkos-atomics"][b]
        lines.append(f"| {b} | " + " | ".join(row) + f" | {ratio:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
