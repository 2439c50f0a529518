"""Proving a hybrid port exactly like a full one, independently of the translator.

A hybrid port's routine stays Fortran (a generated copy of its file whose loop nests call
Kokkos kernels). Its *modern* program is therefore the same generated Fortran driver as the
reference (``drivers.fortran_driver``: same spec, inputs, records and comparison), linked
with the hybrid file's object, the port's Kokkos library (the outlined kernels) and the C++
runtime instead of the original's object. Nothing of the translator is trusted: the driver
calls the routine by its Fortran name, as the user's program will.

Build steps (``HybridHarness.build``): the Fortran side once for every backend (the
interface module, the hybrid file with the reference's flags and the original's directory
first on the include path, the driver; a main program in the file is hidden as in the
reference), then per backend a CMake project linking those objects with the port's library
target ``<k>_kokkos`` and Kokkos (C++ linker, gfortran's runtime libraries added).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

from ..build_runner.sandbox import run_limited
from ..build_runner.toolchain import generated_source_flags, gfortran_path, strip_offload, uses_openmp
from ..errors import ToolMissing, UserError
from ..records import BuildResult
from . import drivers
from .core import HOST_BACKENDS, HOST_CXXFLAGS, REF_BUILD_LIMITS, SUPPORT_DIR, Harness
from .linking import hide_main

_fortran_lock = threading.Lock()


def is_hybrid(port_dir) -> bool:
    return (Path(port_dir) / "hybrid.json").is_file()


def load_info(port_dir) -> dict:
    p = Path(port_dir) / "hybrid.json"
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{p}: unreadable ({exc}); write the port again") from None


def make_harness(kernel, source_file, port_dir, **kw) -> Harness:
    """The harness for a port directory: :class:`HybridHarness` when it holds a hybrid port
    (``hybrid.json``), the plain :class:`Harness` otherwise."""
    if is_hybrid(port_dir):
        return HybridHarness(kernel, source_file, port_dir, **kw)
    return Harness(kernel, source_file, port_dir, **kw)


class HybridHarness(Harness):
    """:class:`Harness` whose modern program is the Fortran driver linked with the hybrid
    source and the outlined kernels (``verify``, ``bench`` and the verdicts are the base
    class's)."""

    FORTRAN_MODERN = True

    def _callee_module_reads(self, port_dir) -> list[str]:
        return list(load_info(Path(port_dir).resolve()).get("module_reads", []))

    def __init__(self, kernel, source_file, port_dir, **kw):
        super().__init__(kernel, source_file, port_dir, **kw)
        self.info = load_info(self.port_dir)
        self.hybrid_source = self.port_dir / self.info["source"]
        if not self.hybrid_source.is_file():
            raise UserError(f"{self.hybrid_source}: the hybrid source of {kernel.name} is missing; write the port again")

    def verify(self, backend: str, seeds=None):
        v = super().verify(backend, seeds)
        unseen = self.unseen_state()
        if unseen:
            v.notes.append("not compared: " + "; ".join(
                f"{n}, written by statements kept in Fortran (line {', '.join(map(str, lines))})"
                for n, lines in unseen.items()) + ": state the proof has no record of (a derived type, or a "
                "variable the front end cannot read); both programs run those statements as the original does")
        return v

    def unseen_state(self) -> dict[str, list[int]]:
        """Variables outside the routine (module, COMMON, host or SAVE state) that its kept
        Fortran statements may write and that are no record of the proof, with the lines
        that write them."""
        from ..fortran import ir

        recorded = {a.name for a in self.kernel.args}
        out: dict[str, list[int]] = {}
        for s in ir.walk(self.kernel.body):
            if not isinstance(s, ir.Unsupported):
                continue
            for n in s.writes or ():
                if not re.search(rf"(?<![\w%]){re.escape(n)}\b", s.text or "", re.IGNORECASE):
                    continue  # what a function it calls might write: no variable of the statement
                v = self.kernel.locals.get(n)
                local = v is not None and not v.save and v.common is None and getattr(v, "module", None) is None
                if n not in recorded and not local:
                    out.setdefault(n, [])
                    if s.line not in out[n]:
                        out[n].append(s.line)
        return out

    def _fortran_objects(self, timing: bool = False) -> list[Path]:
        """What the modern driver links besides the kernels (rebuilt when a source, an
        object or the flags change): the driver, harness I/O, the hybrid file in place of the
        original's object, and the original objects of the rest of the program the reference
        links too (``linking.TreeObjects``: other files' routines, module objects, stubs).
        With ``timing``, compiled with the flags the original is timed with."""
        gfortran = gfortran_path()
        if not gfortran:
            raise ToolMissing("gfortran not found: install it (e.g. apt-get install gfortran)")
        bdir = self.port_dir / "build" / ("hybrid-fortran-timing" if timing else "hybrid-fortran")
        flags = self._fflags(timing, False)
        # an edited header (the routine's text is #included) is found beside the copy, also
        # by a copy compiled elsewhere (publish.py)
        header = self.port_dir / self.info["header"] if self.info.get("header") else None
        first = ([f"-I{self.port_dir}"] if header else []) + [f"-I{d}" for d in self.info.get("include_dirs_first", [])]
        driver = drivers.fortran_driver(self.kernel)
        support = (SUPPORT_DIR / "pf_harness_io.f90").read_text()
        k = self.kernel.name
        module = self.port_dir / f"{k}_kokkos_mod.f90"
        links = self.tree_objects(timing, False).link_set(str(self.source_path), self._driver_module_files())
        links.check(self._reached_files())
        others = [Path(o) for o in links.objects[1:]]  # the kernel's own object comes first
        texts = [self.hybrid_source.read_text(errors="replace"), module.read_text(), driver, support,
                 header.read_text(errors="replace") if header else "",
                 " ".join(flags + first), str(self.hybrid_source), *links.libs,
                 *(f"{o}@{o.stat().st_mtime_ns}" for o in others)]
        key = hashlib.sha256("\0".join(texts).encode()).hexdigest()
        objs = [bdir / "pf_ref_driver.o", bdir / "pf_harness_io.o", bdir / "hybrid.o"]
        stamp = bdir / "stamp"
        with _fortran_lock:
            if stamp.exists() and stamp.read_text() == key and all(p.exists() for p in objs):
                return objs + others
            bdir.mkdir(parents=True, exist_ok=True)
            (bdir / "pf_harness_io.f90").write_text(support)
            (bdir / "pf_ref_driver.f90").write_text(driver)
            common = [gfortran, *flags, f"-J{bdir}", f"-I{bdir}", f"-I{links.mod_dir}"]
            gen = [gfortran, *generated_source_flags(flags), f"-J{bdir}", f"-I{bdir}", f"-I{links.mod_dir}"]
            steps = [
                (gen + ["-c", "pf_harness_io.f90", "-o", "pf_harness_io.o"], "harness I/O"),
                (gen + ["-c", str(module), "-o", "kokkos_mod.o"], "the interface module of the kernels"),
                (common[:1] + first + common[1:] + ["-c", str(self._public_copy(
                    bdir, self.hybrid_source.read_text(errors="replace")) or self.hybrid_source), "-o", "hybrid.o"],
                 f"the hybrid source {self.hybrid_source.name}"),
                (gen + ["-c", "pf_ref_driver.f90", "-o", "pf_ref_driver.o"], "the driver"),
            ]
            for cmd, what in steps:
                res = run_limited(cmd, bdir, REF_BUILD_LIMITS)
                if not res.ok:
                    tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-15:])
                    raise _BuildFailed(f"compiling {what} failed:\n{tail}")
                if what.startswith("the hybrid source"):
                    hide_main(bdir / "hybrid.o", "hybrid")
            for o in objs + [bdir / "kokkos_mod.o"]:
                strip_offload(o, flags)  # linked by the C++ linker
            stamp.write_text(key)
        self._hybrid_libs = list(links.libs)
        return objs + others

    def _hybrid_cmake(self, objs: list[Path], timing: bool = False) -> Path:
        src = self.port_dir / "build" / ("hybrid_src-timing" if timing else "hybrid_src")
        src.mkdir(parents=True, exist_ok=True)
        libs = list(getattr(self, "_hybrid_libs", []))
        if uses_openmp(self._fflags(timing, False)) and "-lgomp" not in libs:
            libs.append("gomp")  # the Fortran's OpenMP run-time, whatever the Kokkos backend links
        text = hybrid_cmake(self.kernel.name, str(self.port_dir), [str(p) for p in objs], libs=libs)
        p = src / "CMakeLists.txt"
        if not p.exists() or p.read_text() != text:
            tmp = p.with_name(f".CMakeLists.txt.{os.getpid()}.{threading.get_ident()}")
            tmp.write_text(text)
            os.replace(tmp, p)
        return src

    def build(self, backend: str, timing: bool = False) -> BuildResult:
        """The modern driver for ``backend`` (``timing``: its Fortran compiled with the flags
        the original is timed with, in ``build/<backend>-timing``; ``bench`` uses that one)."""
        from ..build_runner.cmake import configure_and_build
        from ..build_runner.kokkos import find_install

        t0 = time.monotonic()
        ref = self.build_reference()
        kokkos = find_install(backend)
        if kokkos is None:
            raise ToolMissing(f"no Kokkos install with the {backend} backend: run "
                              f"`port-fortran kokkos install --backends {backend}` or set Kokkos_ROOT")
        if not (self.port_dir / "CMakeLists.txt").exists():
            return BuildResult(backend, False, condensed=f"{self.port_dir}: no CMakeLists.txt (no port written)")
        stale = self.port_dir / "build" / "harness_src"
        if stale.is_dir():  # a full port's harness left there: its views timer does not apply
            shutil.rmtree(stale)
        try:
            objs = self._fortran_objects(timing)
        except _BuildFailed as exc:
            res = BuildResult(backend, False, condensed=str(exc), log=str(exc))
            if not timing:
                self._builds[backend] = res
            return res
        src = self._hybrid_cmake(objs, timing)
        bdir = self.port_dir / "build" / (f"{backend}-timing" if timing else backend)
        cmake_args = [f"-DCMAKE_Fortran_COMPILER={gfortran_path()}"]
        if backend in HOST_BACKENDS:
            flags = " ".join(x for x in (kokkos.cxx_flags, *HOST_CXXFLAGS) if x)
            cmake_args.append(f"-DCMAKE_CXX_FLAGS={flags}")
        res = configure_and_build(src, bdir, backend, kokkos, cmake_args=cmake_args, jobs=2)
        res.seconds = time.monotonic() - t0
        res.artifacts = dict(res.artifacts)
        res.artifacts["ref_driver"] = str(ref)
        if res.ok:
            exe = bdir / "pf_driver"
            if not exe.exists():
                res.ok = False
                res.condensed = (res.condensed + "\n" if res.condensed else "") + "pf_driver was not built"
            res.artifacts["pf_driver"] = str(exe)
        if not timing:
            self._builds[backend] = res
        return res

    def bench(self, backends, threads=None, repeats=None):
        """Timing as for a full port, with the modern driver's Fortran compiled like the
        timed original (-O3 -march=native): what stays Fortran is timed on equal terms."""
        saved = dict(self._builds)
        try:
            for b in backends:
                self._builds[b] = self.build(b, timing=True)
            return super().bench(backends, threads, repeats)
        finally:
            self._builds = saved


