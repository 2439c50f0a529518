"""The original objects a driver links: the kernel's file and every file of the tree whose
routines or module entities it needs, transitively, compiled the way the tree compiles.

``TreeObjects(program, root, flags_for)`` compiles files into ``root`` (one object per
file, module files into ``root/mod`` with ``-J``, each module's file before its users, as
``Program.compile_order`` says), and :meth:`TreeObjects.link_set` gives, for the kernel's
file, the objects to link: those whose symbols the previous ones leave undefined, found
with ``nm`` and mapped to files by the program (``Program.file_for_symbol``). Main
programs in those objects are renamed away (the driver has its own). Symbols no file of
the tree defines (a library routine, MPI, a C function no C source of the tree defines:
``csources``), or that only files which do not
compile define, get a stub that stops with a message naming the routine if it is ever
called: routines the kernel never reaches stay linkable, and one it does reach fails
loudly (or, for a file that does not compile, is refused with that file's error). Everything is cached in ``root`` (stamps
with the sources, flags and compiler), shared by every kernel of a run and safe across
processes (a lock file).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..build_runner.sandbox import Limits, run_limited
from ..build_runner.toolchain import strip_offload
from ..errors import ToolMissing, UserError
from .csources import compile_c, is_c

COMPILE_LIMITS = Limits(wall_s=600.0, cpu_s=None, mem_mb=None)
_UNDEF_RE = re.compile(r"undefined reference to [`'\u2018]([^'`\u2019]+)['\u2019]")


@dataclass
class LinkSet:
    """What a driver links for one kernel's file (the kernel's own object first)."""

    objects: list[Path]
    mod_dir: Path
    libs: list[str] = field(default_factory=list)  # e.g. -lgomp for omp_* routines
    stubs: list[str] = field(default_factory=list)  # symbols no file defines (stubbed)
    files: list[str] = field(default_factory=list)  # the source files behind ``objects``
    archive: Optional[Path] = None  # the same objects as a static library (port drivers)
    # files that define something the objects refer to but do not compile: left out (their
    # routines stubbed) -- a kernel that reaches one of them cannot be built (``check``)
    dropped: dict[str, str] = field(default_factory=dict)

    def check(self, reached_files) -> None:
        """Raise the compile error of a left-out file the kernel really calls into."""
        for f in reached_files:
            for g, msg in self.dropped.items():
                if os.path.abspath(g) == os.path.abspath(f):
                    raise UserError(msg)

    def notes(self) -> list[str]:
        out = []
        if len(self.files) > 1:
            out.append(f"links the original objects of {len(self.files)} files: "
                       + ", ".join(Path(f).name for f in self.files))
        if self.stubs:
            out.append("no file of the tree defines " + ", ".join(_routine_name(s) for s in self.stubs)
                       + " (stubbed: the reference stops if it calls them)")
        for f in self.dropped:
            out.append(f"{f} does not compile and is left out (the kernel does not call into it)")
        return out


def _routine_name(sym: str) -> str:
    m = re.match(r"^__(\w+?)_MOD_(\w+)$", sym)
    if m:
        return f"{m.group(1)}::{m.group(2)}"
    return sym[:-1] if sym.endswith("_") else sym


def _tool(name: str) -> str:
    p = shutil.which(name)
    if p is None:
        raise ToolMissing(f"{name} not found on PATH (binutils, installed with gfortran): the harness needs it "
                          "to link the original routines")
    return p


def _hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode(errors="replace"))
        h.update(b"\0")
    return h.hexdigest()


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined, undefined) global symbols of an object file."""
    out = subprocess.run([_tool("nm"), "-P", "-g", str(obj)], capture_output=True, text=True)
    if out.returncode != 0:
        raise UserError(f"{obj}: nm failed: {out.stderr.strip()[:300]}")
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        (undefined if parts[1] == "U" else defined).add(parts[0])
    return defined, undefined


def c_symbols(c_files: Sequence, root: Path, flags: Sequence[str]
              ) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
    """({symbol: C file defining it}, [why a file was left out], {C file: the symbols it
    leaves undefined}) for the tree's C sources, each compiled once into ``root``. The
    first file defining a symbol wins."""
    defined: dict[str, str] = {}
    problems: list[str] = []
    needs: dict[str, list[str]] = {}
    root = Path(root)
    for i, f in enumerate(c_files):
        try:
            obj = compile_c(f, root / f"{i:03d}_{Path(f).stem}.o", flags, root)
            d, u = symbols(obj)
        except UserError as exc:
            problems.append(f"{exc}; the routines it defines are stubbed")
            continue
        for s in sorted(d):
            defined.setdefault(s, os.path.abspath(str(f)))
        needs[os.path.abspath(str(f))] = sorted(u)
    return defined, problems, needs


def hide_main(obj: Path, tag: str) -> bool:
    """A main program in an object would clash with the driver's: rename its symbols in the
    object (the source itself is never touched), uniquely per object. True if it had one."""
    defined, _ = symbols(obj)
    args = []
    for s in ("main", "MAIN__"):
        if s in defined:
            args += ["--redefine-sym", f"{s}=pf_user_{tag}_{s}"]
    if args:
        subprocess.run([_tool("objcopy"), *args, str(obj)], check=True)
    return bool(args)


