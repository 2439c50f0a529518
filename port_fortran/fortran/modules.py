"""Finding the modules a file USEs in the other files of a tree, as a compiler's module
search path would: which file defines which module (a text scan, no parse), and the
interfaces (``ir.ModuleInterface``) of the modules a file needs, from those files' parses.

This is symbol lookup only (kinds, constants, arrays, types of module variables); the
order in which module files are compiled belongs to the program model. A caller that has
a program model passes the interfaces itself: ``parse_file(path, modules={...})``.
"""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Optional

from . import ir
from .discovery import discover
from .intrinsic_modules import is_intrinsic_module

_USE_RE = re.compile(r"^[ \t]*use\b[ \t]*(?:,[ \t]*(intrinsic|non_intrinsic)[ \t]*)?(?:::)?[ \t]*([a-z_]\w*)",
                     re.IGNORECASE | re.MULTILINE)
_MODULE_RE = re.compile(r"^[ \t]*module[ \t]+(?!procedure\b|subroutine\b|function\b)([a-z_]\w*)[ \t]*(?:!.*)?$",
                        re.IGNORECASE | re.MULTILINE)


def used_modules(text: str) -> list[str]:
    """Names of the non-intrinsic modules ``text`` USEs (in order, once each)."""
    out: dict[str, None] = {}
    for m in _USE_RE.finditer(text):
        name = m.group(2).lower()
        if (m.group(1) or "").lower() != "intrinsic" and not is_intrinsic_module(name):
            out.setdefault(name)
    return list(out)


def defined_modules(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1).lower() for m in _MODULE_RE.finditer(text)))


class ModuleIndex:
    """Module name -> the files (of ``paths``: files and directory trees) that define it."""

    def __init__(self, paths):
        self.files = [Path(f).resolve() for f in discover([str(p) for p in paths]) if Path(f).is_file()]
        self.defs: dict[str, list[Path]] = {}
        for f in self.files:
            try:
                text = f.read_text(errors="replace")
            except OSError:
                continue
            for name in defined_modules(text):
                self.defs.setdefault(name, []).append(f)

    def find(self, name: str, near: Path) -> tuple[Optional[Path], list[Path]]:
        """The file defining module ``name`` for a user in ``near``: the only one, or the one
        closest in the tree (longest common directory). (file, []) or (None, tied candidates)."""
        cands = [f for f in self.defs.get(name, []) if f != near]
        if len(cands) <= 1:
            return (cands[0] if cands else None), []
        def closeness(f: Path) -> int:
            return len(os.path.commonpath([str(f.parent), str(near.parent)]))
        best = max(closeness(f) for f in cands)
        top = sorted(f for f in cands if closeness(f) == best)
        return (top[0], []) if len(top) == 1 else (None, top)


_INDEXES: dict[tuple, tuple[tuple, ModuleIndex]] = {}
_LOCK = threading.Lock()
_RESOLVING = threading.local()


def _signature(paths: tuple) -> tuple:
    sig = []
    for p in paths:
        try:
            st = os.stat(p)
            sig.append((p, st.st_mtime_ns, st.st_size))
        except OSError:
            sig.append((p, 0, 0))
    return tuple(sig)


def module_index(paths) -> ModuleIndex:
    """A (cached) index over ``paths``; rebuilt when a file or directory given changes."""
    key = tuple(sorted(str(Path(p).resolve()) for p in paths))
    sig = _signature(key)
    with _LOCK:
        hit = _INDEXES.get(key)
        if hit is not None and hit[0] == sig:
            return hit[1]
    idx = ModuleIndex(key)  # (a module file's content changes reach its users through parse_file's cache key)
    with _LOCK:
        _INDEXES[key] = (sig, idx)
    return idx


def resolve_interfaces(path: str, text: str, *, parse_file, include_dirs=(), defines=None, modules=None,
                       module_search=None) -> tuple[dict[str, ir.ModuleInterface], dict[str, str]]:
    """Interfaces of the modules ``text`` (the file ``path``) USEs but does not define:
    ``modules`` first, then the files of ``module_search`` (default: the file's directory
    and the include directories), parsed with the same options. Returns (interfaces, notes
    name -> why a module was not taken, for the modules found ambiguous or in a cycle).
    ``parse_file`` is the front end that reads a module's file (:func:`.parse.parse_file`,
    handed in by the parser itself: resolving is a recursion of parsing, the parameter keeps
    it one without an import circle)."""

    own = set(defined_modules(text))
    needed = [m for m in used_modules(text) if m not in own]
    out: dict[str, ir.ModuleInterface] = {}
    notes: dict[str, str] = {}
    if not needed:
        return out, notes
    given = dict(modules or {})
    todo = [m for m in needed if m not in given]
    for m in needed:
        if m in given:
            out[m] = given[m]
    if not todo:
        return out, notes
    search = list(module_search) if module_search is not None else [str(Path(path).resolve().parent), *include_dirs]
    index = module_index(search)
    me = Path(path).resolve()
    stack = getattr(_RESOLVING, "stack", None)
    if stack is None:
        stack = _RESOLVING.stack = []
    for m in todo:
        f, tied = index.find(m, me)
        if f is None:
            if tied:
                notes[m] = f"module {m} is defined in several files equally near: {', '.join(map(str, tied))}"
            continue
        if str(f) in stack:
            notes[m] = f"module {m} ({f}) USEs, directly or not, {path}: a cycle"
            continue
        stack.append(str(me))
        try:
            sf = parse_file(f, include_dirs=include_dirs, defines=defines, modules=given, module_search=module_search)
        finally:
            stack.pop()
        iface = sf.interfaces.get(m)
        if iface is not None:
            out[m] = iface
    return out, notes
