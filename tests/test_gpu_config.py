"""The CUDA build configuration, checked without a GPU.

A CUDA port builds only if Kokkos is configured with nvcc_wrapper, the CUDA backend and a
Hopper/Ampere/... architecture, and if the ports built against it get the same compiler and
the same extra flags (the CUDA 13 shim header, `-arch=sm_90`) as the install. These tests
check the command lines port-fortran generates for that, and that it refuses what cannot
work, on any machine.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.errors import UserError
from port_fortran.build_runner.cmake import configure_args
from port_fortran.build_runner.kokkos import KokkosInstall, read_install
from port_fortran.build_runner import kokkos_install as ki

SHIM_FLAGS = "-include /opt/shim/cuda13_shim.h -arch=sm_90"


def _defs(args: list[str]) -> dict[str, str]:
    """-DNAME=VALUE arguments as a dict."""
    out = {}
    for a in args:
        if a.startswith("-D") and "=" in a:
            k, v = a[2:].split("=", 1)
            out[k] = v
    return out


def _fake_tree(tmp_path: Path, version=(4, 6, 1), cuda_lambda=True) -> Path:
    tree = tmp_path / "kokkos-src"
    (tree / "cmake").mkdir(parents=True)
    (tree / "bin").mkdir()
    (tree / "bin" / "nvcc_wrapper").write_text("#!/bin/sh\n")
    maj, mnr, pat = version
    (tree / "CMakeLists.txt").write_text(
        "project(Kokkos CXX)\n"
        f"set(Kokkos_VERSION_MAJOR {maj})\nset(Kokkos_VERSION_MINOR {mnr})\nset(Kokkos_VERSION_PATCH {pat})\n")
    opts = 'kokkos_enable_option(CUDA_LAMBDA ON "lambdas")\n' if cuda_lambda else ""
    (tree / "cmake" / "kokkos_enable_options.cmake").write_text(opts)
    return tree


def test_cuda_install_gets_device_compiler_backend_arch_and_flags(tmp_path):
    tree = _fake_tree(tmp_path)
    prefix = tmp_path / "prefix"
    args = ki.kokkos_cmake_args(tree, "4.6.1", ("serial", "cuda"), "HOPPER90", SHIM_FLAGS, prefix)
    d = _defs(args)
    assert d["CMAKE_CXX_COMPILER"] == str(tree / "bin" / "nvcc_wrapper")
    assert d["Kokkos_ENABLE_CUDA"] == "ON"
    assert d["Kokkos_ENABLE_SERIAL"] == "ON"
    assert d["Kokkos_ARCH_HOPPER90"] == "ON"
    assert d["CMAKE_CXX_FLAGS"] == SHIM_FLAGS  # passed whole, not split on spaces
    assert d["CMAKE_CXX_STANDARD"] == "17"
    assert d["CMAKE_INSTALL_PREFIX"] == str(prefix)
    assert d.get("Kokkos_ENABLE_CUDA_LAMBDA") == "ON"  # 3.x/4.x option, needed for KOKKOS_LAMBDA on 3.x
    assert "Kokkos_ENABLE_OPENMP" not in d


def test_kokkos5_cuda_install_needs_cxx20_and_no_removed_lambda_option(tmp_path):
    tree = _fake_tree(tmp_path, version=(5, 0, 0), cuda_lambda=False)
    d = _defs(ki.kokkos_cmake_args(tree, "5.0.0", ("serial", "cuda"), "HOPPER90", "", tmp_path / "p"))
    assert d["CMAKE_CXX_STANDARD"] == "20"
    assert "Kokkos_ENABLE_CUDA_LAMBDA" not in d  # Kokkos 5 fails the configure on it
    assert "CMAKE_CXX_FLAGS" not in d


def test_host_install_keeps_the_host_compiler(tmp_path):
    tree = _fake_tree(tmp_path)
    d = _defs(ki.kokkos_cmake_args(tree, "4.6.1", ("serial", "openmp"), None, "", tmp_path / "p"))
    assert "CMAKE_CXX_COMPILER" not in d
    assert d["Kokkos_ENABLE_OPENMP"] == "ON"
    assert not any(k.startswith("Kokkos_ARCH_") for k in d)


@pytest.mark.parametrize("spec, want", [
    ("cuda", ("serial", "cuda")),  # a device install gets a host space
    ("openmp,cuda", ("openmp", "cuda")),
    ("CUDA, serial", ("serial", "cuda")),
])
def test_backend_sets(spec, want):
    assert ki.parse_backends(spec) == want


def test_two_device_backends_are_refused():
    with pytest.raises(UserError, match="one device backend"):
        ki.parse_backends("cuda,hip")


def test_cuda_without_arch_and_without_gpu_is_refused(monkeypatch):
    monkeypatch.setattr(ki, "detect_cuda_arch", lambda: None)
    with pytest.raises(UserError, match="--arch"):
        ki.install("cuda", source=None, arch=None)


def test_compute_capability_maps_to_hopper():
    assert ki.CUDA_ARCH_BY_CC["9.0"] == "HOPPER90"
    assert ki.CUDA_ARCH_BY_CC["8.0"] == "AMPERE80"


def _fake_install(tmp_path: Path, flags: str) -> KokkosInstall:
    prefix = tmp_path / "kokkos-cuda"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "nvcc_wrapper").write_text("#!/bin/sh\n")
    return KokkosInstall(prefix=str(prefix), version="4.6.1", backends=("serial", "cuda"),
                         arch=("HOPPER90",), cxx_standard=17, cxx_flags=flags)


def test_port_build_for_cuda_uses_the_installs_wrapper_and_flags(tmp_path):
    inst = _fake_install(tmp_path, SHIM_FLAGS)
    args = configure_args(tmp_path / "src", tmp_path / "build", "cuda", inst)
    d = _defs(args)
    assert d["PF_BACKEND"] == "cuda"
    assert d["Kokkos_ROOT"] == inst.prefix
    assert d["CMAKE_CXX_COMPILER"] == str(Path(inst.prefix) / "bin" / "nvcc_wrapper")
    # the shim must reach the port too: Kokkos < 4.7 calls the changed CUDA 13 API in its headers
    assert d["CMAKE_CXX_FLAGS"] == SHIM_FLAGS
    assert d["CMAKE_CXX_STANDARD"] == "17"


def test_port_build_for_a_host_backend_keeps_the_host_compiler(tmp_path):
    inst = _fake_install(tmp_path, "")
    d = _defs(configure_args(tmp_path / "src", tmp_path / "b", "serial", inst))
    assert "CMAKE_CXX_COMPILER" not in d
    assert "CMAKE_CXX_FLAGS" not in d


def test_users_own_compiler_and_flags_win(tmp_path):
    inst = _fake_install(tmp_path, SHIM_FLAGS)
    args = configure_args(tmp_path / "src", tmp_path / "b", "cuda", inst,
                          ["-DCMAKE_CXX_COMPILER=/my/nvcc_wrapper", "-DCMAKE_CXX_FLAGS=-O2"])
    assert [a for a in args if a.startswith("-DCMAKE_CXX_COMPILER=")] == ["-DCMAKE_CXX_COMPILER=/my/nvcc_wrapper"]
    assert [a for a in args if a.startswith("-DCMAKE_CXX_FLAGS=")] == ["-DCMAKE_CXX_FLAGS=-O2"]


def test_a_cuda_install_is_read_as_such(tmp_path):
    """What `kokkos install` leaves behind (CMake config + KokkosCore_config.h) reads back
    as a CUDA install for HOPPER90, so find_install('cuda') picks it."""
    prefix = tmp_path / "k"
    cdir = prefix / "lib" / "cmake" / "Kokkos"
    cdir.mkdir(parents=True)
    (prefix / "include").mkdir()
    (cdir / "KokkosConfig.cmake").write_text("# config\n")
    (cdir / "KokkosConfigVersion.cmake").write_text('set(PACKAGE_VERSION "4.6.1")\n')
    (cdir / "KokkosConfigCommon.cmake").write_text(
        'SET(Kokkos_DEVICES "SERIAL;CUDA")\nSET(Kokkos_ARCH HOPPER90)\n'
        'SET(Kokkos_CXX_COMPILER "/x/bin/nvcc_wrapper")\n')
    (prefix / "include" / "KokkosCore_config.h").write_text(
        "#define KOKKOS_ENABLE_SERIAL\n#define KOKKOS_ENABLE_CUDA\n#define KOKKOS_ARCH_HOPPER90\n"
        "#define KOKKOS_ENABLE_CXX17\n")
    inst = read_install(prefix)
    assert inst is not None
    assert inst.device_backend == "cuda"
    assert inst.has("cuda") and inst.has("serial")
    assert inst.arch == ("HOPPER90",)
    assert inst.cxx_standard == 17


def test_cuda_timings_are_measured_against_the_gpus_bandwidth(monkeypatch, tmp_path):
    """A CUDA row's roofline fraction is of the GPU's memory bandwidth, never the host's."""
    from port_fortran.harness import timing

    monkeypatch.setattr(timing, "gpu_bandwidth", lambda refresh=False: 4300.0)
    monkeypatch.setattr(timing, "bandwidth", lambda threads, refresh=False: 10.0 * threads)
    assert timing.bandwidth_for("cuda", 16) == 4300.0
    assert timing.bandwidth_for("openmp", 16) == 160.0
    assert timing.bandwidth_for("serial", 1) == 10.0


