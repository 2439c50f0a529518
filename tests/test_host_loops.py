"""Host backends run the kernels as the loops a Fortran compiler sees (issue #15).

The generated kernels go through ``pf::parallel_for`` / ``pf::parallel_reduce`` /
``pf::single_for`` of the compat header, which on PF_BACKEND_SERIAL / PF_BACKEND_OPENMP
(``PF_HOST_LOOPS``) accumulate a reduction into a local of each chunk (not into the
reference Kokkos hands the functor, which the compiler must assume aliases the arrays),
loop over an int index (affine subscripts), run tight nests as plain loops with the
fastest index innermost, and run single-iteration kernels in place without a View per
call. Device backends get Kokkos' own policies. These tests assert on the generated
structure; one integration test asks g++ whether the loops vectorise (no timing)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.records import TranslateOptions
from port_fortran.translate import translate_kernel, write_port
from port_fortran.translate.render import compat_header

SAMPLES = Path(__file__).parent.parent / "fortran_kernels"
DATA = Path(__file__).parent / "data" / "translate"


def _port(file: str, name: str, options=None):
    path = SAMPLES / file if (SAMPLES / file).is_file() else DATA / file
    sf = parse_file(str(path), include_dirs=(str(SAMPLES / "include"),))
    k = next(k for k in sf.kernels if k.name == name)
    return translate_kernel(k, sf, options)


def _cpp(port, name):
    return port.files[f"{name}.kokkos.cpp"]


def _function(text: str, signature: str) -> str:
    """The body of the first function whose text starts with ``signature`` (brace matched)."""
    start = text.index(signature)
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[start:j + 1]
    raise AssertionError(f"unbalanced braces after {signature!r}")


def _host_branch(body: str) -> str:
    """The ``#ifdef PF_HOST_LOOPS`` branch of a compat function (up to its #else)."""
    return body[body.index("#ifdef PF_HOST_LOOPS"):body.index("#else")]


def test_reductions_go_through_the_compat_reduce_with_a_local_accumulator():
    cpp = _cpp(_port("vecops.F90", "vdist"), "vdist")
    assert "pf::parallel_reduce(pf::Label(\"vdist:L36\", 4), pf::range(1, n)" in cpp
    assert "Kokkos::parallel_reduce" not in cpp
    host = _host_branch(_function(compat_header(), "inline void parallel_reduce(const Label& label, "
                                                   "const Range& p"))
    # the functor accumulates into `acc`, a local of the chunk; Kokkos' reference (`out`)
    # only receives each chunk's join
    assert re.search(r"\bV acc;", host) and "reducer.init(acc);" in host
    assert "acc = host_reduce_loop<Reducer>(b, e, acc, fl);" in host and "reducer.join(out, acc);" in host
    assert "const F fl(f);" in host  # the functor copied onto the chunk's stack
    assert "f(i, out)" not in host and ", out, f)" not in host
    # the loop itself in a function that is not inlined: its accumulator a register of its own
    loop = _function(compat_header(), "PF_NOINLINE V host_reduce_loop(")
    assert "fr(i, a)" in loop and "return a;" in loop
    # MAX / MIN: a private extremum per SIMD lane; SUM / PROD keep the loop's order
    assert "#pragma omp simd reduction(max : a)" in loop and "#pragma omp simd reduction(min : a)" in loop
    assert "simd_extremum<Kokkos::Max<T, S>>" in compat_header() and "simd_extremum<Kokkos::Sum" not in compat_header()


