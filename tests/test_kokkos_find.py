"""Finding Kokkos installs: what they provide is read from the install itself."""
from __future__ import annotations

import pytest

from port_fortran.build_runner import kokkos as K


def fake_install(prefix, version="4.7.01", defines=("SERIAL", "OPENMP"), arch=(), devices=None,
                 lib="lib", cxx="/usr/bin/g++"):
    cdir = prefix / lib / "cmake" / "Kokkos"
    cdir.mkdir(parents=True)
    (cdir / "KokkosConfig.cmake").write_text("# fake\n")
    (cdir / "KokkosConfigVersion.cmake").write_text(f'set(PACKAGE_VERSION "{version}")\n')
    devs = ";".join(devices if devices is not None else defines)
    (cdir / "KokkosConfigCommon.cmake").write_text(
        f"SET(Kokkos_DEVICES {devs})\nSET(Kokkos_ARCH {';'.join(arch)})\nSET(Kokkos_CXX_COMPILER \"{cxx}\")\n")
    inc = prefix / "include"
    inc.mkdir(parents=True)
    lines = [f"#define KOKKOS_ENABLE_{d}" for d in defines] + ["#define KOKKOS_ENABLE_CXX17"]
    lines += [f"#define KOKKOS_ARCH_{a}" for a in arch]
    (inc / "KokkosCore_config.h").write_text("\n".join(lines) + "\n")
    return prefix


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for v in ("Kokkos_ROOT", "KOKKOS_ROOT", "Kokkos_DIR", "CMAKE_PREFIX_PATH"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_read_install_from_prefix_and_cmake_dir(clean_env):
    p = fake_install(clean_env / "k", defines=("SERIAL", "CUDA"), arch=("HOPPER90",), lib="lib64",
                     cxx="/k/bin/nvcc_wrapper")
    for path in (p, p / "lib64" / "cmake" / "Kokkos"):
        inst = K.read_install(path)
        assert inst is not None
        assert inst.prefix == str(p)
        assert inst.version == "4.7.01" and inst.version_tuple == (4, 7, 1)
        assert inst.backends == ("serial", "cuda")
        assert inst.arch == ("HOPPER90",)
        assert inst.device_backend == "cuda"
        assert inst.cxx_standard == 17
    assert K.read_install(clean_env) is None


def test_kokkos5_needs_cxx20(clean_env):
    inst = K.read_install(fake_install(clean_env / "k5", version="5.0.0"))
    assert inst.cxx_standard == 20


def test_search_order_and_dedup(clean_env, monkeypatch):
    a = fake_install(clean_env / "a", version="4.2.00")
    b = fake_install(clean_env / "b", version="3.7.02")
    c = fake_install(K.kokkos_cache_dir() / "4.7.01-serial-host", version="4.7.01")
    monkeypatch.setenv("Kokkos_ROOT", str(a))
    monkeypatch.setenv("CMAKE_PREFIX_PATH", f"/nonexistent:{b}:{a}")
    found = K.find_installs()
    assert [(i.prefix, i.found_via) for i in found] == [
        (str(a), "Kokkos_ROOT"), (str(b), "CMAKE_PREFIX_PATH"), (str(c), "cache")]
    assert K.find_install("openmp").prefix == str(a)
    assert K.find_install("cuda") is None


def test_host_backends_use_an_install_without_a_device(clean_env, monkeypatch):
    gpu = fake_install(clean_env / "gpu", defines=("SERIAL", "CUDA"), arch=("AMPERE80",))
    host = fake_install(clean_env / "host", defines=("SERIAL", "OPENMP"))
    monkeypatch.setenv("CMAKE_PREFIX_PATH", f"{gpu}:{host}")
    assert K.find_install("serial").prefix == str(host)
    assert K.find_install("cuda").prefix == str(gpu)
    monkeypatch.setenv("CMAKE_PREFIX_PATH", str(gpu))
    assert K.find_install("serial") is None  # a CUDA Kokkos needs nvcc_wrapper: not a host install


def test_registry_round_trip(clean_env):
    p = fake_install(clean_env / "elsewhere", defines=("SERIAL",))
    inst = K.read_install(p)
    inst.cxx_flags = "-include /x/shim.h"
    K.record_install(inst, source="test")
    K.record_install(inst, source="test")  # replaced, not duplicated
    assert len(K.read_registry()) == 1
    found = K.find_installs()
    assert [(i.prefix, i.found_via, i.cxx_flags) for i in found] == [(str(p), "registry", "-include /x/shim.h")]


def test_dev_install_via_kokkos_root(monkeypatch):
    import os
    if not os.path.isdir("/tmp/kokkos-dev"):
        pytest.skip("no /tmp/kokkos-dev on this machine")
    monkeypatch.setenv("Kokkos_ROOT", "/tmp/kokkos-dev")
    inst = K.find_installs()[0]
    assert (inst.prefix, inst.found_via, inst.version) == ("/tmp/kokkos-dev", "Kokkos_ROOT", "3.4.01")
    assert set(inst.backends) >= {"serial", "openmp"}
