"""Incremental porting, end to end: the legacy driver program fortran_kernels/driver/
timeloop.f90 (several kernels called in a time loop) relinked against the rules ports
through the generated ``<k>_kokkos_mod`` modules prints the same checksum as with the
original routines. The test writes a copy of the driver that ``use``s the modules and calls
``<k>_kokkos`` for each kernel that was ported; the user's sources are never modified.
Kernels the rules refuse (e.g. COMMON state) keep calling the original."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.records import TranslationRefused
from port_fortran.translate import translate_kernel, write_port

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).parent.parent / "fortran_kernels"
DRIVER = SAMPLES / "driver" / "timeloop.f90"
OBJECT_SOURCES = ["fields.f90", "stencil2d.f90", "blas1.f", "heat.f"]


def _run(cmd, cwd, timeout=900):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def _checksum(out: str) -> float:
    m = re.search(r"CHECKSUM\s+(\S+)", out)
    assert m, out
    return float(m.group(1))


def _kokkos_prefix():
    from port_fortran.build_runner.kokkos import find_install

    inst = find_install("openmp") or find_install("serial")
    if inst is not None:
        return Path(inst.prefix)
    if Path("/tmp/kokkos-dev/include/Kokkos_Core.hpp").is_file():
        return Path("/tmp/kokkos-dev")
    pytest.skip("no Kokkos install")


def _called_kernels(driver_text: str, names: set[str]) -> list[str]:
    low = driver_text.lower()
    return sorted(n for n in names if re.search(rf"\b{n}\s*\(", low))


def relinked_driver(text: str, ported: dict[str, str]) -> str:
    """The driver calling ``<k>_kokkos`` for each ported kernel (``ported``: name -> kind)."""
    lines = text.splitlines()
    out = []
    uses = [f"  use {k}_kokkos_mod" for k in sorted(ported)]
    inserted = False
    for line in lines:
        low = line.lower()
        if not inserted and re.match(r"\s*implicit\s+none", low):
            out += uses
            inserted = True
        m = re.match(r"(\s*(?:double precision|real\(8\)|real\(kind=8\))\s*,\s*external\s*::\s*)(.*)", line, re.I)
        if m:
            keep = [n for n in (x.strip() for x in m.group(2).split(",")) if n.lower() not in ported]
            if keep:
                out.append(m.group(1) + ", ".join(keep))
            continue
        for k in ported:
            line = re.sub(rf"\b{k}\s*\(", f"{k}_kokkos(", line, flags=re.I)
        out.append(line)
    assert inserted, "the driver has no IMPLICIT NONE to put the USE lines before"
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("backend", ["openmp"])
def test_relinked_driver_gives_the_same_checksum(tmp_path, backend):
    if not shutil.which("gfortran"):
        pytest.skip("gfortran needed")
    prefix = _kokkos_prefix()
    libdir = next((d for d in (prefix / "lib", prefix / "lib64") if (d / "libkokkoscore.a").exists()
                   or (d / "libkokkoscore.so").exists()), None)
    assert libdir is not None
    inc = SAMPLES / "include"
    orig = tmp_path / "orig"
    orig.mkdir()
    objs = []
    for src in OBJECT_SOURCES:
        flags = ["-std=legacy"] if src.endswith(".f") else []
        _run(["gfortran", "-O2", *flags, f"-I{inc}", "-J", str(orig), "-c", str(SAMPLES / src),
              "-o", str(orig / (Path(src).stem + ".o"))], orig)
        objs.append(str(orig / (Path(src).stem + ".o")))
    _run(["gfortran", "-O2", f"-I{orig}", str(DRIVER), *objs, "-o", str(orig / "timeloop")], orig)
    reference = _checksum(_run([str(orig / "timeloop")], orig, timeout=300))

    # translate what the driver calls
    text = DRIVER.read_text()
    ported: dict[str, str] = {}
    refused: dict[str, str] = {}
    port_objs = []
    ports = tmp_path / "ports"
    for src in OBJECT_SOURCES:
        sf = parse_file(str(SAMPLES / src), include_dirs=(str(inc),))
        for k in sf.kernels:
            if k.name not in _called_kernels(text, {k.name}):
                continue
            try:
                port = translate_kernel(k, sf)
            except TranslationRefused as exc:
                refused[k.name] = str(exc.diagnostics[0])
                continue
            d = ports / k.name
            write_port(port, d)
            ported[k.name] = k.kind
    assert {"jacobi2d", "resid2d", "daxpy", "dscal", "ddot", "dnrm2"} <= set(ported), (ported, refused)

    build = tmp_path / "build"
    build.mkdir()
    cxx = os.environ.get("CXX", "g++")
    for k in ported:
        d = ports / k
        _run([cxx, "-std=c++17", "-O2", "-fopenmp", f"-DPF_BACKEND_{backend.upper()}", "-isystem",
              str(prefix / "include"), f"-I{d}", "-c", str(d / f"{k}.kokkos.cpp"), "-o", str(build / f"{k}.o")],
             build)
        _run(["gfortran", "-O2", "-J", str(build), "-c", str(d / f"{k}_kokkos_mod.f90"),
              "-o", str(build / f"{k}_mod.o")], build)
        port_objs += [str(build / f"{k}.o"), str(build / f"{k}_mod.o")]
    driver = build / "timeloop_kokkos.f90"
    driver.write_text(relinked_driver(text, ported))
    _run(["gfortran", "-O2", f"-I{orig}", f"-I{build}", str(driver), *objs, *port_objs,
          f"-L{libdir}", "-lkokkoscore", "-ldl", "-lstdc++", "-fopenmp", "-o", str(build / "timeloop_kokkos")], build)
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
    res = subprocess.run([str(build / "timeloop_kokkos")], cwd=build, capture_output=True, text=True,
                         timeout=300, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    got = _checksum(res.stdout)
    # the ports' reductions may sum in another order: agree to ~1e-12 relative
    assert got == pytest.approx(reference, rel=1e-10, abs=1e-12), (got, reference, sorted(ported), refused)


def test_relinked_driver_text_rewrites_calls_and_externals():
    text = ("program p\n  use m\n  implicit none\n  double precision, external :: ddot, dnrm2\n"
            "  x = ddot(n, a, 1, b, 1) + dnrm2(n, a, 1)\n  call daxpy(n, 1.0d0, a, 1, b, 1)\nend program p\n")
    out = relinked_driver(text, {"ddot": "function", "daxpy": "subroutine"})
    assert "use daxpy_kokkos_mod" in out and "use ddot_kokkos_mod" in out
    assert "double precision, external :: dnrm2" in out
    assert "ddot_kokkos(n, a, 1, b, 1) + dnrm2(n, a, 1)" in out
    assert "call daxpy_kokkos(n" in out
    assert out.index("use ddot_kokkos_mod") < out.index("implicit none")