def test_nest_reductions_and_loc_reductions_use_the_compat_reduce_too():
    # resid2d: a reduction over a 2-D nest; idmaxl: a maxloc reducer
    resid = _cpp(_port("stencil2d.f90", "resid2d"), "resid2d")
    assert re.search(r"pf::parallel_reduce\(pf::Label\(\"resid2d:L\d+\", 2\), pf::nest<2>\(", resid)
    idmax = _cpp(_port("reduce.f", "idmaxl"), "idmaxl")
    assert "pf::parallel_reduce(" in idmax and "Kokkos::parallel_reduce" not in idmax
    host = _host_branch(_function(compat_header(), "inline void parallel_reduce(const Label& label, "
                                                   "const Nest<R>& m"))
    assert "acc = host_reduce_loop<Reducer>(lo0, hi0, acc, [&](auto i, V& a) { host_call_red(f, i, idx, a," in host
    assert "reducer.join(out, acc);" in host


def test_tight_nests_are_nests_fastest_index_first_and_keep_the_optimizers_tiles():
    cpp = _cpp(_port("stencil3d.F90", "jacobi3d"), "jacobi3d")
    assert "pf::parallel_for(pf::Label(\"jacobi3d:L27\", 8), pf::nest<3>({1, 1, 1}, {nx, ny, nz}), " \
           "KOKKOS_LAMBDA(const int i, const int j, const int k)" in cpp
    tiled = _cpp(_port("stencil3d.F90", "jacobi3d", TranslateOptions(tile=(64, 4, 1))), "jacobi3d")
    assert "pf::nest<3>({1, 1, 1}, {nx, ny, nz}, {64, 4, 1})" in tiled
    # on the host the innermost plain loop is dimension 0 (the contiguous index)
    host = _host_branch(_function(compat_header(), "inline void parallel_for(const Label& label, const Nest<R>& m"))
    assert "host_loop(lo0, hi0" in host and "h.next(idx)" in host


def test_column_updates_go_through_the_rows_four_columns_at_a_time_on_the_host():
    """dgemv 'N' (y(i) = y(i) + temp*a(i, j), a column at a time): gfortran unrolls the
    column loop and jams it into the row loop (-fopt-info-loop: 'applying unroll and jam'),
    loading and storing y once per two columns; g++ does not in the port's lambda (the
    arrays might alias), and the Serial port took 1.6x gfortran's time (2.88 MB of y per
    column, 2026-12-05). The host form takes four columns per pass over the chunk's rows,
    each copy spelling the column's scalars as their values; the columns left go one at a time."""
    host = _cpp(_port("blas2.f", "dgemv"), "dgemv")
    host = host[host.index("pf::host_chunks"):host.index("#else", host.index("pf::host_chunks"))]
    assert "for (j = 1; j + 3 <= n; j += 4) {" in host and "for (; j <= n; ++j) {" in host
    assert "y(i - 1) = y(i - 1) + temp * a(i - 1, j - 1);" in host
    assert "y(i - 1) = y(i - 1) + alpha * x(j + 2) * a(i - 1, j + 2);" in host
    # a chain of scalars: s from t, each copy with its own column's values, grouping kept
    two = _cpp(_port("turn.f", "colup2"), "colup2")
    assert "z(i - 1) = z(i - 1) - alpha * x(j) / (1.0 + static_cast<double>(j + 1)) / " in two, two
    # a REAL temp holds the DOUBLE value rounded: spelled as that value it would not be
    four = _cpp(_port("turn.f", "colup4"), "colup4")
    assert "pf::host_chunks" in four and "j += 4" not in four


def test_serial_statements_between_kernels_allocate_nothing_per_call_on_the_host():
    # a shear (not interchangeable): w = c * x(j) once per column, between two kernels
    cpp = _cpp(_port("turn.f", "shear"), "shear")
    assert "pf::DevScalar<double> pf_dev_w(\"w\", w);" in cpp
    assert "pf::single_for(\"shear:L34\", KOKKOS_LAMBDA(const int) {" in cpp
    assert not re.search(r"Kokkos::View<[^>]*> pf_dev_", cpp)
    dev = _function(compat_header(), "struct DevScalar {")
    host = _host_branch(dev)
    assert "T* p;" in host and "Kokkos::View" not in host  # the host variable itself
    assert "Kokkos::View<T, MemSpace> v;" in dev[dev.index("#else"):]