class _BuildFailed(Exception):
    pass


def hybrid_cmake(k: str, port_dir: str, objects: list[str], exe: str = "pf_driver", libs: list[str] = ()) -> str:
    """CMake project of the modern driver: the prebuilt Fortran objects linked with the
    port's kernels (``add_subdirectory``) by the C++ linker (nvcc_wrapper on CUDA), with
    gfortran's runtime libraries, which CMake knows once Fortran is enabled."""
    objs = "\n  ".join(f'"{o}"' for o in objects)
    return f"""\
# Generated by port-fortran: harness project for the hybrid port of {k} (do not edit).
cmake_minimum_required(VERSION 3.16)
project(pf_hybrid_{k} CXX Fortran)
find_package(Kokkos REQUIRED)
add_subdirectory("{port_dir}" port)
add_executable({exe}
  {objs})
set_target_properties({exe} PROPERTIES LINKER_LANGUAGE CXX)
target_link_libraries({exe} PRIVATE {k}_kokkos Kokkos::kokkos {" ".join(libs)} ${{CMAKE_Fortran_IMPLICIT_LINK_LIBRARIES}})
target_link_directories({exe} PRIVATE ${{CMAKE_Fortran_IMPLICIT_LINK_DIRECTORIES}})
"""


__all__ = ["HybridHarness", "make_harness", "is_hybrid", "load_info", "hybrid_cmake"]
