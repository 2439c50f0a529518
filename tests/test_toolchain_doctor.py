"""`port-fortran doctor`: what is found, what is missing and how to fix it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from port_fortran.build_runner import toolchain as T
from port_fortran.build_runner.kokkos import KokkosInstall

CLI = [sys.executable, "-m", "port_fortran.cli", "doctor"]


def _path_without(tmp_path, drop: set[str]) -> str:
    """A PATH with the usual tools linked into one directory, minus ``drop``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("cmake", "g++", "c++", "gcc", "cc", "gfortran", "nvcc", "make", "sh", "ld", "as"):
        if name in drop:
            continue
        real = shutil.which(name)
        if real:
            os.symlink(real, bindir / name)
    return str(bindir)


def test_missing_gfortran_is_named_with_its_fix(tmp_path):
    env = dict(os.environ, PATH=_path_without(tmp_path, {"gfortran"}))
    res = subprocess.run(CLI + ["--backends", "serial"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "gfortran" in res.stdout and "apt-get install gfortran" in res.stdout
    res = subprocess.run(CLI + ["--backends", "serial", "--json"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 3
    data = json.loads(res.stdout)
    assert data["ok"] is False
    assert data["tools"]["gfortran"]["found"] is False
    gf = [m for m in data["missing"] if m["what"] == "gfortran"]
    assert gf and gf[0]["fix"] == "apt-get install gfortran" and gf[0]["required"]


def test_no_kokkos_names_the_install_command(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("Kokkos_ROOT", "KOKKOS_ROOT", "CMAKE_PREFIX_PATH")}
    env["PORT_FORTRAN_CACHE"] = str(tmp_path / "empty-cache")
    res = subprocess.run(CLI + ["--json"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 3
    data = json.loads(res.stdout)
    fixes = [m["fix"] for m in data["missing"]]
    assert "port-fortran kokkos install --backends serial,openmp" in fixes


def test_json_lists_the_dev_install_via_kokkos_root(tmp_path):
    if not os.path.isdir("/tmp/kokkos-dev"):
        pytest.skip("no /tmp/kokkos-dev on this machine")
    env = dict(os.environ, Kokkos_ROOT="/tmp/kokkos-dev", PORT_FORTRAN_CACHE=str(tmp_path / "c"))
    res = subprocess.run(CLI + ["--json"], capture_output=True, text=True, env=env, timeout=120)
    data = json.loads(res.stdout)
    dev = [k for k in data["kokkos"] if k["prefix"] == "/tmp/kokkos-dev"]
    assert dev and dev[0]["found_via"] == "Kokkos_ROOT" and dev[0]["version"] == "3.4.01"
    assert {"serial", "openmp"} <= set(dev[0]["backends"])
    assert {p["name"] for p in data["packages"]} >= {"fparser", "langgraph", "rich", "numpy"}
    if shutil.which("gfortran") and shutil.which("cmake"):
        assert res.returncode == 0 and data["ok"], data["missing"]


def test_cuda_requirements_without_gpu():
    tc = T.Toolchain(python="3", packages=[], gpus=[], kokkos=[
        KokkosInstall(prefix="/k", version="3.4.01", backends=("serial", "openmp"))])
    tc.tools = {r: T.Tool(r, f"/usr/bin/{r}", "1") for r in ("gfortran", "cmake", "c++", "hipcc", "nvidia-smi")}
    tc.tools["cmake"] = T.Tool("cmake", "/usr/bin/cmake", "3.25.1")
    tc.tools["nvcc"] = T.Tool("nvcc", "/usr/local/bin/nvcc", "13.0")
    miss = T.missing_for(tc, ["serial", "openmp", "cuda"])
    whats = {m.what: m for m in miss}
    assert set(whats) == {"Kokkos install with cuda", "NVIDIA GPU"}
    fix = whats["Kokkos install with cuda"].fix
    assert fix.startswith("port-fortran kokkos install --backends cuda --arch HOPPER90 --source")
    assert "CUDA 13" in fix
    assert T.missing_for(tc, ["serial", "openmp"]) == []


def test_unknown_backend_is_a_usage_error():
    res = subprocess.run(CLI + ["--backends", "serial,fpga"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "unknown backend 'fpga'" in res.stderr
