"""Which CMake builds Kokkos and the ports: the `cmake` Python package first (a current
CMake without root), a cmake on PATH only when it is new enough, PORT_FORTRAN_CMAKE when
the user names one; and without root the doctor's fixes say how to point at compilers."""
from __future__ import annotations

import os
import stat
import sys

import pytest

from port_fortran.build_runner import cmake as C
from port_fortran.build_runner import toolchain as T
from port_fortran.errors import ToolMissing


def _fake_cmake(d, version: str):
    d.mkdir(parents=True, exist_ok=True)
    exe = d / "cmake"
    exe.write_text(f"#!/bin/sh\necho 'cmake version {version}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


@pytest.fixture(autouse=True)
def _fresh():
    C._find_cmake.cache_clear()
    yield
    C._find_cmake.cache_clear()


def test_the_python_package_comes_first(monkeypatch, tmp_path):
    pytest.importorskip("cmake")
    _fake_cmake(tmp_path / "bin", "3.31.0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("PORT_FORTRAN_CMAKE", raising=False)
    info = C.cmake_info()
    assert info.source == "python-package" and "site-packages" in info.path
    assert info.describe().startswith(f"cmake {info.version} (") and "the cmake Python package" in info.describe()


def test_path_cmake_only_when_new_enough(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cmake", None)  # the package is not installed
    monkeypatch.delenv("PORT_FORTRAN_CMAKE", raising=False)
    new = _fake_cmake(tmp_path / "new", "3.27.4")
    monkeypatch.setenv("PATH", str(new.parent))
    info = C.cmake_info()
    assert (info.path, info.version, info.source) == (str(new), "3.27.4", "PATH")
    C._find_cmake.cache_clear()
    old = _fake_cmake(tmp_path / "old", "3.10.2")
    monkeypatch.setenv("PATH", str(old.parent))
    assert C.cmake_info(required=False) is None
    with pytest.raises(ToolMissing) as exc:
        C.cmake_info()
    msg = str(exc.value)
    assert "3.10.2" in msg and "pip install 'cmake>=3.21'" in msg and "no root" in msg
    # the doctor reports the old one and the fix
    tool = T.find_tool("cmake")
    assert tool.path == str(old) and tool.version == "3.10.2"
    tc = T.Toolchain(python="3", tools={r: T.Tool(r, f"/x/{r}", "12") for r in ("gfortran", "c++", "nvcc", "hipcc",
                                                                                 "nvidia-smi")})
    tc.tools["cmake"] = tool
    miss = {m.what: m for m in T.missing_for(tc, [])}
    assert "pip install 'cmake>=3.21'" in miss["cmake >= 3.16"].fix


def test_named_cmake_wins(monkeypatch, tmp_path):
    exe = _fake_cmake(tmp_path / "mine", "4.0.1")
    monkeypatch.setenv("PORT_FORTRAN_CMAKE", str(exe))
    info = C.cmake_info()
    assert (info.path, info.source) == (str(exe), "PORT_FORTRAN_CMAKE")
    C._find_cmake.cache_clear()
    monkeypatch.setenv("PORT_FORTRAN_CMAKE", str(tmp_path / "nope"))
    with pytest.raises(ToolMissing, match="PORT_FORTRAN_CMAKE=.*no such executable"):
        C.cmake_info()


def test_build_results_say_which_cmake_built_them(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\n")
    res = C.configure_and_build(tmp_path, tmp_path / "b", "serial", None)
    assert res.ok, res.log
    assert res.cmake == C.cmake_info().describe() and res.cmake.startswith("cmake ")


def test_without_root_compiler_fixes_name_modules_and_variables(monkeypatch):
    monkeypatch.setattr(T, "can_apt", lambda: False)
    assert T.compiler_fix("gfortran", "FC", "gfortran") == (
        "no root: load a compiler (e.g. `module load gcc`) so gfortran is on PATH, or set FC=/path/to/gfortran")
    tc = T.Toolchain(python="3", tools={r: T.Tool(r) for r in ("gfortran", "c++", "nvcc", "hipcc", "nvidia-smi")})
    tc.tools["cmake"] = T.Tool("cmake", "/x/cmake", "4.1.0", "python-package")
    miss = {m.what: m.fix for m in T.missing_for(tc, [])}
    assert "FC=/path/to/gfortran" in miss["gfortran"] and "CXX=/path/to/g++" in miss["C++ compiler"]
    monkeypatch.setattr(T, "can_apt", lambda: True)
    miss = {m.what: m.fix for m in T.missing_for(tc, [])}
    assert miss["gfortran"] == "apt-get install gfortran"


def test_gfortran_from_fc(monkeypatch, tmp_path):
    fc = tmp_path / "x86_64-linux-gnu-gfortran-13"
    fc.write_text("#!/bin/sh\n")
    fc.chmod(0o755)
    monkeypatch.setenv("FC", str(fc))
    assert T.gfortran_path() == str(fc)
    assert os.access(T.gfortran_path(), os.X_OK)
