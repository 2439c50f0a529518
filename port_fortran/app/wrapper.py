"""The compiler wrapper of an application: ``OUT/bin/pf-fortran`` and the shims.

In the spirit of ``mpif90`` and ``nvcc_wrapper``: a command that compiles as the Fortran
compiler does, so a build only changes its compiler. Two modes, chosen by ``PF_APP_MODE``:

* ``record`` (the original build, run by ``port-fortran app``): run the real compiler the
  build named, unchanged, after appending the command (working directory and arguments) to
  the log named by ``PF_APP_RECORD`` -- the compile commands the tool ports from;
* ``modern`` (the default: the modern build, yours or the tool's): compile with the
  compiler the ports were built with, adding the directory of the ports' Fortran interface
  modules to every compile, and at link time the ports' library, Kokkos and the C++
  runtime of the backend chosen by ``PORT_FORTRAN_BACKEND`` (default: the one written in
  ``pf-fortran.json``). With ``PF_APP_RECORD`` set it records too.

Builds that name their compiler inside a makefile (``F77 = gfortran``) are caught as
ccache does it: ``OUT/shims/`` holds links named like compilers (gfortran, f77, f90, f95,
...) to this wrapper, first on ``PATH`` during a build; the name it was called by says
which real compiler to run in ``record`` mode (looked up on ``PATH`` without the shims).

The script is small on purpose (standard library only, besides the command-line parser
of :mod:`.compile_db`): it runs once per compiler invocation of the build.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Optional

#: names the shims take (compilers a makefile may name)
SHIM_NAMES = ("gfortran", "f77", "f90", "f95", "fort77", "g77", "g95", "ifort", "ifx", "nvfortran", "pgf90",
              "pgfortran", "flang", "flang-new", "xlf", "xlf90", "mpif77", "mpif90", "mpifort")


def _config(path: str) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        sys.stderr.write(f"pf-fortran: cannot read its configuration {path} ({exc}); write it again with "
                         "`port-fortran app`\n")
        raise SystemExit(2)


# names a build may give gfortran by: when none of them is on PATH, the FC the user gave (a
# gfortran under another name) compiles in its place
GFORTRAN_NAMES = ("gfortran", "f77", "f90", "f95")


def _real_compiler(name: str, shim_dir: str) -> Optional[str]:
    """The compiler ``name`` on PATH, the shims left out."""
    shim = os.path.realpath(shim_dir) if shim_dir else ""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and os.path.realpath(d) != shim]
    return shutil.which(name, path=os.pathsep.join(dirs))


def _record(argv: list[str]) -> None:
    log = os.environ.get("PF_APP_RECORD")
    if not log:
        return
    import fcntl

    line = json.dumps({"cwd": os.getcwd(), "argv": argv}) + "\n"
    with open(log, "a") as fh:  # make -j: one writer at a time
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(line)
        fcntl.flock(fh, fcntl.LOCK_UN)


_LINK_KEEP_PREFIX = ("-L", "-l", "-Wl,", "-static", "-shared", "-rdynamic", "-pthread", "-fopenmp", "-qopenmp",
                     "-fPIC", "-fpic", "-pie", "-no-pie")


def link_arguments(args: list[str]) -> tuple[list[str], list[str]]:
    """(what a C++ linker needs of a Fortran link command: objects, archives, ``-o``,
    ``-L``/``-l``/``-Wl,`` and the like, in their order; the Fortran and C sources the
    command also compiles)."""
    from .compile_db import OBJECT_SUFFIXES, is_fortran

    keep, sources = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o" and i + 1 < len(args):
            keep += [a, args[i + 1]]
            i += 2
            continue
        if a in ("-L", "-l", "-Xlinker") and i + 1 < len(args):
            keep += [a, args[i + 1]]
            i += 2
            continue
        if a in ("-I", "-J", "-D", "-U", "-x", "-module", "-MF", "-MT", "-MQ", "-include") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith(_LINK_KEEP_PREFIX):
            keep.append(a)
        elif not a.startswith("-"):
            suffix = Path(a).suffix
            if is_fortran(a) or suffix in (".c", ".s", ".S"):
                sources.append(a)
            elif suffix in OBJECT_SUFFIXES or ".so." in Path(a).name or not suffix:
                keep.append(a)
        i += 1
    return keep, sources


def relaxed_std(args: list[str]) -> list[str]:
    """``args`` with a strict ``-std=f95/f2003/f2008/f2018`` replaced by ``-std=gnu``: the
    ports' interface modules pass LOGICAL arguments of default kind to BIND(C) entries (as
    the C++ side's ``int``), which gfortran calls a GNU extension and a strict standard
    rejects in every file that USEs them. The standard flag only adds diagnostics; what the
    code means is unchanged."""
    return ["-std=gnu" if a.startswith("-std=f") else a for a in args]


def modern_commands(args: list[str], cfg: dict, backend: str, fc: str, tmp: str) -> list[list[str]]:
    """The commands that do what ``fc args`` asks in the modern build: compiles as the
    Fortran compiler does, with the ports' interface modules on the include path; a link
    by the backend's C++ linker (the recipe of :mod:`.library`) with the user's objects
    and link options, then the ports, Kokkos and the Fortran runtime. Sources on a link
    line are compiled first (into ``tmp``)."""
    from .compile_db import parse_command

    b = cfg.get("backends", {}).get(backend)
    if b is None:
        known = ", ".join(sorted(cfg.get("backends", {}))) or "none"
        sys.stderr.write(f"pf-fortran: no ports built for backend '{backend}' (built: {known}); "
                         "set PORT_FORTRAN_BACKEND to one of them\n")
        raise SystemExit(2)
    cmd = parse_command(os.getcwd(), ["fc", *args])
    compile_flags = list(b.get("compile", []))
    args = relaxed_std(args)
    if cmd.query or not cmd.links:
        return [[fc, *args, *compile_flags]]
    keep, sources = link_arguments(args)
    out: list[list[str]] = []
    if sources:
        flags = [a for a in args if a not in sources]
        j = 0
        compile_only: list[str] = []
        while j < len(flags):  # the command's flags without its output
            if flags[j] == "-o":
                j += 2
                continue
            compile_only.append(flags[j])
            j += 1
        objects = []
        for n, src in enumerate(sources):
            obj = os.path.join(tmp, f"{n}_{Path(src).stem}.o")
            out.append([fc, *compile_only, *compile_flags, "-c", src, "-o", obj])
            objects.append(obj)
        keep = objects + keep
    out.append([*b["driver"], *keep, *b["libraries"]])
    return out


def main(argv: Optional[list[str]] = None, config_path: Optional[str] = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    cfg = _config(config_path or os.environ.get("PF_APP_CONFIG", ""))
    called = os.path.basename(argv[0])
    mode = os.environ.get("PF_APP_MODE", "modern")
    args = argv[1:]
    if mode == "record":
        name = called if called != "pf-fortran" else cfg.get("fc_name", "gfortran")
        real = _real_compiler(name, cfg.get("shim_dir", ""))
        if real is None and name in GFORTRAN_NAMES and os.path.basename(cfg.get("fc", "")).startswith("gfortran"):
            # a makefile's `gfortran` where only the FC given exists (gfortran-13): that one
            real = cfg["fc"]
            sys.stderr.write(f"pf-fortran: no {name} on PATH; {real} (the FC given) compiles in its place\n")
        if real is None:
            sys.stderr.write(f"{name}: command not found (pf-fortran looked on PATH without its shims)\n")
            return 127
        _record([name, *args])
        os.execv(real, [real, *args])
    backend = os.environ.get("PORT_FORTRAN_BACKEND") or cfg.get("default_backend", "serial")
    fc = cfg["fc"]
    import subprocess
    import tempfile

    tmp = tempfile.mkdtemp(prefix="pf-fortran-")
    try:
        cmds = modern_commands(args, cfg, backend, fc, tmp)
        _record([called, *args])
        for c in cmds:
            if os.environ.get("PF_APP_VERBOSE"):
                sys.stderr.write("pf-fortran: " + " ".join(c) + "\n")
            rc = subprocess.run(c).returncode
            if rc != 0:
                return rc
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ writing the wrapper


SCRIPT = """\
#!{python}
# pf-fortran: the Fortran compiler wrapper of an application modernised by port-fortran.
# Compiles as {fc} does; links the ports' library, Kokkos and the C++ runtime
# (PORT_FORTRAN_BACKEND picks the backend: {backends}; default {default}).
# Configuration: {config}
import sys
sys.path.insert(0, {pkg!r})
from port_fortran.app.wrapper import main
sys.exit(main(sys.argv, {config!r}))
"""


def write_wrapper(bin_dir: Path, shim_dir: Path, cfg: dict) -> Path:
    """``bin_dir/pf-fortran`` (its configuration in ``bin_dir/pf-fortran.json``) and the
    shims in ``shim_dir``: links named like compilers to it."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    config = bin_dir / "pf-fortran.json"
    cfg = dict(cfg)
    cfg["shim_dir"] = str(shim_dir.resolve())
    config.write_text(json.dumps(cfg, indent=1) + "\n")
    script = bin_dir / "pf-fortran"
    pkg = str(Path(__file__).resolve().parent.parent.parent)
    script.write_text(SCRIPT.format(python=sys.executable, fc=cfg.get("fc", "gfortran"), config=str(config.resolve()),
                                    pkg=pkg, backends=", ".join(sorted(cfg.get("backends", {}))) or "none yet",
                                    default=cfg.get("default_backend", "serial")))
    script.chmod(0o755)
    shim_dir.mkdir(parents=True, exist_ok=True)
    names = list(SHIM_NAMES)
    real = os.path.basename(cfg.get("fc", "gfortran"))
    if real not in names:
        names.append(real)  # gfortran-12 and the like
    for n in names:
        link = shim_dir / n
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(script.resolve())
    return script


def build_env(script: Path, shim_dir: Path, *, mode: str, record: Optional[Path], backend: Optional[str] = None,
              base: Optional[dict] = None) -> dict:
    """The environment of a build through the wrapper: shims first on PATH, FC/F77/F90 and
    the like naming the wrapper (make's implicit rules, CMake), the mode and the log."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = str(shim_dir.resolve()) + os.pathsep + env.get("PATH", "")
    for var in ("FC", "F77", "F90", "F95", "MPIF90", "MPIFC"):
        env[var] = str(script.resolve())
    env["PF_APP_MODE"] = mode
    if record is not None:
        env["PF_APP_RECORD"] = str(Path(record).resolve())
    else:
        env.pop("PF_APP_RECORD", None)
    if backend:
        env["PORT_FORTRAN_BACKEND"] = backend
    env.pop("PF_APP_VERBOSE", None)
    return env


__all__ = ["main", "write_wrapper", "build_env", "modern_commands", "link_arguments", "relaxed_std", "SHIM_NAMES"]