def test_gpu_bandwidth_is_read_from_the_cache_without_a_gpu(monkeypatch, tmp_path):
    import json
    import socket

    from port_fortran.harness import timing

    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path))
    (tmp_path / "bandwidth.json").write_text(json.dumps({socket.gethostname(): {"16": 150.0, "cuda": 4321.5}}))
    assert timing.gpu_bandwidth() == 4321.5
    assert timing.bandwidth(16) == 150.0  # the host entries are untouched by the 'cuda' key


def test_optimizer_judges_a_gpu_variant_by_its_kernel_time_not_the_copies():
    """On a GPU the with-copies time is mostly PCIe transfers with a large spread; a variant
    that halves the kernel must still count as a win, and one that slows it as a loss."""
    from port_fortran.agents.optimizer import is_better

    def rows(kernel_s, copies_s):
        return [{"variant": "kokkos-cuda", "kernel_only": True, "median_s": kernel_s, "spread_s": 2e-6},
                {"variant": "kokkos-cuda", "kernel_only": False, "median_s": copies_s, "spread_s": 5e-3}]

    keep, why = is_better(rows(1.0e-4, 9.0e-3), rows(2.0e-4, 9.1e-3))
    assert keep, why
    keep, why = is_better(rows(3.0e-4, 8.0e-3), rows(2.0e-4, 9.1e-3))
    assert not keep and "slower" in why


