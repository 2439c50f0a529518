"""A realistic synthetic run, written through the same :class:`RunDB` calls the pipeline
uses. For tests of the reports and the model comparison, and for looking at a report
without building anything (``python -m port_fortran.reports.synthetic OUT_DIR``)."""
from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path
from typing import Optional

from ..records import CaseResult, OutputCheck, Verdict
from .db import RunDB

# name, file, line_start, line_end, outcome, patterns, reason, reason_code
KERNELS = [
    ("daxpy", "blas1.f", 12, 30, "verified", ["parallel_for"], "", ""),
    ("ddot", "blas1.f", 33, 52, "verified", ["reduce"], "", ""),
    ("dnrm2", "blas1.f", 55, 80, "verified", ["reduce"], "", ""),
    ("dgemv", "dense.f", 5, 74, "verified", ["parallel_for", "reduce"], "", ""),
    ("dgemm", "dense.f", 77, 160, "verified", ["mdrange"], "", ""),
    ("jacobi2d", "stencil.f90", 8, 31, "verified", ["mdrange"], "", ""),
    ("heat3d", "stencil.f90", 34, 66, "failed", ["mdrange"],
     "stencil.f90:51: output 'unew' differs on openmp: max rel error 3.1e-02 at (1,7,3) (tolerance 1e-12)",
     "wrong-result"),
    ("spmv_csr", "sparse.f90", 3, 25, "verified", ["parallel_for", "reduce"], "", ""),
    ("histogram", "scatter.f90", 4, 22, "verified", ["parallel_for", "atomic"], "", ""),
    ("tridiag", "solvers.f", 10, 38, "refused", [],
     "solvers.f:21: loop carries a dependence through c(i-1) (recurrence); it must stay serial", "loop-carried-dependence"),
    ("lcg_random", "random.f", 3, 19, "refused", [],
     "random.f:11: each value depends on the previous seed (sequential generator)", "loop-carried-dependence"),
    ("pic_push", "pic.f90", 40, 90, "budget-reached", [],
     "pic.f90:40: budget of $0.05 reached before an LLM could retry the translation", "budget-reached"),
    ("nbody_forces", "nbody.f90", 6, 48, "error", [],
     "nbody.f90:6: internal error in the harness: <unexpected> & \"quoted\" | text", "stage-error"),
]


# the side-by-side view of one kernel (written for these tests; lines 12-30 of blas1.f)
DAXPY_FORTRAN = """\
      SUBROUTINE DAXPY(N, DA, DX, INCX, DY, INCY)
      INTEGER N, INCX, INCY
      DOUBLE PRECISION DA, DX(*), DY(*)
      INTEGER I, IX, IY
      IF (N .LE. 0) RETURN
      IF (INCX .EQ. 1 .AND. INCY .EQ. 1) THEN
         DO 10 I = 1, N
            DY(I) = DY(I) + DA*DX(I)
   10    CONTINUE
      ELSE
         IX = 1
         IY = 1
         DO 20 I = 1, N
            DY(IY) = DY(IY) + DA*DX(IX)
            IX = IX + INCX
            IY = IY + INCY
   20    CONTINUE
      END IF
      END"""
DAXPY_KOKKOS = """\
// daxpy.kokkos.cpp -- Kokkos port of subroutine daxpy (blas1.f, lines 12-30)
#include "daxpy.kokkos.hpp"

void daxpy_kokkos_views(int n, double da, pf::View<const double*> dx, int incx, pf::View<double*> dy, int incy) {
  if (n <= 0) {
    return;
  }
  if (incx == 1 && incy == 1) {
    // line 18: do i -> parallel_for
    Kokkos::parallel_for("daxpy:L18", pf::range(1, n), KOKKOS_LAMBDA(const int i) {
      dy(i - 1) = dy(i - 1) + da * dx(i - 1);
    });
  } else {
    // line 24: do i -> parallel_for
    Kokkos::parallel_for("daxpy:L24", pf::range(1, n), KOKKOS_LAMBDA(const int i) {
      const int ix = 1 + (i - 1) * incx, iy = 1 + (i - 1) * incy;
      dy(iy - 1) = dy(iy - 1) + da * dx(ix - 1);
    });
  }
}"""
SYNTHETIC_CMAKE = "cmake 4.1.2 (/venv/lib/python3.11/site-packages/cmake/data/bin/cmake, from the cmake Python package)"


def _verdict(backend: str, passed: bool, rng: random.Random, reason: str = "") -> Verdict:
    cases = []
    for seed in range(3):
        n = rng.choice([1, 7, 1000, 4097])
        ok = passed or seed < 1
        err = rng.uniform(1e-16, 1e-13) if ok else 3.1e-2
        out = OutputCheck(name="y", passed=ok, elements=n, max_abs_err=err, max_rel_err=err / 2,
                          tolerance=1e-12, worst_index=None if ok else [1, 7, 3],
                          message="" if ok else reason)
        cases.append(CaseResult(seed=seed, sizes={"n": n}, passed=ok, outputs=[out]))
    return Verdict(backend=backend, passed=passed, cases=cases, reason="" if passed else reason)


