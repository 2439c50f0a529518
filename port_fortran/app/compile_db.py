"""Compiler command lines as compile records (what compile_commands.json is for C).

The wrapper (:mod:`.wrapper`) appends one JSON line per compiler invocation of the
application's build to a log: the working directory and the argument vector. This module
reads such a log (:func:`read_log`) and turns each invocation into a
:class:`CompileCommand`: the Fortran sources it compiles, include directories, macro
definitions, the Fortran flags that change what the source means, whether it links and
what. Pure functions over argument lists; paths are made absolute against the command's
working directory.

:func:`file_settings` maps each source to the :class:`fortran.program.FileSettings` it is
built with (the last command that compiled it wins, as in a build that recompiles), which
is what the program model, the harness and the ports use.
"""
from __future__ import annotations

import json
import os
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Optional

FORTRAN_SUFFIXES = (".f", ".for", ".ftn", ".f77", ".fpp", ".f90", ".f95", ".f03", ".f08")
CPP_SUFFIXES = (".F", ".FOR", ".FTN", ".F77", ".FPP", ".F90", ".F95", ".F03", ".F08", ".fpp")
OBJECT_SUFFIXES = (".o", ".obj", ".a", ".so", ".lo")

# options whose value is the next argument (when not glued to the option)
_WITH_VALUE = {"-o", "-I", "-D", "-U", "-J", "-L", "-l", "-x", "-include", "-isystem", "-iquote", "-idirafter",
               "-MF", "-MT", "-MQ", "-module", "-Xlinker", "-u", "-T", "-z", "-B", "-imacros", "-soname"}
# modes in which nothing is compiled or linked (queries, dependency generation, preprocessing)
_NO_OUTPUT = {"-E", "-M", "-MM", "-fsyntax-only", "--version", "-v", "-dumpversion", "-dumpmachine",
              "-dumpfullversion", "--help", "-print-search-dirs", "-print-multiarch"}
# Fortran flags that change what a source means: kept for the program model and the harness
_MEANING_PREFIXES = ("-ffixed-line-length", "-ffree-line-length", "-ffixed-form", "-ffree-form", "-std=",
                     "-fno-range-check", "-fallow-argument-mismatch", "-fallow-invalid-boz", "-fdefault-",
                     "-freal-", "-finteger-", "-fno-automatic", "-frecursive", "-fcoarray=", "-fimplicit-none",
                     "-fdollar-ok", "-fbackslash", "-fd-lines-as-", "-fcray-pointer", "-fdec", "-fmax-stack-var-size",
                     "-fno-underscoring", "-fsecond-underscore", "-fno-second-underscore", "-fopenacc", "-fno-sign-zero",
                     "-fprotect-parens", "-fno-protect-parens", "-ffast-math", "-fno-fast-math", "-ffp-contract",
                     "-fexternal-blas", "-fblas-matmul-limit", "-finit-", "-cpp", "-nocpp", "-fpp",
                     "-fallow-", "-fno-align-commons", "-falign-commons")


def is_fortran(path: str) -> bool:
    return Path(path).suffix.lower() in FORTRAN_SUFFIXES


@dataclass
class CompileCommand:
    """One compiler invocation of the build."""

    directory: str  # working directory of the command (absolute)
    arguments: list[str]  # as invoked; arguments[0] is the compiler as the build named it
    sources: list[str] = field(default_factory=list)  # Fortran sources, absolute
    other_sources: list[str] = field(default_factory=list)  # C and other sources the command compiles
    output: Optional[str] = None  # -o, absolute
    include_dirs: list[str] = field(default_factory=list)  # absolute, in order
    defines: dict[str, str] = field(default_factory=dict)
    fflags: list[str] = field(default_factory=list)  # flags that change what a Fortran source means
    openmp: bool = False
    mod_dirs: list[str] = field(default_factory=list)  # -J (where .mod files go)
    compile_only: bool = False  # -c
    links: bool = False  # produces an executable or shared object from objects
    inputs: list[str] = field(default_factory=list)  # objects and archives linked, absolute
    libraries: list[str] = field(default_factory=list)  # -l names
    query: bool = False  # --version, -E, -M: nothing compiled or linked

    def to_json(self) -> dict:
        """One compile_commands.json entry per source (the first), and the parsed fields."""
        d = asdict(self)
        d["file"] = self.sources[0] if self.sources else (self.other_sources[0] if self.other_sources else "")
        return d


def _abs(directory: str, p: str) -> str:
    return os.path.normpath(os.path.join(directory, p))