def test_host_loops_only_on_host_backends():
    text = compat_header()
    assert re.search(r"#if defined\(PF_BACKEND_SERIAL\) \|\| defined\(PF_BACKEND_OPENMP\)\n#define PF_HOST_LOOPS 1",
                     text)
    for sig in ("inline void parallel_reduce(const Label& label, const Range& p",
                "inline void parallel_for(const Label& label, const Nest<R>& m",
                "inline void single_for(const char* label"):
        body = _function(text, sig)
        assert "#else" in body and "Kokkos::parallel_" in body[body.index("#else"):]  # device: Kokkos' own


@pytest.mark.integration
def test_host_loops_vectorise_where_kokkos_serial_did_not(tmp_path):
    """g++ -O3 -fopt-info-vec on dgemv's port for Serial: the column update
    y(i) = y(i) + temp * a(i, j) (a parallel_for) vectorises in the compat's int host loop.
    Kokkos Serial's own loop hands the lambda a 64-bit index the lambda's int narrows, and
    that loop was reported 'not vectorized' (measured on the 2026-11-29 code, see
    bench/results/cpu_2026-11-30_perf.md)."""
    from port_fortran.build_runner.kokkos import find_install

    inst = find_install("serial")
    if inst is None:
        pytest.skip("no Kokkos install with serial")
    compat = compat_header().splitlines()

    def vectorised_lines(file, name):
        write_port(_port(file, name), tmp_path / name)
        src = tmp_path / name / f"{name}.kokkos.cpp"
        cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O3", "-fno-math-errno", "-fopenmp-simd",
               "-fopt-info-vec-optimized", "-DPF_BACKEND_SERIAL", "-isystem", f"{inst.prefix}/include",
               "-fopenmp", "-c", str(src), "-o", str(tmp_path / f"{name}.o")]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        return {int(m) for m in re.findall(r"pf_kokkos_compat\.hpp:(\d+):\d+: optimized: loop vectorized", res.stderr)}

    int_loop = next(i + 1 for i, ln in enumerate(compat) if "for (int i = static_cast<int>(b); i < ie; ++i)" in ln)
    assert int_loop in vectorised_lines("blas2.f", "dgemv")
    # dscal's DO with a variable step (INCX): the index from the trip number in int arithmetic
    # is affine, so g++ vectorises the loop (versioned for a unit step, as gfortran does); from
    # a narrowed long product it did not (1.6x the original on one core, 2.0x on the 16-core host)
    assert int_loop in vectorised_lines("blas1.f", "dscal")
    # damax: MAX(AMAX, ABS(X(I))) vectorises as a max reduction (gfortran: vmaxpd)
    pragma = next(i + 1 for i, ln in enumerate(compat) if "#pragma omp simd reduction(max : a)" in ln)
    assert {pragma, pragma + 1} & vectorised_lines("omp_legacy.f", "damax")  # g++ names the pragma's line


def test_kokkos_policies_option_gives_kokkos_own_policies_everywhere():
    """The optimizer's 'kokkos-policies' variant (TranslateOptions.host_loops=False)."""
    opts = TranslateOptions(host_loops=False, tile=(64, 4, 1))
    cpp = _cpp(_port("stencil3d.F90", "jacobi3d", opts), "jacobi3d")
    assert "Kokkos::parallel_for(\"jacobi3d:L27\", pf::mdrange<3>({1, 1, 1}, {nx, ny, nz}, {64, 4, 1})" in cpp
    red = _cpp(_port("vecops.F90", "vdist", TranslateOptions(host_loops=False)), "vdist")
    assert "Kokkos::parallel_reduce(\"vdist:L36\", pf::range(1, n)" in red and "pf::parallel_reduce" not in red


