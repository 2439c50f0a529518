"""`port-fortran kokkos install`: argument checks, the pinned download, idempotency."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from port_fortran.build_runner import kokkos_install as KI
from port_fortran.errors import UserError

CLI = [sys.executable, "-m", "port_fortran.cli"]
REAL_CACHE_SDIST = KI.kokkos_cache_dir() / "src" / KI.DEFAULT_SDIST_FILE  # before any test moves the cache


def run_cli(*args, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=120, env=env)


def fake_tree(root: Path, version=(4, 7, 1), lambda_option=True) -> Path:
    (root / "cmake").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "bin" / "nvcc_wrapper").write_text("#!/bin/sh\n")
    (root / "CMakeLists.txt").write_text(
        "project(Kokkos CXX)\n"
        f"set(Kokkos_VERSION_MAJOR {version[0]})\nset(Kokkos_VERSION_MINOR {version[1]})\n"
        f"set(Kokkos_VERSION_PATCH {version[2]:02d})\n")
    (root / "cmake" / "kokkos_enable_options.cmake").write_text(
        "KOKKOS_ENABLE_OPTION(CUDA_LAMBDA ON \"lambdas\")\n" if lambda_option else "# none\n")
    return root


def test_backends_are_checked():
    assert KI.parse_backends("openmp,serial") == ("serial", "openmp")
    assert KI.parse_backends("cuda") == ("serial", "cuda")
    with pytest.raises(UserError, match="one device backend"):
        KI.parse_backends("cuda,hip")
    with pytest.raises(UserError, match="unknown backend 'sycl'"):
        KI.parse_backends("serial,sycl")


def test_cmake_args_for_cuda(tmp_path):
    tree = fake_tree(tmp_path / "k")
    args = KI.kokkos_cmake_args(tree, "4.7.01", ("serial", "cuda"), "HOPPER90", "-include /s.h -arch=sm_90",
                                tmp_path / "prefix")
    assert "-DKokkos_ENABLE_CUDA=ON" in args and "-DKokkos_ENABLE_SERIAL=ON" in args
    assert "-DKokkos_ARCH_HOPPER90=ON" in args
    assert "-DKokkos_ENABLE_CUDA_LAMBDA=ON" in args
    assert f"-DCMAKE_CXX_COMPILER={tree}/bin/nvcc_wrapper" in args
    assert "-DCMAKE_CXX_FLAGS=-include /s.h -arch=sm_90" in args
    assert "-DCMAKE_CXX_STANDARD=17" in args
    tree5 = fake_tree(tmp_path / "k5", (5, 0, 0), lambda_option=False)
    args5 = KI.kokkos_cmake_args(tree5, "5.0.00", ("serial", "cuda"), "HOPPER90", "", tmp_path / "p5")
    assert "-DKokkos_ENABLE_CUDA_LAMBDA=ON" not in args5  # the option is gone in Kokkos 5
    assert "-DCMAKE_CXX_STANDARD=20" in args5


def test_source_tree_and_tarball_versions(tmp_path):
    tree = fake_tree(tmp_path / "kokkos-4.7.01")
    assert KI.kokkos_tree_version(tree) == "4.7.01"
    assert KI.check_source(tmp_path) == tmp_path  # the tree one level down is found
    tgz = tmp_path / "kokkos.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(tree, arcname="kokkos-4.7.01")
    got = KI.unpack_source(KI.check_source(tgz), tmp_path / "x")
    assert KI.kokkos_tree_version(got) == "4.7.01"


@pytest.mark.parametrize("kind", ["missing", "not-kokkos-dir", "not-kokkos-tarball", "corrupt-tarball", "bad-ext"])
def test_bad_source_is_one_line_exit_2(tmp_path, kind):
    env = dict(os.environ, PORT_FORTRAN_CACHE=str(tmp_path / "cache"))
    if kind == "missing":
        src = tmp_path / "nope"
    elif kind == "not-kokkos-dir":
        src = tmp_path / "d"
        (src / "sub").mkdir(parents=True)
        (src / "CMakeLists.txt").write_text("project(Other)\n")
    elif kind == "not-kokkos-tarball":
        src = tmp_path / "other.tar.gz"
        with tarfile.open(src, "w:gz") as tf:
            data = b"project(Other)\n"
            info = tarfile.TarInfo("other/CMakeLists.txt")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    elif kind == "corrupt-tarball":
        src = tmp_path / "junk.tgz"
        src.write_bytes(b"not a tarball at all")
    else:
        src = tmp_path / "file.txt"
        src.write_text("x")
    t0 = time.monotonic()
    res = run_cli("kokkos", "install", "--backends", "serial", "--source", str(src), env=env)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("port-fortran: error: --source")
    assert str(src) in lines[0]
    assert "Traceback" not in res.stderr
    assert time.monotonic() - t0 < 30


def test_cuda_and_hip_together_rejected():
    res = run_cli("kokkos", "install", "--backends", "cuda,hip", "--arch", "HOPPER90")
    assert res.returncode == 2 and "one device backend" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_sha256_mismatch_is_refused(tmp_path):
    junk = tmp_path / KI.DEFAULT_SDIST_FILE
    junk.write_bytes(b"tampered")
    with pytest.raises(UserError, match="does not match the pinned"):
        KI.verify_sha256(junk, KI.DEFAULT_SDIST_SHA256)


def test_download_verify_and_extract_offline(tmp_path):
    """The pip path without the network: pip reads the sdist from a local --find-links dir.
    A corrupt file already in the destination is replaced by a verified download."""
    if not REAL_CACHE_SDIST.is_file():
        pytest.skip("no cached pykokkos-base sdist (make kokkos downloads it)")
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy(REAL_CACHE_SDIST, links / KI.DEFAULT_SDIST_FILE)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / KI.DEFAULT_SDIST_FILE).write_bytes(b"corrupt")
    msgs = []
    sdist = KI.fetch_default_sdist(dest, pip_args=["--no-index", "--find-links", str(links)], progress=msgs.append)
    assert msgs and "pip" in msgs[0]
    assert KI.sha256_of(sdist) == KI.DEFAULT_SDIST_SHA256
    tree = KI.extract_default_kokkos(sdist, tmp_path / "x")
    assert KI.kokkos_tree_version(tree) == "3.4.01"
    assert (tree / "bin" / "nvcc_wrapper").is_file()
    # a second fetch uses the verified file: no pip
    msgs.clear()
    assert KI.fetch_default_sdist(dest, pip_args=["--no-index"], progress=msgs.append) == sdist and not msgs


def test_sdist_from_a_wheelhouse_named_by_pip_find_links(tmp_path, monkeypatch):
    """Offline machines point pip at a wheelhouse with PIP_FIND_LINKS; the Kokkos source is
    taken from there (checked against the pinned sha256) without running pip."""
    if not REAL_CACHE_SDIST.is_file():
        pytest.skip("no cached pykokkos-base sdist (make kokkos downloads it)")
    house = tmp_path / "wheelhouse"
    house.mkdir()
    shutil.copy(REAL_CACHE_SDIST, house / KI.DEFAULT_SDIST_FILE)
    monkeypatch.setenv("PIP_FIND_LINKS", f"/nonexistent file://{house}")
    msgs = []
    sdist = KI.fetch_default_sdist(tmp_path / "dest", pip_args=["--no-index"], progress=msgs.append)
    assert msgs == [f"[kokkos] Kokkos {KI.DEFAULT_VERSION} source from {house / KI.DEFAULT_SDIST_FILE}"]
    assert KI.sha256_of(sdist) == KI.DEFAULT_SDIST_SHA256
    (house / KI.DEFAULT_SDIST_FILE).write_bytes(b"tampered")
    sdist.unlink()
    with pytest.raises(UserError, match="does not match the pinned"):
        KI.fetch_default_sdist(tmp_path / "dest", progress=msgs.append)


@pytest.mark.integration
def test_second_install_is_a_fast_no_op():
    """Against the install `make kokkos` made: the same request returns in under 2 s."""
    want = {"source": KI.DEFAULT_SDIST, "backends": ["serial", "openmp"], "arch": "", "cxx_flags": ""}
    if KI.find_existing(want, KI.default_prefix(KI.DEFAULT_VERSION, ("serial", "openmp"), None)) is None:
        pytest.skip("Kokkos serial+openmp not installed in the cache (make kokkos)")
    exe = Path(sys.executable).with_name("port-fortran")
    cmd = [str(exe)] if exe.exists() else CLI
    t0 = time.monotonic()
    res = subprocess.run(cmd + ["kokkos", "install", "--backends", "openmp,serial"], capture_output=True,
                         text=True, timeout=60)
    elapsed = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("already installed at ")
    assert elapsed < 2.0, f"second install took {elapsed:.2f} s"
