"""Internal procedures of a main program proven on their own.

A routine CONTAINed in a main program cannot be called from outside it (gfortran gives it
a local symbol), so until now it was proven only through the program's run, which proves
nothing when the program prints only a timing (a benchmark's kernel subroutines, written
inside the program that times them). An internal procedure that uses none of its host's
variables is a routine in its own right; this module makes it callable without changing
what it means: a copy of the program's file in which the main program becomes a module
(``module pf_host_<program>``: the program's specification part -- its USE and IMPLICIT
statements, its constants, types and interfaces -- kept verbatim, its executable
statements dropped) whose module procedures are the internal procedures, text unchanged.
Host association becomes use association of the same entities, so each procedure sees what
it saw inside the program. Every other line of the copy is blanked, except preprocessor
directives (macros and ``#if`` blocks apply as in the original), so line numbers stay those
of the original file. The copy is written beside the run's output; the user's file is never
touched. The differential harness then drives the module procedure like any other.

Not lifted (the program's run stays their only proof): procedures that use a host
variable, or call a sibling that does; programs without a PROGRAM statement or a CONTAINS
line; specification parts holding what a module may not (FORMAT statements, statement
functions).
"""
from __future__ import annotations

import re
from typing import Optional

from . import ir

_DIRECTIVE = re.compile(r"^\s*#")
_PROGRAM = re.compile(r"^\s*program\s+(\w+)\s*(!.*)?$", re.I)
_CONTAINS = re.compile(r"^\s*contains\s*(!.*)?$", re.I)
_END = re.compile(r"^\s*end\s*(program(\s+\w+)?)?\s*(!.*)?$", re.I)
_FORMAT = re.compile(r"^\s*\d+\s+format\s*\(", re.I)
_DECL_WORDS = ("integer", "real", "double", "complex", "logical", "character", "type", "dimension",
               "parameter", "data", "common", "equivalence", "save", "implicit", "use", "external",
               "intrinsic", "namelist", "allocatable", "pointer", "target", "interface", "procedure",
               "class", "enum", "import", "include", "volatile", "asynchronous", "bind", "public",
               "private", "protected", "value", "intent", "optional", "sequence", "contiguous", "abstract")
_ASSIGN_LIKE = re.compile(r"^\s*([a-z]\w*)\s*\([^=]*\)\s*=(?!=)", re.I)


def module_name(program: str) -> str:
    return f"pf_host_{program}"[:63].lower()


def liftable(sf: ir.SourceFile, unit: ir.Kernel) -> list[ir.Kernel]:
    """The internal procedures of the main program ``unit`` (of ``sf``) that use no host
    variable and call no sibling that does (transitively)."""
    inner = {k.name: k for k in sf.kernels if getattr(k, "host", None) == unit.name}

    def clean(name: str, seen: set) -> bool:
        k = inner[name]
        if k.host_vars:
            return False
        seen.add(name)
        return all(clean(c, seen) for c in k.calls if c in inner and c not in seen)

    return [k for name, k in inner.items() if clean(name, set())]


def lifted_text(text: str, form: str, unit: ir.Kernel, internals: list[ir.Kernel]) -> Optional[str]:
    """The copy of the file ``text`` in which the main program ``unit`` is the module
    :func:`module_name`, or None when it cannot be made (see the module docstring)."""
    lines = text.split("\n")
    start, end = unit.line_start, unit.line_end
    if not internals or not start or not end or end > len(lines) or not _PROGRAM.match(lines[start - 1]) \
            or not _END.match(lines[end - 1]):
        return None
    first_inner = min(k.line_start for k in internals)
    first_exec = min((s.line for s in unit.body if getattr(s, "line", None)), default=None)
    contains = None
    for n in range(first_inner - 1, start, -1):
        if _CONTAINS.match(lines[n - 1]):
            contains = n
            break
    if contains is None:
        return None
    spec_end = min(first_exec, contains) - 1 if first_exec else contains - 1
    for n in range(start + 1, spec_end + 1):
        ln = lines[n - 1]
        if _FORMAT.match(ln):
            return None  # FORMAT statements may not stand in a module's specification part
        m = _ASSIGN_LIKE.match(ln)
        if m and "::" not in ln and m.group(1).lower() not in _DECL_WORDS and not _is_comment(ln, form):
            return None  # a statement function
    name = module_name(unit.name)
    lead = lines[start - 1][:len(lines[start - 1]) - len(lines[start - 1].lstrip())]
    out = []
    for n, ln in enumerate(lines, start=1):
        if n == start:
            out.append(f"{lead}module {name}")
        elif n == end:
            out.append(f"{lead}end module {name}")
        elif start < n <= spec_end or contains <= n < end:
            out.append(ln)
        else:
            out.append(ln if _DIRECTIVE.match(ln) else "")
    return "\n".join(out)


def _is_comment(line: str, form: str) -> bool:
    s = line.lstrip()
    return not s or s.startswith("!") or (form == "fixed" and line[:1] in ("c", "C", "*"))