def test_scattered_updates_are_plain_on_kokkos_serial_only():
    cpp = _cpp(_port("histogram.f", "histi"), "histi")
    assert re.search(r"pf_sc_ihist\.add\(&ihist\(idx\(i - 1\) - 1\), 1\);", cpp) and "Kokkos::atomic_add" not in cpp
    # set up before the kernel (per-thread copies kept between calls), summed after it
    assert "static thread_local pf::ScatterStore<int> pf_sc_ihist_store;" in cpp  # a store per calling thread
    assert "pf::Scatter<int> pf_sc_ihist(pf_sc_ihist_store, ihist.data(), static_cast<long>(ihist.span()), " \
           "pf::trip(1, n, 1));" in cpp
    assert cpp.index("pf_sc_ihist.contribute();") > cpp.index("pf_sc_ihist.add(")
    scatter = _function(compat_header(), "struct Scatter {")
    openmp = scatter[scatter.index("#if defined(PF_BACKEND_OPENMP)"):scatter.index("#else")]
    assert "omp_get_thread_num()" in openmp
    assert "atomic_add(p, v);" in scatter[scatter.index("#else"):]  # Serial and the devices: as before
    assert "!always && (n * t > 4 * iterations" in openmp  # the optimizer's variant drops the size rule
    forced = _cpp(_port("histogram.f", "histi", TranslateOptions(scatter_copies=True)), "histi")
    assert "pf::trip(1, n, 1), true);" in forced
    # Kokkos' own policies (the optimizer's variant): Kokkos atomics, no copies
    plain = _cpp(_port("histogram.f", "histi", TranslateOptions(host_loops=False)), "histi")
    assert "pf::atomic_add(&ihist(" in plain and "pf::Scatter" not in plain
    body = _function(compat_header(), "KOKKOS_INLINE_FUNCTION void atomic_add(")
    serial = body[body.index("#if defined(PF_BACKEND_SERIAL)"):body.index("#else")]
    assert "*p += v;" in serial and "Kokkos::atomic_add(p, static_cast<T>(v));" in body[body.index("#else"):]


@pytest.mark.integration
def test_host_reductions_run_in_a_function_of_their_own(tmp_path):
    """A SUM inlined into the kernel kept its accumulator in a general register (or on the
    stack) and moved it through the FP unit at every iteration: dnrm2 on Kokkos Serial took
    31 ms where gfortran took 8 (bench/results/cpu_2026-12-04_2core.md). The compat header
    runs each host reduction loop in a function that is not inlined, so g++ must emit it."""
    from port_fortran.build_runner.kokkos import find_install

    inst = find_install("serial")
    if inst is None:
        pytest.skip("no Kokkos install with serial")
    write_port(_port("blas1.f", "dnrm2"), tmp_path / "dnrm2")
    obj = tmp_path / "dnrm2.o"
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O3", "-fno-math-errno", "-fopenmp-simd",
           "-DPF_BACKEND_SERIAL", "-isystem", f"{inst.prefix}/include", "-fopenmp", "-c",
           str(tmp_path / "dnrm2" / "dnrm2.kokkos.cpp"), "-o", str(obj)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    syms = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert re.search(r" [tTwW] .*pf::host_reduce_loop<Kokkos::Sum<double", syms), syms[-2000:]