class TreeObjects:
    """Objects of the program's files for one set of flags (see the module docstring).
    ``flags_for(path)`` is the full gfortran flag list for a file (optimisation, OpenMP,
    preprocessor, include dirs, defines)."""

    def __init__(self, program, root: Path, flags_for: Callable[[str], list[str]], gfortran: str,
                 link_flags: tuple[str, ...] = (), limits: Limits = COMPILE_LIMITS):
        self.program = program
        self.root = Path(root)
        self.mod_dir = self.root / "mod"
        self.flags_for = flags_for
        self.gfortran = gfortran
        self.link_flags = tuple(link_flags)  # e.g. -fopenmp for the trial link
        self.limits = limits
        self._keys: dict[str, str] = {}

    # ------------------------------------------------------------------ objects

    @contextlib.contextmanager
    def _locked(self):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def object_path(self, path: str) -> Path:
        p = os.path.abspath(path)
        return self.root / f"{Path(p).stem}-{_hash(p)[:10]}.o"

    def _key(self, path: str, stack: tuple = ()) -> str:
        p = os.path.abspath(path)
        if p in self._keys:
            return self._keys[p]
        sf = self.program.files.get(p)
        parts = [self.gfortran, p, " ".join(self.flags_for(p)), _read(p)]
        for inc in (sf.includes if sf is not None else []):
            parts.append(_read(inc))
        for g in self.program.module_files(p):
            if g not in stack:
                parts.append(self._key(g, stack + (p,)))
        key = _hash(*parts)
        self._keys[p] = key
        return key

    def compile_locked(self, path: str) -> Path:
        """:meth:`compile` under the tree's lock (other processes of a run share the tree)."""
        with self._locked():
            return self.compile(path)

    def compile(self, path: str, why: str = "", _stack: tuple = ()) -> Path:
        """The object of one file (module files it uses compiled first); cached."""
        p = os.path.abspath(path)
        for g in self.program.module_files(p):
            if g not in _stack:
                self.compile(g, f"it defines a module {Path(p).name} uses", _stack + (p,))
        obj = self.object_path(p)
        stamp, failed = obj.with_suffix(".key"), obj.with_suffix(".failed")
        key = self._key(p)
        if obj.exists() and stamp.exists() and stamp.read_text() == key:
            return obj
        if failed.exists():  # compiled before with the same sources and flags, and failed
            data = json.loads(failed.read_text())
            if data.get("key") == key:
                raise UserError(data["message"])
        self.mod_dir.mkdir(parents=True, exist_ok=True)
        if is_c(p):  # a C source of the tree (a timer): the C compiler, the tree's -I/-D
            try:
                compile_c(p, obj, self.flags_for(p), self.root, self.limits)
            except UserError as exc:
                failed.write_text(json.dumps({"key": key, "message": str(exc)}))
                raise
            hide_main(obj, _hash(p)[:8])
            stamp.write_text(key)
            return obj
        cmd = [self.gfortran, *self.flags_for(p), f"-J{self.mod_dir}", f"-I{self.mod_dir}", "-c", p, "-o", str(obj)]
        res = run_limited(cmd, self.root, self.limits)
        if not res.ok:
            tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-15:])
            missing = self.program.external_modules(p)
            hint = (f"module(s) {', '.join(missing)} are used but no file of the tree defines them: add the "
                    "files that do, or -I the directory of their .mod files") if missing else \
                "check the include dirs (-I), defines (-D) and Fortran flags given for this file"
            msg = (f"{self.program.given.get(p, p)}: compiling the original failed"
                   f"{' (needed because ' + why + ')' if why else ''}:\n{tail}\n{hint}")
            failed.write_text(json.dumps({"key": key, "message": msg}))
            raise UserError(msg)
        hide_main(obj, _hash(p)[:8])
        strip_offload(obj, self.flags_for(p))  # port drivers link these with the C++ linker
        stamp.write_text(key)
        if failed.exists():
            failed.unlink()
        return obj

    # ------------------------------------------------------------------ link sets

    def link_set(self, path: str, also: tuple = ()) -> LinkSet:
        """Objects for a driver of a kernel of ``path``: its file and, transitively, the
        files defining what those objects leave undefined; stubs for what none defines.
        ``also``: files the driver itself needs (the modules of the module variables it
        sets), linked after the kernel's own."""
        with self._locked():
            return self._link_set(os.path.abspath(path), tuple(os.path.abspath(f) for f in also))

    def _link_set(self, kfile: str, also: tuple = ()) -> LinkSet:
        files = [kfile] + [f for f in dict.fromkeys(also) if f != kfile]
        why = {kfile: ""}
        why.update({f: "the driver sets a variable of a module it defines" for f in files[1:]})
        objects: list[Path] = []
        defined: set[str] = set()
        undefined: set[str] = set()
        dropped: dict[str, str] = {}
        i = 0
        while i < len(files):
            f = files[i]
            i += 1
            try:
                obj = self.compile(f, why[f])
            except UserError as exc:
                if f == kfile:
                    raise
                dropped[self.program.given.get(f, f)] = str(exc)  # its routines get stubs
                continue
            objects.append(obj)
            d, u = symbols(obj)
            defined |= d
            undefined |= u
            for sym in sorted(u):
                if sym in defined:
                    continue
                g = self.program.file_for_symbol(sym)
                if g is not None and g not in why:
                    files.append(g)
                    why[g] = f"it defines {_routine_name(sym)}, which {Path(f).name} calls"
        missing = sorted(s for s in undefined - defined)
        ldir = self.root / "links" / f"{Path(kfile).stem}-{_hash(kfile, *also)[:10]}"
        key = _hash(*(o.with_suffix(".key").read_text() for o in objects), " ".join(self.link_flags), *sorted(dropped))
        meta = ldir / "link.json"
        if meta.exists():
            try:
                data = json.loads(meta.read_text())
                if data.get("key") == key:
                    return self._from_meta(data, ldir)
            except (json.JSONDecodeError, KeyError):
                pass
        ldir.mkdir(parents=True, exist_ok=True)
        libs, stubs = self._unresolved(objects, missing, ldir)
        extra = []
        if stubs:
            extra.append(self._stub_object(stubs, ldir))
        archive = ldir / "libpf_tree.a"
        if archive.exists():
            archive.unlink()
        subprocess.run([_tool("ar"), "rcs", str(archive), *map(str, objects + extra)], check=True)
        data = {"key": key, "objects": [str(o) for o in objects + extra], "libs": libs, "stubs": stubs,
                "files": [self.program.given.get(f, f) for f in files if self.program.given.get(f, f) not in dropped],
                "dropped": dropped}
        meta.write_text(json.dumps(data, indent=1) + "\n")
        return self._from_meta(data, ldir)

    def _from_meta(self, data: dict, ldir: Path) -> LinkSet:
        return LinkSet([Path(o) for o in data["objects"]], self.mod_dir, list(data["libs"]), list(data["stubs"]),
                       list(data["files"]), ldir / "libpf_tree.a", dict(data.get("dropped", {})))

    def _unresolved(self, objects: list[Path], missing: list[str], ldir: Path) -> tuple[list[str], list[str]]:
        """Of the symbols the objects leave undefined, those the compiler's run-time
        libraries do not provide: found by linking them with an empty main program."""
        if not missing:
            return [], []
        probe = ldir / "pf_probe.f90"
        probe.write_text("program pf_probe\nend program pf_probe\n")
        libs: list[str] = []
        if any(s.startswith("omp_") for s in missing) and "-fopenmp" not in self.link_flags:
            libs.append("-lgomp")  # OpenMP run-time routines (a timer) called by code built without -fopenmp
        cmd = [self.gfortran, *self.link_flags, str(probe), *map(str, objects), *libs, "-o", str(ldir / "pf_probe")]
        res = run_limited(cmd, ldir, self.limits)
        if res.ok:
            return libs, []
        text = (res.stderr or "") + (res.stdout or "")
        stubs = sorted(set(_UNDEF_RE.findall(text)))
        if not stubs:
            tail = "\n".join(text.strip().splitlines()[-15:])
            raise UserError(f"linking the original objects ({', '.join(o.name for o in objects)}) failed:\n{tail}")
        return libs, stubs

    def _stub_object(self, stubs: list[str], ldir: Path) -> Path:
        lines = ["/* Generated by port-fortran: routines no file of the tree defines. */",
                 "#include <stdio.h>", "#include <stdlib.h>"]
        for s in stubs:
            if not re.match(r"^[A-Za-z_]\w*$", s):
                raise UserError(f"cannot stub the undefined symbol {s!r}: give the library that defines it")
            lines.append(f'void {s}(void) {{ fprintf(stderr, "port-fortran: {_routine_name(s)} is not defined '
                         f'by any file of the tree (external); the original cannot run it here\\n"); exit(86); }}')
        src = ldir / "pf_stubs.c"
        src.write_text("\n".join(lines) + "\n")
        obj = ldir / "pf_stubs.o"
        cmd = [self.gfortran, "-c", str(src), "-o", str(obj)]
        res = run_limited(cmd, ldir, self.limits)
        if not res.ok:
            raise UserError(f"compiling stubs for {', '.join(stubs)} failed: {(res.stderr or '').strip()[-500:]}")
        return obj


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def libgfortran(gfortran: str) -> Optional[str]:
    """The full path of libgfortran (for C++ drivers that link Fortran objects)."""
    for name in ("libgfortran.so", "libgfortran.a"):
        out = subprocess.run([gfortran, f"-print-file-name={name}"], capture_output=True, text=True)
        p = out.stdout.strip()
        if out.returncode == 0 and os.path.isabs(p) and os.path.exists(p):
            return p
    return None
