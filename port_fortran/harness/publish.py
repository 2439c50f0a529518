"""A PRIVATE module procedure made callable by the harness's driver (pure text).

No code outside a module can call its PRIVATE procedures, the reference driver included.
The harness therefore compiles a copy of the module's file (never the user's file) with a
``PUBLIC :: name`` statement added before the module's CONTAINS: visibility changes, the
code does not (the same object code, the procedure's symbol now global). When the name is
PRIVATE by an explicit statement (``PRIVATE :: name`` -- BookLeaf's specific procedures
behind a generic interface), the copy drops it from that statement's list first (the
statement and its continuation lines rewritten, one ``PRIVATE ::`` per name kept).
"""
from __future__ import annotations

import re
from typing import Optional


def _code(line: str, form: str) -> str:
    """The statement part of a line (no comment, no label), as the hybrid translator reads it."""
    from ..translate.fortran_text import code_part, is_comment

    return "" if is_comment(line, form) else code_part(line, form)[1]


def public_copy(text: str, form: str, module: str, names: list[str]) -> Optional[str]:
    """``text`` with ``PUBLIC :: names`` before the CONTAINS of ``module`` (None when the
    module is not found, has no CONTAINS, or declares one of the names PRIVATE itself)."""
    lines = text.split("\n")
    start = None
    for i, ln in enumerate(lines):
        if re.match(rf"\s*module\s+{re.escape(module)}\s*$", _code(ln, form), re.IGNORECASE):
            start = i
            break
    if start is None:
        return None
    wanted = {n.lower() for n in names}
    in_type = 0  # a derived type definition may hold a CONTAINS of its own
    for i in range(start + 1, len(lines)):
        code = _code(lines[i], form).strip().lower()
        if re.match(r"end\s*module\b", code):
            return None
        if re.match(r"type\s*(,|::|\s[a-z])", code) and not re.match(r"type\s*\(", code):
            in_type += 1
            continue
        if re.match(r"end\s*type\b", code):
            in_type = max(0, in_type - 1)
            continue
        if in_type:
            continue
        if re.match(r"contains\s*$", code):
            stmt = f"{' ' * 6 if form == 'fixed' else '  '}public :: {', '.join(sorted(wanted))}"
            if form == "free":
                stmt += "  ! added by port-fortran's harness"
            return "\n".join(lines[:i] + [stmt] + lines[i:])
        if re.match(r"private\s*::", code):
            last = _statement_end(lines, i, form)
            full = " ".join(_code(lines[j], form).strip().rstrip("&").lstrip("&") for j in range(i, last + 1))
            listed = [x.strip() for x in full.split("::", 1)[1].split(",") if x.strip()]
            if {x.lower() for x in listed} & wanted:
                indent = " " * 6 if form == "fixed" else "  "
                kept = [f"{indent}private :: {x}" for x in listed if x.lower() not in wanted]
                lines[i:last + 1] = kept or [("c" if form == "fixed" else "!") + " (a PRIVATE list emptied by port-fortran's harness)"]
                return public_copy("\n".join(lines), form, module, names)
        elif "private" in code and "::" in code:  # the attribute of a declaration: left alone
            listed = {x.strip() for x in code.split("::", 1)[1].split(",")}
            if listed & wanted:
                return None
    return None


def _statement_end(lines: list[str], i: int, form: str) -> int:
    """The last line of the statement starting at line ``i`` (its continuation lines)."""
    from ..translate.fortran_text import is_comment

    j = i
    if form == "free":
        while _code(lines[j], form).rstrip().endswith("&") and j + 1 < len(lines):
            j += 1
            while j + 1 < len(lines) and is_comment(lines[j], form):
                j += 1
        return j
    k = i + 1
    while k < len(lines):
        if is_comment(lines[k], form):
            k += 1
            continue
        if len(lines[k]) > 5 and lines[k][5] not in " 0":
            j = k
            k += 1
            continue
        break
    return j