NEST_PROGRAM = r"""
#include <cstdio>
#include "pf_kokkos_compat.hpp"
// every element of a nest visited exactly once, on the thread count of the run: rows of one
// element (a halo of depth 1), an odd number of rows, a rank-3 nest, empty nests
int main() {
  pf::ensure_initialized();
  int bad = 0;
  {
    Kokkos::View<int**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", 1, 37);
    pf::parallel_for("rows1", pf::nest<2>({1, -5}, {1, 31}), [=](const int j, const int k) { a(j - 1, k + 5) += 1; });
    for (int k = 0; k < 37; ++k) bad += a(0, k) != 1;
  }
  {
    Kokkos::View<int***, Kokkos::LayoutLeft, Kokkos::HostSpace> b("b", 2, 5, 7);
    pf::parallel_for("r3", pf::nest<3>({0, 1, 1}, {1, 5, 7}), [=](const int i, const int j, const int k) { b(i, j - 1, k - 1) += 1 + i; });
    for (int i = 0; i < 2; ++i) for (int j = 0; j < 5; ++j) for (int k = 0; k < 7; ++k) bad += b(i, j, k) != 1 + i;
    double s = 0;
    pf::parallel_reduce("sum3", pf::nest<3>({0, 1, 1}, {1, 5, 7}),
        [=](const int i, const int j, const int k, double& acc) { acc += b(i, j - 1, k - 1) * (j + 10 * k); }, Kokkos::Sum<double>(s));
    double want = 0;
    for (int i = 0; i < 2; ++i) for (int j = 1; j <= 5; ++j) for (int k = 1; k <= 7; ++k) want += (1 + i) * (j + 10 * k);
    bad += s != want;
  }
  {  // one row (outer extent 1): the threads share the row
    Kokkos::View<int*, Kokkos::HostSpace> c("c", 50);
    pf::parallel_for("row", pf::nest<2>({1, 3}, {50, 3}), [=](const int j, const int k) { c(j - 1) += k; });
    for (int j = 0; j < 50; ++j) bad += c(j) != 3;
    double s = 0;
    pf::parallel_reduce("rowsum", pf::nest<3>({1, 2, 2}, {40, 2, 2}),
        [=](const int j, const int k, const int l, double& acc) { acc += j * k * l; }, Kokkos::Sum<double>(s));
    bad += s != 4.0 * 820;
    int once = 0;
    int* o = &once;
    pf::parallel_for("one", pf::range(7, 7), [=](const int i) { *o += i; });
    bad += once != 7;
  }
  {
    int hit = 0;
    int* h = &hit;
    pf::parallel_for("empty", pf::nest<2>({1, 4}, {3, 2}), [=](const int, const int) { *h = 1; });
    pf::parallel_for("empty0", pf::nest<3>({1, 1, 1}, {0, 4, 4}), [=](const int, const int, const int) { *h = 1; });
    double s = 5;
    pf::parallel_reduce("esum", pf::nest<2>({1, 4}, {3, 2}), [=](const int, const int, double& acc) { acc += 1; }, Kokkos::Sum<double>(s));
    bad += hit + (s != 0);
  }
  std::printf("threads %d bad %d\n", (int)pf::ExecSpace().concurrency(), bad);
  return bad != 0;
}
"""


@pytest.mark.integration
def test_host_nests_visit_every_element_once_in_runs_of_rows(tmp_path):
    """A nest on the host runs in a few parts per thread, each a run of rows stepped by an
    odometer (one functor copy per part: TeaLeaf's halo nests, rows of depth 1, copied it per
    element), a nest of one row as a range over it; rows of one element, one row, rank 3,
    reductions, one iteration and empty nests on 1, 2 and 3 threads."""
    exe = _openmp_program(tmp_path, NEST_PROGRAM, "nests")
    for threads in (1, 2, 3):
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "false"})
        assert run.returncode == 0 and f"threads {threads} bad 0" in run.stdout, run.stdout + run.stderr


def _openmp_program(tmp_path: Path, source: str, name: str) -> Path:
    """``source`` (a main program using the compat header) built for Kokkos OpenMP."""
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.translate.render import runtime_header, strings_header

    inst = find_install("openmp")
    if inst is None:
        pytest.skip("no Kokkos install with openmp")
    (tmp_path / "pf_kokkos_compat.hpp").write_text(compat_header())
    (tmp_path / "pf_runtime.hpp").write_text(runtime_header())
    (tmp_path / "pf_strings.hpp").write_text(strings_header())
    (tmp_path / f"{name}.cpp").write_text(source)
    lib = next(p for p in (Path(inst.prefix) / "lib", Path(inst.prefix) / "lib64") if (p / "libkokkoscore.a").exists())
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O2", "-fopenmp", "-DPF_BACKEND_OPENMP", "-I", str(tmp_path),
           "-isystem", f"{inst.prefix}/include", str(tmp_path / f"{name}.cpp"), "-o", str(tmp_path / name),
           str(lib / "libkokkoscontainers.a"), str(lib / "libkokkoscore.a"), "-ldl"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return tmp_path / name