def parse_command(directory: str, argv: list[str]) -> CompileCommand:
    """What one compiler command line does (gfortran/ifort/nvfortran-style options)."""
    cmd = CompileCommand(directory=os.path.abspath(directory), arguments=list(argv))
    args = list(argv[1:])
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None

        def value(opt: str) -> Optional[str]:
            nonlocal i
            if a == opt:
                i += 1
                return nxt
            return a[len(opt):]

        if a in _NO_OUTPUT:
            cmd.query = True
        elif a == "-c":
            cmd.compile_only = True
        elif a == "-S":
            cmd.compile_only = True
        elif a == "-o" or (a.startswith("-o") and len(a) > 2 and not a.startswith("-openmp")):
            v = value("-o")
            if v:
                cmd.output = _abs(cmd.directory, v)
        elif a.startswith("-I"):
            v = value("-I")
            if v:
                cmd.include_dirs.append(_abs(cmd.directory, v))
        elif a.startswith("-D"):
            v = value("-D")
            if v:
                name, eq, val = v.partition("=")
                cmd.defines[name] = val if eq else "1"
        elif a.startswith("-U"):
            v = value("-U")
            if v:
                cmd.defines.pop(v, None)
        elif a.startswith("-J") or a == "-module":
            v = value("-module") if a == "-module" else value("-J")
            if v:
                d = _abs(cmd.directory, v)
                cmd.mod_dirs.append(d)
                cmd.include_dirs.append(d)  # gfortran also looks for modules there
        elif a.startswith("-l"):
            v = value("-l")
            if v:
                cmd.libraries.append(v)
        elif a in ("-fopenmp", "-qopenmp", "-openmp", "-mp", "-fiopenmp"):
            cmd.openmp = True
        elif a in _WITH_VALUE:
            i += 1  # an option with a separate value that does not matter here
        elif a.startswith("-"):
            if a.startswith(_MEANING_PREFIXES):
                cmd.fflags.append(a)
        else:
            p = _abs(cmd.directory, a)
            if is_fortran(a):
                cmd.sources.append(p)
            elif Path(a).suffix in OBJECT_SUFFIXES or ".so." in Path(a).name:
                cmd.inputs.append(p)
            elif Path(a).suffix in (".c", ".cc", ".cpp", ".cxx", ".C", ".s", ".S"):
                cmd.other_sources.append(p)
        i += 1
    if not cmd.query and not cmd.compile_only and (cmd.inputs or cmd.sources or cmd.other_sources):
        cmd.links = True
    return cmd


def read_log(path) -> list[CompileCommand]:
    """The commands the wrapper recorded (one JSON object per line: cwd, argv)."""
    out = []
    p = Path(path)
    if not p.is_file():
        return out
    for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
            out.append(parse_command(rec["cwd"], list(rec["argv"])))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            from ..errors import UserError
            raise UserError(f"{p}:{n}: not a record of the compiler wrapper ({exc}); delete it and build again")
    return out


def within(path: str, root: str) -> bool:
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False


def relevant(commands: Iterable[CompileCommand], root: str) -> list[CompileCommand]:
    """The build's own commands: not queries, not a build system's compiler checks
    (CMake's ``CMakeFiles/`` try-compiles), with sources or objects under ``root``."""
    out = []
    for c in commands:
        if c.query:
            continue
        srcs = c.sources + c.other_sources
        if srcs and all("/CMakeFiles/" in s and ("CompilerId" in s or "CMakeTmp" in s or "/CMakeScratch/" in s)
                        for s in srcs):
            continue
        if "/CMakeFiles/CMakeTmp" in c.directory or "/CMakeFiles/CMakeScratch" in c.directory \
                or "CompilerIdFortran" in c.directory:
            continue
        if any(within(s, root) for s in srcs) or (c.links and c.output and within(c.output, root)):
            out.append(c)
    return out


@dataclass
class SourceRecord:
    """How the build compiles one Fortran source (the last command that did)."""

    path: str
    include_dirs: list[str]
    defines: dict[str, str]
    fflags: list[str]
    openmp: bool
    command: list[str]
    directory: str


def sources_of(commands: Iterable[CompileCommand], root: str) -> dict[str, SourceRecord]:
    """Every Fortran source under ``root`` the build compiled, with its settings, in the
    order first compiled."""
    out: dict[str, SourceRecord] = {}
    for c in commands:
        for s in c.sources:
            if not within(s, root):
                continue
            rec = SourceRecord(s, list(dict.fromkeys(c.include_dirs)), dict(c.defines),
                               list(dict.fromkeys(c.fflags)), c.openmp, list(c.arguments), c.directory)
            out[s] = rec  # a recompile: the last settings win, the first position stays
    return out


def file_settings(records: dict[str, SourceRecord]):
    """``{path: FileSettings}`` for the program model (include dirs, defines, flags)."""
    from ..fortran.program import FileSettings

    return {p: FileSettings.of(r.include_dirs, r.defines, r.fflags) for p, r in records.items()}


def compile_commands_json(commands: Iterable[CompileCommand], root: str) -> list[dict]:
    """compile_commands.json entries (one per source file compiled, Fortran and other)."""
    out = []
    for c in commands:
        for s in c.sources + c.other_sources:
            if within(s, root):
                out.append({"directory": c.directory, "file": s, "arguments": list(c.arguments),
                            "command": " ".join(shlex.quote(a) for a in c.arguments),
                            **({"output": c.output} if c.output else {})})
    return out


__all__ = ["CompileCommand", "SourceRecord", "parse_command", "read_log", "relevant", "sources_of", "file_settings",
           "compile_commands_json", "is_fortran", "within", "FORTRAN_SUFFIXES"]
