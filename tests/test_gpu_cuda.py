"""Ports proven on an NVIDIA GPU (the Kokkos CUDA backend).

The translation-feature kernels of test_translate_verify (reductions, MDRange, atomics,
complex arithmetic, TeamPolicy, GOTO structuring, a host time loop launching kernels) and
the device-function ports of test_devfunc (callees in loops) are built with the install's
nvcc_wrapper and must reproduce gfortran's build of the original
on the GPU. A sample kernel is also timed there: kernel-only and with copies, against the
GPU's own measured bandwidth.

Skipped unless `nvidia-smi` lists a GPU and a Kokkos install with the CUDA backend is found
(Kokkos_ROOT, CMAKE_PREFIX_PATH or the port-fortran cache; docs/gpu.md says how to make
one). Run with `-n 8` (pytest-xdist) on a machine with cores to spare: each case is one
nvcc build.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import test_devfunc as dv
import test_translate_verify as tv

from port_fortran.build_runner.kokkos import find_install
from port_fortran.build_runner.toolchain import find_gpus

ROOT = Path(__file__).resolve().parents[1]


def _cuda_ready() -> str:
    if not find_gpus():
        return "no NVIDIA GPU visible (nvidia-smi)"
    if find_install("cuda") is None:
        return "no Kokkos install with the CUDA backend (see docs/gpu.md)"
    return ""


_WHY = _cuda_ready()
pytestmark = [pytest.mark.integration, pytest.mark.skipif(bool(_WHY), reason=_WHY or "ready")]


@pytest.mark.parametrize("file, name", tv.CASES, ids=[n for _, n in tv.CASES])
def test_feature_kernel_is_proven_on_the_gpu(tmp_path, file, name):
    port, h = tv._harness(tmp_path, file, name)
    build = h.build("cuda")
    assert build.ok, build.condensed
    assert "nvcc_wrapper" in build.log  # compiled for the device, not silently for the host
    verdict = h.verify("cuda")
    assert verdict.passed, verdict.reason
    assert len(verdict.cases) >= 2
    assert all(o.elements > 0 for c in verdict.cases for o in c.outputs)


@pytest.mark.parametrize("file, name, others", dv.PORTS, ids=[p[1] for p in dv.PORTS])
def test_device_function_port_is_proven_on_the_gpu(tmp_path, file, name, others):
    """Callees as KOKKOS_INLINE_FUNCTIONs with pf::FArray dummies pointing into device Views
    (an array-element actual per grid point, helpers of another file, a function in a
    reduction)."""
    port, h = dv.harness(tmp_path, file, name, others)
    build = h.build("cuda")
    assert build.ok, build.condensed
    assert "nvcc_wrapper" in build.log
    verdict = h.verify("cuda")
    assert verdict.passed, verdict.reason
    assert all(o.elements > 0 for c in verdict.cases for o in c.outputs)


def test_sample_axpy_is_proven_and_timed_on_the_gpu(tmp_path):
    from port_fortran.fortran import parse_file
    from port_fortran.harness import Harness
    from port_fortran.translate import translate_kernel, write_port

    src = ROOT / "fortran_kernels" / "vecops.F90"
    sf = parse_file(str(src))
    k = next(k for k in sf.kernels if k.name == "waxpby")
    write_port(translate_kernel(k, sf), tmp_path / "waxpby")
    h = Harness(k, sf, tmp_path / "waxpby")
    assert h.verify("cuda").passed
    rows = [t for t in h.bench(["cuda"], threads=1, repeats=5) if t.variant == "kokkos-cuda"]
    kernel_only = [t for t in rows if t.kernel_only]
    copies = [t for t in rows if not t.kernel_only]
    assert kernel_only and copies
    ko, cp = kernel_only[0], copies[0]
    assert ko.median_s > 0 and cp.median_s > ko.median_s  # copies over PCIe cost more than the kernel
    # measured against the GPU's own bandwidth (thousands of GB/s), so the fraction stays
    # physical: never above the ceiling by more than timer noise
    assert ko.roofline_fraction is not None and 0 < ko.roofline_fraction < 1.3


@pytest.mark.parametrize("name", ["vaxpy", "vsym"])
def test_versioned_loops_are_proven_on_the_gpu(tmp_path, name):
    """Loops parallel only for some run-time values (test_translate_versions): both versions
    run on the device and match the original; incy = 0 with millions of iterations too."""
    import test_translate_versions as tvv

    port, h, k = tvv.harness(tmp_path, name)
    build = h.build("cuda")
    assert build.ok, build.condensed
    v = h.verify("cuda")
    assert v.passed, v.reason
    for cond in tvv.conditions(k).values():
        assert tvv.versions_run(v, cond) == {True, False}
    if name == "vaxpy":
        tvv.zero_stride_race_case(h)
        v = h.verify("cuda")
        assert v.passed, v.reason


def test_sample_daxpy_with_a_zero_stride_gives_the_original_result_on_the_gpu(tmp_path):
    """The case measured before loops were versioned (the sample daxpy, n = 2,000,000,
    incx = 1, incy = 0: the original 3999998.5 for its inputs, the racy port 10.0 to 21.0)."""
    import yaml

    from port_fortran.fortran import parse_file
    from port_fortran.harness import Harness
    from port_fortran.translate import translate_kernel, write_port

    sf = parse_file(str(ROOT / "fortran_kernels" / "blas1.f"))
    k = next(k for k in sf.kernels if k.name == "daxpy")
    port = translate_kernel(k, sf)
    assert "versioned" in port.patterns
    write_port(port, tmp_path / "daxpy")
    h = Harness(k, sf, tmp_path / "daxpy")
    h.spec
    data = yaml.safe_load(h.spec_path.read_text())
    data["sizes"]["correctness"] = [{"n": 2_000_000}]
    data["args"]["incx"]["values"] = [1]
    data["args"]["incy"]["values"] = [0]
    h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
    h.reload_spec()
    v = h.verify("cuda")
    assert v.passed, v.reason
    # the spec's set (the boundary-crossing case of the proof rides along)
    assert [(c.sizes["n"], c.sizes["incy"]) for c in v.cases if c.kind != "cross-tiles"] == [(2_000_000, 0)]


# ------------------------------------------------------------------ hybrid ports on the GPU

HYBRID_DATA = ROOT / "tests" / "data" / "hybrid"
SAMPLES = ROOT / "fortran_kernels"
# (file, routine, mode): the constructs of test_hybrid's proof on serial and openmp (timers,
# an argument check and a diagnostic WRITE; EQUIVALENCE; ENTRY; shared DO termination;
# module state; a serialised OpenMP region; allocatable module arrays; PRIVATE module state),
# the three sample kernels a full port refuses, a function returning an array, and the
# F77 scratch array made a local of its kernel, nests cut out with their #if groups
HYBRID = [(HYBRID_DATA / "legacy.f", n, m) for n, m in
          (("timed", "auto"), ("eqv2", "auto"), ("entr", "auto"), ("shared", "hybrid"))] + \
         [(HYBRID_DATA / "modstate.f90", n, "auto") for n in ("mscale", "mregion", "mgrow", "mtrig")] + \
         [(HYBRID_DATA / "privmod.f90", "pscale", "auto"), (HYBRID_DATA / "arrfun.f90", "outer2", "auto"),
          (HYBRID_DATA / "unrolled.f90", "unrolled", "auto"), (HYBRID_DATA / "ppnest.F90", "ppnest", "hybrid"),
          (SAMPLES / "relax_io.f", "relaxp", "auto"), (SAMPLES / "smooth_equiv.f", "smooth3", "auto"),
          (SAMPLES / "vinit_entry.f", "vinit", "auto")]


@pytest.mark.parametrize("file, name, mode", HYBRID, ids=[h[1] for h in HYBRID])
def test_hybrid_port_is_proven_on_the_gpu(tmp_path, file, name, mode):
    """The routine stays Fortran (gfortran), its outlined nests run as CUDA kernels called
    through bind(C), the arrays they touch copied to the device and back per call."""
    from port_fortran.fortran import parse_file
    from port_fortran.harness.hybrid import HybridHarness, make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    sf = parse_file(str(file), use_cache=False)
    k = next(x for x in sf.kernels + sf.program_units if x.name == name)
    port = translate_mode(k, sf, None, mode)
    assert port.mode == "hybrid", port.notes
    write_port(port, tmp_path / name)
    h = make_harness(k, sf, tmp_path / name)
    assert isinstance(h, HybridHarness)
    build = h.build("cuda")
    assert build.ok, build.condensed
    assert "nvcc_wrapper" in build.log
    v = h.verify("cuda", seeds=1)
    assert v.passed, v.reason
    assert all(o.elements > 0 for c in v.cases for o in c.outputs)


def test_error_routine_in_another_file_is_linked_on_the_gpu(tmp_path):
    """CHK2's argument check calls XERR2 of another file: the call stays Fortran, linked
    from the original object, beside the CUDA kernel."""
    from port_fortran.config import Config
    from port_fortran.fortran.program_build import build_program
    from port_fortran.pipeline.stages import RealStages
    from port_fortran.translate import write_port

    files = [str(HYBRID_DATA / "twofile" / f) for f in ("chk2.f", "xerr2.f")]
    prog = build_program(files, files=files)
    k, sf = prog.load(files[0], "chk2")
    st = RealStages(Config())
    st.use_program(prog)
    port = st.translate(k, sf, None)
    assert port.mode == "hybrid"
    write_port(port, tmp_path / "chk2")
    v = st.verify(k, sf, tmp_path / "chk2", "cuda")
    assert v.passed, v.reason


@pytest.mark.timeout(1200)
def test_main_program_hybrid_port_matches_its_output_on_the_gpu(tmp_path):
    """A main program with its loop nests outlined: the CUDA build prints what the original
    prints (9 numbers compared); one kernel made wrong and it does not."""
    import json

    from port_fortran.cli import main
    from port_fortran.harness.program_proof import prove_program

    out = tmp_path / "out"
    rc = main(["program", str(HYBRID_DATA / "heatprog.f90"), "--out", str(out), "--ignore", r"^ time ",
               "--backends", "cuda"])
    assert rc == 0
    verdict = json.loads((out / "heatprog" / "verdict.json").read_text())
    assert set(verdict) == {"cuda"}
    assert verdict["cuda"]["passed"] and verdict["cuda"]["comparison"]["numbers_compared"] == 9
    cpp = out / "heatprog" / "heatprog.kokkos.cpp"
    cpp.write_text(cpp.read_text().replace("- 2.0 * u(", "- 2.001 * u(", 1))
    v = prove_program(HYBRID_DATA / "heatprog.f90", out / "heatprog", "cuda", ignore=[r"^ time "])
    assert not v.passed and "differ" in v.reason


def test_scratch_recurrences_private_to_each_column_are_proven_on_the_gpu(tmp_path):
    """colsolve (TeaLeaf's block-Jacobi solve): one GPU thread per column, each with its own
    d(0:3) and y(0:3) (pf::Private), where the whole grid ran on one thread before."""
    import json

    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    rc = main([str(ROOT / "tests" / "data" / "private" / "colsolve.f90"), "--backends", "cuda", "--out", str(out),
               "--config", str(cfg), "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert rc == 0 and k["status"] == "verified", k["reason"]
    cpp = next(out.rglob("colsolve.kokkos.cpp")).read_text()
    assert "pf::Private<double, 4> d;" in cpp and "single_for" not in cpp
