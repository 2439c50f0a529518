"""Which files of the trees on a command line are Fortran (and C) sources: discovery
that every stage shares, kept apart from parsing so that the module resolver
(:mod:`.modules`) finds module files without importing the parser."""
from __future__ import annotations

from pathlib import Path

from .reader import FORTRAN_EXTS

#: marks the root of an application inside a tree (``port-fortran app`` ports it as a whole)
APP_MARKER = "port-fortran-app.yaml"


#: C sources of a tree (timers such as STREAM's mysecond.c, NPB's wtime.c): no routine of
#: theirs is ported, but the original objects link them where Fortran calls them
C_EXTS = {".c"}


def _files(paths, exts, named) -> list[Path]:
    """The files with a suffix in ``exts`` in the directory trees given (sorted; hidden
    parts and sub-applications left out), and ``named(p)`` of each path that is no
    directory (the files named on the command line that count); de-duplicated."""
    out: list[Path] = []
    seen = set()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            apps = {m.parent for m in p.rglob(APP_MARKER) if m.parent != p}
            cands = sorted(x for x in p.rglob("*") if x.is_file() and x.suffix in exts
                           and not any(part.startswith(".") for part in x.relative_to(p).parts)
                           and not any(a in x.parents for a in apps))
        else:
            cands = named(p)
        for c in cands:
            key = str(c.resolve()) if c.exists() else str(c)
            if key not in seen:
                seen.add(key)
                out.append(c)
    return out


def discover(paths) -> list[Path]:
    """Fortran files in the given files and directory trees (sorted, de-duplicated). A
    sub-directory holding ``port-fortran-app.yaml`` is an application of its own (its files
    build one program, with its own flags: ``port-fortran app`` ports it) and is left out
    of a tree given above it. A C source named on the command line is :func:`discover_c`'s;
    any other file named is taken (a missing one is reported by parse_file as unreadable)."""
    return _files(paths, FORTRAN_EXTS, lambda p: [] if p.suffix in C_EXTS else [p])


def discover_c(paths) -> list[Path]:
    """C sources in the given files and directory trees (sorted, de-duplicated), found as
    :func:`discover` finds Fortran files."""
    return _files(paths, C_EXTS, lambda p: [p] if p.suffix in C_EXTS and p.is_file() else [])


def default_include_dirs(paths) -> list[str]:
    """Directories named include/inc/includes inside the given trees (sorted). Callers add
    them after the user's -I dirs, so `port-fortran list fortran_kernels/` finds
    fortran_kernels/include/params.inc; whoever compiles the original must use the same."""
    out: list[str] = []
    for s in paths:
        p = Path(s)
        if p.is_dir():
            for d in sorted(p.rglob("*")):
                if d.is_dir() and d.name.lower() in ("include", "inc", "includes") and str(d) not in out:
                    out.append(str(d))
    return out
