"""Helpers for the harness tests: IR built by hand (so the harness is tested on its own)
and hand-written Kokkos ports with the right extern "C" signature."""
from __future__ import annotations

import textwrap
from pathlib import Path

from port_fortran.fortran import ir

I4, R8 = ir.INTEGER, ir.REAL8


def N(name, t=I4):
    return ir.Name(name, ftype=t)


def L(v):
    return ir.Literal(v, str(v), ftype=I4 if isinstance(v, int) else R8)


def B(op, left, right, t=None):
    return ir.BinOp(op, left, right, ftype=t or left.ftype)


def R(name, *subs, t=R8):
    return ir.ArrayRef(name, list(subs), ftype=t)


def arg(name, pos, t=I4, dims=(), intent="in", **kw):
    return ir.Argument(name=name, ftype=t, dims=[ir.Dim(lo, hi) for lo, hi in dims], position=pos,
                       intent=intent, intent_declared=True, **kw)


def write_source(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text if name.endswith(".f") else textwrap.dedent(text).lstrip())
    return p


# ------------------------------------------------------------------ axpy (w = a*x + y)


AXPY_F90 = """
subroutine axpy(n, a, x, y, w)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a, x(n), y(n)
  double precision, intent(out) :: w(n)
  integer :: i
  do i = 1, n
    w(i) = a * x(i) + y(i)
  end do
end subroutine axpy
"""


def axpy_kernel(path: Path) -> ir.Kernel:
    loop = ir.Do(var="i", start=L(1), end=N("n"), body=[
        ir.Assign(R("w", N("i")), B("+", B("*", N("a", R8), R("x", N("i")), R8), R("y", N("i")), R8), line=8)
    ], line=7)
    loop.info = ir.LoopInfo(parallel=True)
    return ir.Kernel(
        name="axpy", kind="subroutine", file=str(path), line_start=1, line_end=10,
        args=[arg("n", 0, used_as_size=True), arg("a", 1, R8), arg("x", 2, R8, [(None, N("n"))]),
              arg("y", 3, R8, [(None, N("n"))]), arg("w", 4, R8, [(None, N("n"))], intent="out")],
        locals={"i": ir.Variable("i", I4)}, body=[loop])


PORT_CMAKE = """
cmake_minimum_required(VERSION 3.16)
project({k}_port CXX)
find_package(Kokkos REQUIRED)
add_library({k}_kokkos {k}.kokkos.cpp)
target_link_libraries({k}_kokkos PUBLIC Kokkos::kokkos)
"""

PORT_PRELUDE = """
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>
#ifdef PF_BACKEND_SERIAL
using Exec = Kokkos::Serial;
#else
using Exec = Kokkos::DefaultHostExecutionSpace;
#endif
template <class T> using U1 = Kokkos::View<T*, Kokkos::LayoutLeft, Kokkos::HostSpace,
                                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
static void pf_init() { if (!Kokkos::is_initialized()) Kokkos::initialize(); }
"""


def write_port(port_dir: Path, kernel: str, body: str) -> Path:
    port_dir.mkdir(parents=True, exist_ok=True)
    (port_dir / "CMakeLists.txt").write_text(PORT_CMAKE.format(k=kernel).lstrip())
    (port_dir / f"{kernel}.kokkos.cpp").write_text(PORT_PRELUDE.lstrip() + textwrap.dedent(body))
    return port_dir


# One axpy port whose behaviour is picked at run time by PF_TEST_VARIANT, so the wrong
# variants cost one build: correct | off-by-one | unwritten | hardcoded | loop | alloc | scribble
AXPY_PORT = r"""
extern "C" void axpy_kokkos(const int* n, const double* a, const double* x, const double* y, double* w) {
  pf_init();
  const int N = *n;
  const double A = *a;
  const char* v = std::getenv("PF_TEST_VARIANT");
  std::string variant = v ? v : "correct";
  U1<const double> X(x, N), Y(y, N);
  U1<double> W(w, N);
  if (variant == "off-by-one") {  // the last element is skipped
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N > 0 ? N - 1 : 0), KOKKOS_LAMBDA(int i) { W(i) = A * X(i) + Y(i); });
  } else if (variant == "off-by-one-read") {  // reads one element too far (Fortran x(i+1))
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) { W(i) = A * X(i + 1 < N ? i + 1 : i) + Y(i); });
  } else if (variant == "unwritten") {  // leaves w(3) alone
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) {
      if (i != 2) W(i) = A * X(i) + Y(i);
    });
  } else if (variant == "hardcoded") {  // returns an answer fixed beforehand (one seed's)
    std::FILE* f = std::fopen(std::getenv("PF_TEST_ANSWER"), "rb");
    if (f) { if (std::fread(w, sizeof(double), N, f)) {} std::fclose(f); }
  } else if (variant == "loop") {  // never returns
    volatile double s = 0; while (true) { s = s + 1.0; }
  } else if (variant == "alloc") {  // allocates without bound
    std::vector<double*> keep;
    while (true) { double* p = new double[1 << 20]; for (int i = 0; i < (1 << 20); i += 512) p[i] = i; keep.push_back(p); }
  } else if (variant == "overrun") {  // right output, then one element past the end of w
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) { W(i) = A * X(i) + Y(i); });
    w[N] = 1.0;
  } else if (variant == "underrun") {  // a negative offset (a stride taken from the wrong end)
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) { W(i) = A * X(i) + Y(i); });
    w[-2] = 1.0;
  } else if (variant == "scribble") {  // right output, but overwrites an input
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) { W(i) = A * X(i) + Y(i); });
    if (N > 0) const_cast<double*>(x)[0] = 0.0;
  } else {
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) { W(i) = A * X(i) + Y(i); });
  }
  Kokkos::fence();
}
"""