def fill_synthetic(db: RunDB, run_id: Optional[str] = None, *, backends=("serial", "openmp"),
                   model: str = "rules", llm_models=("gpt-4o-mini",), seed: int = 0,
                   kernels=None, finished: bool = True) -> str:
    """Write a run with kernels in every status, verdicts, timings, attempts and LLM calls.
    Returns the run id. Deterministic for a given ``seed``."""
    rng = random.Random(seed)
    run_id = db.start_run(run_id, command="port-fortran fortran_kernels/ --backends " + ",".join(backends),
                          config={"backends": list(backends), "model": model}, host="synthetic")
    t0 = 1_700_000_000.0 + seed
    db.conn.execute("UPDATE runs SET started=? WHERE run_id=?", (t0, run_id))
    for i, (name, file, a, b, outcome, patterns, reason, code) in enumerate(kernels or KERNELS):
        kid = f"{file}:{name}"
        db.upsert_kernel(run_id, kid, file, name, a, b)
        started = t0 + 5 * i
        dur = rng.uniform(8, 90)
        db.add_attempt(run_id, kid, "translate", outcome != "refused", model=model, seconds=0.2,
                       detail=reason if outcome == "refused" else "")
        if outcome in ("verified", "failed"):
            db.add_attempt(run_id, kid, "validate", True, model=model, seconds=0.1)
            for be in backends:
                db.add_attempt(run_id, kid, "compile", True, backend=be, seconds=rng.uniform(5, 20))
                ok = outcome == "verified" or be == "serial"
                db.add_attempt(run_id, kid, "run", ok, backend=be, seconds=rng.uniform(0.5, 3))
                v = _verdict(be, ok, rng, reason)
                db.add_verdict(run_id, kid, be, ok, v.reason, dataclasses.asdict(v))
            if outcome == "failed":
                db.add_attempt(run_id, kid, "debug", False, model=model, attempt=1, seconds=1.0)
                db.add_attempt(run_id, kid, "debug", False, model=model, attempt=2, seconds=1.0)
            else:
                db.add_attempt(run_id, kid, "optimize", True, model=model, seconds=4.0)
                base = rng.uniform(1e-3, 5e-2)
                db.add_timing(run_id, kid, "fortran-serial", base, spread_s=base * 0.02, repeats=10,
                              sizes={"n": 1 << 22}, gbytes_per_s=rng.uniform(5, 15))
                for be in backends:
                    factor = rng.uniform(0.9, 1.2) if be == "serial" else rng.uniform(1.5, 7.5)
                    threads = 1 if be == "serial" else 8
                    db.add_timing(run_id, kid, f"kokkos-{be}", base / factor, threads=threads,
                                  spread_s=base * 0.03 / factor, repeats=10, sizes={"n": 1 << 22},
                                  gbytes_per_s=rng.uniform(5, 60), gflops=rng.uniform(0.5, 20),
                                  roofline_fraction=rng.uniform(0.1, 0.9), proven_sizes={"n": 1 << 22})
            db.add_attempt(run_id, kid, "finalize", True, seconds=0.05)
        if outcome in ("failed", "budget-reached"):
            for m in llm_models:
                for _ in range(2):
                    inp, cached, out = rng.randint(1500, 6000), rng.randint(0, 1000), rng.randint(300, 2000)
                    db.add_llm_call(run_id, m, kernel_id=kid, stage="debug", provider="openai",
                                    input_tokens=inp, cached_tokens=cached, output_tokens=out,
                                    cost_usd=round(inp * 1.5e-7 + out * 6e-7, 6), price_source="genai-prices",
                                    seconds=rng.uniform(1, 8))
        kept = model if outcome in ("verified", "failed") else ""
        db.set_kernel(run_id, kid, status=outcome, reason=reason, reason_code=code, model=kept,
                      patterns=patterns, port_dir=f"out/{file}/{name}", started=started, finished=started + dur,
                      cmake=SYNTHETIC_CMAKE if kept else "")
        if name == "daxpy":
            db.set_sources(run_id, kid, fortran_file=file, fortran_first_line=a, fortran=DAXPY_FORTRAN,
                           kokkos_file="daxpy.kokkos.cpp", kokkos=DAXPY_KOKKOS)
    bound = [f"{k[1]}:{k[0]}" for k in (kernels or KERNELS) if k[4] == "verified"]
    if bound:
        backend = "openmp" if "openmp" in backends else backends[0]
        path = "out/python/kokkos_ports.cpython-311-x86_64-linux-gnu.so"
        db.add_python_module(run_id, "kokkos_ports", backend, ok=True, path=path, kernels=bound,
                             cmake=SYNTHETIC_CMAKE, seconds=31.5)
        for kid in bound:
            db.add_attempt(run_id, kid, "python", True, f"kokkos_ports.{kid.split(':')[1]} in {path}",
                           backend=backend, seconds=31.5 / len(bound))
    if finished:
        db.finish_run(run_id)
        db.conn.execute("UPDATE runs SET finished=? WHERE run_id=?", (t0 + 420.0, run_id))
    return run_id


if __name__ == "__main__":  # pragma: no cover - a convenience for looking at a report
    from .render import render_reports

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "synthetic-report")
    db = RunDB.in_dir(out)
    rid = fill_synthetic(db)
    print(render_reports(db, rid, out))
