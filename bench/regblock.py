"""Register blocking (the optimizer's ``regblock-4x4`` variant) against the default port of
a matrix product, on one Kokkos backend, at sizes larger than the harness's.

``--form dot`` (the default): ``fortran_kernels/blas3.f``'s DGEMM ('N', 'N', m = n = k = N),
each element a dot product; ``--form column``: ``tests/data/translate/sink.f``'s MMCOL, the
same product a column at a time (the column scaled, then a column update per term: the form
``fortran/sink.py`` turns into a band). The kernel is translated twice, the default
and ``TranslateOptions(register_block=(4, 4))``; each port is built against the Kokkos install
of the backend with a small driver that fills A, B, C on the backend's memory space, calls the
views-level function (kernel only: the data stays where it is) and reports the median of
``--repeats`` calls after a warm-up. The two ports' C are compared (the largest difference over
the largest element: both sum each element's terms in the same order, so only contraction into
fused multiply-adds may differ). On CUDA the driver also times cuBLAS'
``cublasDgemm`` on the same device arrays, the vendor library issue 15 measures against.
The ports themselves are proven by the harness (``tests/test_regblock.py``); this only times.
Writes a markdown table.

    .venv/bin/python bench/regblock.py --backend openmp --threads 2 --sizes 460,1024
    python3 bench/regblock.py --backend cuda --sizes 1024,2048,4096      # on the GPU machine

``--tool-root DIR`` imports port_fortran from another checkout (an older commit's ports timed
by the same driver).
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
if "--tool-root" in sys.argv:  # before the first import of port_fortran
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tool-root") + 1]).resolve()))
from port_fortran.build_runner.kokkos import find_install  # noqa: E402
from port_fortran.records import TranslateOptions  # noqa: E402

def variants(blocks: str) -> dict:
    """The default port and one blocked port per ``RIxRJ`` of ``blocks`` (``4x4,8x8``)."""
    out = {"default": TranslateOptions()}
    for b in blocks.split(","):
        ri, rj = (int(x) for x in b.split("x"))
        out[f"regblock-{b}"] = TranslateOptions(register_block=(ri, rj), variant=f"regblock-{b}")
    return out

# form -> (source, kernel, the views-level call for C := A B with m = n = k = n)
FORMS = {"dot": ("fortran_kernels/blas3.f", "dgemm", "dgemm_kokkos_views('N', 'N', n, n, n, 1.0, a, n, b, n, 0.0, c, n)"),
         "column": ("tests/data/translate/sink.f", "mmcol", "mmcol_kokkos_views(n, n, n, 1.0, 0.0, a, n, b, n, c, n)")}

MAIN = r"""
#include "@KERNEL@.kokkos.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#ifdef PF_CUBLAS
#include <cublas_v2.h>
#endif
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int n = std::atoi(argv[1]), reps = std::atoi(argv[2]);
    pf::View<double**> a("a", n, n), b("b", n, n), c("c", n, n);
    auto ha = Kokkos::create_mirror_view(a);
    auto hb = Kokkos::create_mirror_view(b);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        ha(i, j) = -1.0 + 2.0 * ((i * 2654435761u + j * 40503u) % 1000003) / 1000003.0;
        hb(i, j) = -1.0 + 2.0 * ((j * 2654435761u + i * 97u) % 1000003) / 1000003.0;
      }
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(b, hb);
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      Kokkos::deep_copy(c, 0.0);
      Kokkos::fence();
      const double t0 = now();
      @CALL@;
      Kokkos::fence();
      if (r) t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    FILE* f = std::fopen(argv[3], "wb");
    std::fwrite(hc.data(), sizeof(double), static_cast<size_t>(n) * n, f);
    std::fclose(f);
    std::printf("port %.6e\n", t[t.size() / 2]);
#ifdef PF_CUBLAS
    cublasHandle_t h;
    cublasCreate(&h);
    const double one = 1.0, zero = 0.0;
    std::vector<double> tb;
    for (int r = 0; r <= reps; ++r) {
      Kokkos::fence();
      const double t0 = now();
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), n, b.data(), n, &zero, c.data(), n);
      Kokkos::fence();
      if (r) tb.push_back(now() - t0);
    }
    std::sort(tb.begin(), tb.end());
    std::printf("cublas %.6e\n", tb[tb.size() / 2]);
    cublasDestroy(h);
