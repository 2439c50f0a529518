"""Free-form Fortran the tool writes, within the standard's 132 columns (pure).

Every generated Fortran source (the harness's reference driver and its COMMON
declarations, the port's ``bind(C)`` interface module, ...) goes through
:func:`wrap_free_source` before it is written: gfortran rejects a free-form line past
column 132 ("Line truncated"), and real routines have argument lists and COMMON blocks
far longer than that.

A long statement line is broken after a comma or at a blank outside character literals,
with ``&`` at the end of the line and the rest indented below it; a break inside a
character literal (no other place left) continues it with ``&`` on both lines, as the
standard requires. A comment line is split into several comment lines at blanks; a
trailing comment on a long statement goes on its own line before it. At most
``MAX_CONTINUATIONS`` continuation lines per statement (the Fortran 2008 limit; gfortran
warns past it): a statement that would need more raises ValueError, which the generator
reports.
"""
from __future__ import annotations

FREE_LIMIT = 132
MAX_CONTINUATIONS = 255


def _scan(line: str) -> tuple[list[int], int, list[bool]]:
    """Break candidates (index where a new line may start), the index of a trailing
    ``!`` comment (len(line) if none), and for each index whether it is inside a
    character literal."""
    quote = ""
    cands: list[int] = []
    inside = [False] * len(line)
    comment = len(line)
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            inside[i] = True
            if c == quote:
                if i + 1 < len(line) and line[i + 1] == quote:  # doubled quote: still inside
                    inside[i + 1] = True
                    i += 2
                    continue
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
            inside[i] = True
        elif c == "!":
            comment = i
            break
        elif c == "," and i + 1 < len(line):
            cands.append(i + 1)
        elif c == " " and i > 0 and line[i - 1] != " ":
            cands.append(i)
        i += 1
    return cands, comment, inside


def _wrap_comment(line: str, limit: int) -> list[str]:
    indent = line[: len(line) - len(line.lstrip())]
    body = line.lstrip()[1:].strip()
    out, cur = [], ""
    for w in body.split():
        if cur and len(indent) + 2 + len(cur) + 1 + len(w) > limit:
            out.append(f"{indent}! {cur}")
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    out.append(f"{indent}! {cur}" if cur else f"{indent}!")
    return [x[:limit] if len(x) > limit else x for x in out]  # one word longer than a line: a comment may lose it


def wrap_free_line(line: str, limit: int = FREE_LIMIT) -> list[str]:
    """One physical free-form line as lines of at most ``limit`` columns."""
    line = line.rstrip()
    if len(line) <= limit:
        return [line]
    if line.lstrip().startswith("!"):
        return _wrap_comment(line, limit)
    cands, comment, inside = _scan(line)
    pre: list[str] = []
    if comment < len(line):  # a trailing comment: its own line(s) before the statement
        indent = line[: len(line) - len(line.lstrip())]
        pre = _wrap_comment(indent + line[comment:], limit)
        line = line[:comment].rstrip()
        if len(line) <= limit:
            return pre + [line]
        cands, _, inside = _scan(line)
    indent = line[: len(line) - len(line.lstrip())]
    cont = indent + "    "
    if len(cont) > limit // 2:
        cont = "    "
    out: list[str] = []
    start, prefix = 0, ""
    while True:
        head = prefix
        room = limit - len(head) - 2  # ' &' at the end
        if len(line) - start + len(head) <= limit:
            out.append(head + line[start:])
            break
        cut = max((c for c in cands if start < c <= start + room), default=None)
        if cut is not None:
            piece = line[start:cut].rstrip()
            out.append(head + piece + " &")
            start = cut
            while start < len(line) and line[start] == " ":
                start += 1
            prefix = cont
        else:  # no comma or blank in reach: break inside a literal (or a long token)
            cut = start + room + 1  # '&' right after the text, no blank
            if not inside[cut - 1]:
                raise ValueError(f"cannot wrap a generated Fortran line at column {limit}: {line[:60]}...")
            out.append(head + line[start:cut] + "&")
            start = cut
            prefix = cont + "&"
        if len(out) > MAX_CONTINUATIONS + 1:
            raise ValueError(f"a generated Fortran statement needs more than {MAX_CONTINUATIONS} continuation "
                             f"lines: {line[:60]}...")
    return pre + out


def wrap_free_source(text: str, limit: int = FREE_LIMIT) -> str:
    """Every line of a free-form source within ``limit`` columns."""
    out: list[str] = []
    for ln in text.split("\n"):
        out += wrap_free_line(ln, limit)
    return "\n".join(out)


def declare_list(head: str, names: list[str], indent: str = "  ", limit: int = FREE_LIMIT) -> list[str]:
    """``head`` followed by ``names`` separated by commas (an entity list: a declaration,
    a COMMON statement, an argument list), wrapped within ``limit`` columns."""
    return wrap_free_line(f"{indent}{head}{', '.join(names)}", limit)