# ------------------------------------------------------------------ coalescing of reduction nests

NEST = Path(__file__).parent / "data" / "gpu" / "nest.f90"


def _translate(name, options=None):
    from port_fortran.fortran import parse_file
    from port_fortran.translate import translate_kernel

    sf = parse_file(str(NEST))
    return translate_kernel(next(k for k in sf.kernels if k.name == name), sf, options)


def test_a_reduction_over_a_2d_nest_is_one_mdrange_reduce():
    """sum over a(i, j) in a j/i nest: one MDRange parallel_reduce over (i, j), so on a GPU
    consecutive threads read consecutive a(i, j) (LayoutLeft) instead of each thread
    walking a column (a strided, uncoalesced read across the warp)."""
    from port_fortran.records import TranslateOptions

    port = _translate("nest2")
    assert port.patterns == ["reduce"]
    assert any("parallel_reduce over an MDRangePolicy of j, i" in n for n in port.notes)
    assert any("line 8" in n and "part of the MDRangePolicy reduction" in n for n in port.notes)
    flat = _translate("nest2", TranslateOptions(mdrange=False))
    assert any("line 8" in n and "sequential inside" in n for n in flat.notes)


def test_a_nest_whose_inner_loop_reduces_something_else_stays_one_dimensional():
    port = _translate("nestmix")
    assert not any("MDRangePolicy" in n for n in port.notes)
    assert any("line 21" in n and "sequential inside" in n for n in port.notes)


def test_optimizer_offers_rank3_tiles_for_a_3d_nest():
    """A 3-D stencil's MDRange ignores a 2-D tile, so 2-D tile variants only re-timed the
    baseline on the GPU (jacobi3d and laplace3d kept Kokkos' default tiles at 56% and 38%)."""
    from port_fortran.agents import optimizer
    from port_fortran.fortran import ir

    def do(var, line, depth, body):
        return ir.Do(var=var, start=ir.Literal(1), end=ir.Name("n"), line=line, body=body,
                     info=ir.LoopInfo(parallel=True, tightly_nested_parallel=depth))

    k3 = ir.Kernel("k", "subroutine", "k.f", 1, 20,
                   body=[do("k", 10, 3, [do("j", 11, 2, [do("i", 12, 1, [])])])])
    tiles = [o.tile for name, o in optimizer.variants(k3, None, 10) if name.startswith("tile-")]
    assert tiles and all(len(t) == 3 for t in tiles)
    k2 = ir.Kernel("k", "subroutine", "k.f", 1, 20, body=[do("j", 10, 2, [do("i", 11, 1, [])])])
    tiles = [o.tile for name, o in optimizer.variants(k2, None, 10) if name.startswith("tile-")]
    assert tiles and all(len(t) == 2 for t in tiles)
