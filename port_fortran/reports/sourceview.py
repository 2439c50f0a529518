"""The side-by-side view of a kernel in report.html: the original Fortran beside the Kokkos
C++, both syntax-highlighted (Pygments), each line numbered and addressable, and every loop
linked both ways.

Pure: text in, rows of HTML out. The links come from what the rules translator writes
above every loop it emits, ``// line 16: do i -> parallel_for`` (``// lines 27-30: serial,
...`` for a block kept serial), and from the kernel labels ``"daxpy:L16"``: the Fortran line
links to the first C++ line that names it, and that C++ line links back. Lines of loops
that became parallel Kokkos kernels are marked ``par``, those kept serial ``ser``.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Optional

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, FortranFixedLexer, FortranLexer

_LOOP_COMMENT = re.compile(r"//\s*lines?\s+(\d+)(?:\s*-\s*(\d+))?\s*:\s*(.*)$")
_LABEL = re.compile(r'"[A-Za-z_]\w*:L(\d+)"')
_PARALLEL_WORDS = ("parallel_for", "parallel_reduce", "mdrange", "atomic", "team", "parallel_scan")
FIXED_SUFFIXES = (".f", ".for", ".f77", ".ftn", ".fpp")


@dataclass
class Row:
    no: int  # the line number shown (the original file's for Fortran)
    html: str  # the highlighted line
    anchor: str  # this row's id
    link: str = ""  # the id of the matching row in the other pane
    kind: str = ""  # 'par' | 'ser' | ''
    note: str = ""  # what the translator did with the loop (title of the link)


def loop_map(kokkos: str) -> dict[int, tuple[int, str, str]]:
    """Fortran line -> (C++ line, kind, note) for every loop the port names (1-based lines;
    the first C++ line naming a Fortran line wins)."""
    out: dict[int, tuple[int, str, str]] = {}
    for i, line in enumerate(kokkos.splitlines(), start=1):
        m = _LOOP_COMMENT.search(line)
        if m:
            first, last = int(m.group(1)), int(m.group(2) or m.group(1))
            note = m.group(3).strip()
            kind = "par" if any(w in note for w in _PARALLEL_WORDS) else "ser"
            for ln in range(first, min(last, first + 2000) + 1):
                out.setdefault(ln, (i, kind, note))
            continue
        m = _LABEL.search(line)
        if m:
            out.setdefault(int(m.group(1)), (i, "par", "a Kokkos kernel"))
    return out


def highlight_lines(text: str, lexer) -> list[str]:
    """One HTML fragment per line of ``text`` (Pygments closes its spans at line ends)."""
    if not text:
        return []
    body = highlight(text, lexer, HtmlFormatter(nowrap=True))
    lines = body.split("\n")
    n = len(text.splitlines())
    if len(lines) < n:  # never lose a line: fall back to escaped text
        return [html.escape(x) for x in text.splitlines()]
    return lines[:n]


def fortran_lexer(file: str):
    return FortranFixedLexer() if file.lower().endswith(FIXED_SUFFIXES) else FortranLexer()


def side_by_side(prefix: str, fortran_file: str, fortran: str, first_line: int,
                 kokkos: str) -> tuple[list[Row], list[Row]]:
    """(Fortran rows, C++ rows); row ids are ``<prefix>-f-<line>`` and ``<prefix>-c-<line>``."""
    links = loop_map(kokkos) if kokkos else {}
    f_rows = []
    for i, h in enumerate(highlight_lines(fortran, fortran_lexer(fortran_file))):
        no = first_line + i
        r = Row(no, h, f"{prefix}-f-{no}")
        if no in links:
            c, kind, note = links[no]
            r.link, r.kind, r.note = f"{prefix}-c-{c}", kind, note
        f_rows.append(r)
    back = {c: (f, kind, note) for f, (c, kind, note) in sorted(links.items(), reverse=True)}
    shown = {r.no for r in f_rows}
    c_rows = []
    for i, h in enumerate(highlight_lines(kokkos, CppLexer()), start=1):
        r = Row(i, h, f"{prefix}-c-{i}")
        if i in back and back[i][0] in shown:
            f, r.kind, r.note = back[i]
            r.link = f"{prefix}-f-{f}"
        c_rows.append(r)
    return f_rows, c_rows


def pygments_css() -> str:
    """The token colours, scoped to ``.sbs``."""
    return HtmlFormatter(style="default").get_style_defs(".sbs")


def view(prefix: str, sources: Optional[dict]) -> Optional[dict]:
    """What the template needs for one kernel, or None without sources."""
    if not sources:
        return None
    f = sources.get("fortran") or {}
    k = sources.get("kokkos") or {}
    f_rows, c_rows = side_by_side(prefix, f.get("file", ""), f.get("text", ""), int(f.get("first_line") or 1),
                                  k.get("text", ""))
    return {"fortran_file": f.get("file", ""), "kokkos_file": k.get("file", ""), "fortran": f_rows,
            "kokkos": c_rows, "links": sum(1 for r in f_rows if r.link)}