#endif
  }
  Kokkos::finalize();
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.18)
project(regblock_bench CXX)
find_package(Kokkos REQUIRED)
set(PF_BACKEND {backend} CACHE STRING "")
add_subdirectory(port)
add_executable(bench main.cpp)
target_link_libraries(bench PRIVATE {kernel}_kokkos)
{cublas}
"""

CUBLAS = """find_package(CUDAToolkit REQUIRED)
target_compile_definitions(bench PRIVATE PF_CUBLAS)
target_link_libraries(bench PRIVATE CUDA::cublas)"""


def build(variant: str, opts: TranslateOptions, work: Path, kokkos, backend: str, form: str) -> Path:
    from port_fortran.fortran import parse_file
    from port_fortran.translate import translate_kernel, write_port

    source, kernel, call = FORMS[form]
    sf = parse_file(str(ROOT / source))
    k = next(k for k in sf.kernels if k.name == kernel)
    d = work / variant
    write_port(translate_kernel(k, sf, opts), d / "port")
    (d / "main.cpp").write_text(MAIN.replace("@KERNEL@", kernel).replace("@CALL@", call))
    (d / "CMakeLists.txt").write_text(CMAKE.format(backend=backend, kernel=kernel,
                                                   cublas=CUBLAS if backend == "cuda" else ""))
    # the install's own extra flags (the CUDA 13 shim of a Kokkos < 4.7) are needed by its users too
    flags = " ".join(x for x in ((kokkos.cxx_flags or ""), "" if backend == "cuda" else "-march=native") if x)
    return cmake_build(d, kokkos, flags, variant)


def main() -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="openmp", choices=["serial", "openmp", "cuda"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", default="460,1024")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--form", default="dot", choices=sorted(FORMS))
    ap.add_argument("--blocks", default="4x4", help="register block sizes to time, RIxRJ, comma-separated")
    ap.add_argument("--tool-root", type=Path, help="import port_fortran from this checkout")
    args = ap.parse_args()
    kokkos = find_install(args.backend)
    if kokkos is None:
        sys.exit(f"no Kokkos install with {args.backend} (port-fortran kokkos install --backends {args.backend})")
    sizes = [int(s) for s in args.sizes.split(",")]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="spread", OMP_PLACES="threads")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exes = {name: build(name, opts, Path(tmp), kokkos, args.backend, args.form) for name, opts in variants(args.blocks).items()}
        for n in sizes:
            got, cs = {}, {}
            for name, exe in exes.items():
                res_file = Path(tmp) / f"c_{name}_{n}.bin"
                out = subprocess.run([str(exe), str(n), str(args.repeats), str(res_file)], env=env, check=True,
                                     capture_output=True, text=True).stdout
                for ln in out.splitlines():
                    if ln.split()[:1] in (["port"], ["cublas"]):
                        got[name if ln.startswith("port") else "cublas"] = float(ln.split()[1])
                cs[name] = np.fromfile(res_file, dtype=np.float64)
            scale = max(1e-300, float(np.max(np.abs(cs["default"]))))
            diff = max([float(np.max(np.abs(c - cs["default"]))) / scale for c in cs.values()])
            rows.append((n, got, diff))
    flops = lambda n: 2.0 * n ** 3  # noqa: E731
    names = list(variants(args.blocks))
    cmd = " ".join(["python", "bench/regblock.py"] + sys.argv[1:])
    cuda = args.backend == "cuda"
    lines = [f"- command: `{cmd}`",
             f"- machine: {platform.node()}, {os.cpu_count()} logical CPUs; backend {args.backend}"
             + (f", {args.threads} OpenMP threads" if args.backend == "openmp" else "")
             + f"; {kokkos.describe() if hasattr(kokkos, 'describe') else kokkos.prefix}",
             f"- {FORMS[args.form][1]} ({args.form} form) C := A B, m = n = k = N, kernel only (arrays on the "
             f"backend's memory space); the median of {args.repeats} calls after one warm-up; GFLOP/s = 2 N^3 / "
             "time; speed-up: over the default port; diff: the largest difference of any port's C from the "
             "default's, over the largest element", "",
             "| N | " + " | ".join(f"{x} | GFLOP/s" + (" | speed-up" if x != "default" else "") for x in names)
             + " | max diff / max abs(C) |" + (" cuBLAS | GFLOP/s | best / cuBLAS |" if cuda else ""),
             "|---:|" + "---:|" * (3 * len(names) - 1 + 1) + ("---:|---:|---:|" if cuda else "")]
    for n, got, diff in rows:
        d = got["default"]
        cells = []
        for x in names:
            cells.append(f"{got[x] * 1e3:.3f} ms | {flops(n) / got[x] / 1e9:.1f}"
                         + (f" | {d / got[x]:.2f}x" if x != "default" else ""))
        line = f"| {n} | " + " | ".join(cells) + f" | {diff:.1e} |"
        if "cublas" in got:
            cb, best = got["cublas"], min(got[x] for x in names)
            line += f" {cb * 1e3:.3f} ms | {flops(n) / cb / 1e9:.1f} | {cb / best * 100:.0f} % |"
        lines.append(line)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
