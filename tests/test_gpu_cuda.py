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