# ------------------------------------------------------------------ prefix sum (race)


PSUM_F90 = """
subroutine psum(n, x)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: i
  do i = 2, n
    x(i) = x(i) + x(i - 1)
  end do
end subroutine psum
"""


def psum_kernel(path: Path) -> ir.Kernel:
    loop = ir.Do(var="i", start=L(2), end=N("n"), body=[
        ir.Assign(R("x", N("i")), B("+", R("x", N("i")), R("x", B("-", N("i"), L(1)))), line=7)], line=6)
    loop.info = ir.LoopInfo(parallel=False)
    return ir.Kernel(
        name="psum", kind="subroutine", file=str(path), line_start=1, line_end=9,
        args=[arg("n", 0, used_as_size=True), arg("x", 1, R8, [(None, N("n"))], intent="inout")],
        locals={"i": ir.Variable("i", I4)}, body=[loop])


# wrongly parallelised: a loop-carried dependence run with parallel_for (a race)
PSUM_RACY_PORT = r"""
extern "C" void psum_kokkos(const int* n, double* x) {
  pf_init();
  const int N = *n;
  U1<double> X(x, N);
  Kokkos::parallel_for(Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Static>>(1, N > 1 ? N : 1),
                       KOKKOS_LAMBDA(int i) { X(i) += X(i - 1); });
  Kokkos::fence();
}
"""


# ------------------------------------------------------------------ CSR and gemv (front end IR)


CSR_F = """\
      SUBROUTINE CSRMV(N, ROWPTR, COLIND, VAL, X, Y)
*     Y := A*X for A in compressed sparse row form.
      INTEGER N, ROWPTR(N+1), COLIND(*)
      DOUBLE PRECISION VAL(*), X(*), Y(N)
      INTEGER I, K
      DOUBLE PRECISION S
      DO 20 I = 1, N
         S = 0.0D0
         DO 10 K = ROWPTR(I), ROWPTR(I+1) - 1
            S = S + VAL(K) * X(COLIND(K))
   10    CONTINUE
         Y(I) = S
   20 CONTINUE
      END
"""

CSR_PORT = r"""
extern "C" void csrmv_kokkos(const int* n, const int* rowptr, const int* colind, const double* val,
                             const double* x, double* y) {
  pf_init();
  const int N = *n;
  Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int i) {
    double s = 0.0;
    for (int k = rowptr[i]; k <= rowptr[i + 1] - 1; ++k) s += val[k - 1] * x[colind[k - 1] - 1];
    y[i] = s;
  });
  Kokkos::fence();
}
"""

GEMV_PORT = r"""
extern "C" void dgemv_kokkos(const char* trans, const int* m, const int* n, const double* alpha,
                             const double* a, const int* lda, const double* x, const double* beta, double* y) {
  pf_init();
  const int M = *m, N = *n, LDA = *lda;
  const double al = *alpha, be = *beta;
  if (M <= 0 || N <= 0) return;
  const bool notran = *trans == 'N' || *trans == 'n';
  if (notran) {
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, M), KOKKOS_LAMBDA(int i) {
      double t = be * y[i];
      for (int j = 0; j < N; ++j) t = t + (al * x[j]) * a[i + (long)j * LDA];
      y[i] = t;
    });
  } else {
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, N), KOKKOS_LAMBDA(int j) {
      double t = 0.0;
      for (int i = 0; i < M; ++i) t = t + a[i + (long)j * LDA] * x[i];
      y[j] = be * y[j] + al * t;
    });
  }
  Kokkos::fence();
}
"""