SMALL_PROGRAM = r"""
#include <cstdio>
#include <omp.h>
#include "pf_kokkos_compat.hpp"
// where each kernel ran: in a parallel region (1) or on the calling thread (0)
int main() {
  pf::ensure_initialized();
  Kokkos::View<int*, Kokkos::HostSpace> in("in", 200000);
  auto ran = [&](long n) { int any = 0, all = 1; for (long i = 0; i < n; ++i) { any |= in(i); all &= in(i); } return any + all; };
  // little work: 100 iterations of 2 references
  pf::parallel_for(pf::Label("small", 2), pf::range(1, 100), [=](const int i) { in(i - 1) = omp_in_parallel(); });
  const int small = ran(100);
  // much work: 200000 iterations
  pf::parallel_for(pf::Label("big", 2), pf::range(1, 200000), [=](const int i) { in(i - 1) = omp_in_parallel(); });
  const int big = ran(200000);
  // unknown work (a plain label): shared however small
  pf::parallel_for("unknown", pf::range(1, 100), [=](const int i) { in(i - 1) = omp_in_parallel(); });
  const int unknown = ran(100);
  // a nest of 10 x 10 and a reduction over it, little work: in place, the sum in order
  pf::parallel_for(pf::Label("nest", 3), pf::nest<2>({1, 1}, {10, 10}), [=](const int j, const int k) { in(j - 1 + 10 * (k - 1)) = omp_in_parallel(); });
  const int nest = ran(100);
  double s = 0;
  int* w = &in(0);
  pf::parallel_reduce(pf::Label("sum", 1), pf::nest<2>({1, 1}, {10, 10}), [=](const int j, const int k, double& acc) { acc += j + 100 * k; *w = omp_in_parallel(); }, Kokkos::Sum<double>(s));
  const int sum_in = in(0);
  // 15000 iterations of 2: above the bound of 2 threads (8192), within that of 8 (32768)
  pf::parallel_for(pf::Label("medium", 2), pf::range(1, 15000), [=](const int i) { in(i - 1) = omp_in_parallel(); });
  const int medium = ran(15000);
  std::printf("threads %d small %d big %d unknown %d nest %d sum %g in %d medium %d\n", (int)pf::ExecSpace().concurrency(), small, big, unknown, nest, s, sum_in, medium);
  return 0;
}
"""


@pytest.mark.integration
def test_kernels_of_little_work_run_on_the_calling_thread(tmp_path):
    """A parallel region costs more than a kernel of a few thousand element references (TeaLeaf's
    bottom halo unpack: 94 us as a Kokkos OpenMP kernel on 2 threads, 5 us in gfortran): a
    kernel whose iterations times its work per iteration (pf::Label, from the translator) is
    below PF_INLINE_WORK for each two threads runs in place (a region of more threads costs
    more: bench/inline_threshold.py); one of much work, or of unknown work, is shared."""
    exe = _openmp_program(tmp_path, SMALL_PROGRAM, "small")
    out = {}
    for threads in (2, 8):
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "false"})
        assert run.returncode == 0, run.stdout + run.stderr
        out[threads] = run.stdout
    # 0: no iteration in a parallel region; 2: every one in one
    assert "threads 2 small 0 big 2 unknown 2 nest 0 sum 55550 in 0 medium 2" in out[2], out[2]
    assert "threads 8 small 0 big 2 unknown 2 nest 0 sum 55550 in 0 medium 0" in out[8], out[8]
