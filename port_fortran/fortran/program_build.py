"""Building the program model (:mod:`.program`): discover the files of every tree, parse
them in module-dependency order (a module's file before its users, so a front end that
reads other files' modules finds them parsed), add them to one :class:`Program`, link
the calls and refine the routines across files (``interproc.refine``)."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Callable, Iterable, Optional

from . import ftypes, ir
from .interproc import refine
from .parse import discover, parse_file
from .reader import options_of_fflags, source_options
from .program import FileSettings, FileUnits, Program, _scan_file, norm

ParseFn = Callable[..., ir.SourceFile]


def _takes_modules(fn) -> bool:
    try:
        return "modules" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def parse_with_modules(path, include_dirs=(), defines: Optional[dict] = None, modules: Optional[dict] = None,
                       module_search: Optional[list] = None) -> ir.SourceFile:
    """The per-file front end given the modules other files of the program define
    ({name: SourceFile}, parsed first); the modules not among them are looked for in
    ``module_search`` (default: the file's directory and the include directories)."""
    given = {n: sf.interfaces[n] for n, sf in (modules or {}).items() if n in sf.interfaces}
    return parse_file(path, include_dirs=tuple(include_dirs), defines=dict(defines or {}), modules=given or None,
                      module_search=module_search)


def build_program(sources: Iterable, include_dirs=(), defines: Optional[dict] = None, fflags=(),
                  routines: Optional[dict] = None, *, files: Optional[list] = None,
                  parse: Optional[ParseFn] = None, settings: Optional[dict] = None) -> Program:
    """One program from files and directory trees. ``files`` (the discovered files, in
    order) skips discovery; ``parse(path, include_dirs, defines)`` is the per-file front end
    (default: ``parse.parse_file`` with its cache); ``settings`` maps a path to its own
    :class:`FileSettings` (default: the same for every file). Files are parsed in
    module-dependency order (a module's file before its users), so a front end that reads
    other files' modules finds them parsed: a ``parse`` with a ``modules`` parameter is
    called with ``modules={name: SourceFile defining it}`` for the modules the file uses.
    ``routines`` is the configuration's per-routine section (extents, value ranges)."""
    parse = parse or (lambda p, inc, d, modules=None: parse_with_modules(p, inc, d, modules))
    paths = [Path(p) for p in (files if files is not None else discover([str(s) for s in sources]))]
    default = FileSettings.of(include_dirs, defines, fflags)
    per_file = {norm(k): v for k, v in (settings or {}).items()}

    def scan(p) -> FileUnits:  # with the form and line length the file's flags give
        with source_options(options_of_fflags(per_file.get(norm(p), default).fflags)):
            return _scan_file(str(p))

    units = {norm(p): scan(p) for p in paths}
    # parse order: module definers first (the scan is over-approximate, which only orders)
    definers: dict[str, str] = {}
    for p in paths:
        for m in units[norm(p)].modules:
            definers.setdefault(m, norm(p))
    given = {norm(p): p for p in paths}
    ordered: list[str] = []
    state: dict[str, int] = {}

    def visit(f: str) -> None:
        if state.get(f):
            return
        state[f] = 1
        for u in units[f].uses:
            g = definers.get(u)
            if g is not None and g != f:
                visit(g)
        ordered.append(f)

    for p in paths:
        visit(norm(p))
    parsed: dict[str, ir.SourceFile] = {}
    wants_modules = _takes_modules(parse)
    for f in ordered:
        st = per_file.get(f, default)
        # -fdefault-real-8: REAL is real(8); -ffree-form: a .F file is free form
        with ftypes.default_kinds(ftypes.kinds_of_fflags(st.fflags)), source_options(options_of_fflags(st.fflags)):
            if wants_modules:  # the hook for front ends that read other files' modules (kinds, constants)
                used = {u: parsed[definers[u]] for u in units[f].uses if definers.get(u) in parsed}
                parsed[f] = parse(given[f], st.include_dirs, st.defines_dict, modules=used)
            else:
                parsed[f] = parse(given[f], st.include_dirs, st.defines_dict)
    prog = Program()
    prog.config = {str(k).lower(): v for k, v in (routines or {}).items()}
    for p in paths:  # the program keeps the command-line order
        f = norm(p)
        prog.add_file(str(p), parsed[f], per_file.get(f, default), units[f])
    prog.link()
    refine(prog)
    return prog
