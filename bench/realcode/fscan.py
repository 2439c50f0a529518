"""An independent count of the routines in a Fortran file, for the corpus runner.

The corpus results must count every routine of the corpus, including those port-fortran's
front end never sees (a file it cannot parse, a main program without a PROGRAM statement,
internal procedures). This module finds them without fparser and without port-fortran:
statements are split the way the standard says (fixed form: columns 1-72, column 6
continuation, ``C``/``*``/``!`` comments; free form: ``&`` continuation, ``!`` comments,
``;`` separators; character literals blanked first), then a stack of program units is kept:

* subroutines and functions (external, module procedures, internal procedures after a
  ``CONTAINS``), named main programs and main programs without a ``PROGRAM`` statement
  (named ``(main)``) are routines;
* interface bodies, derived-type definitions, modules and BLOCK DATA are not;
* a routine *has loops* when one of its own statements (not an internal procedure's) is a
  ``DO`` statement (counted, labelled, DO WHILE, DO CONCURRENT or a bare ``DO``).

Files that need the C preprocessor (``.F``, ``.F90``..., or ``cpp=True``) go through
``gfortran -E -cpp`` first with the unit's ``-I``/``-D``, and line markers map every
statement back to its line in the original file; lines that come from ``#include``d files
are not scanned for routines (they are declarations in these codes).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

CPP_SUFFIXES = {".F", ".FOR", ".FPP", ".F77", ".F90", ".F95", ".F03", ".F08", ".fpp"}
FIXED_SUFFIXES = {".f", ".for", ".f77", ".F", ".FOR", ".F77", ".fpp", ".FPP"}


@dataclass
class Routine:
    file: str  # as given to the scanner (the runner passes paths relative to the code root)
    name: str  # lower case; '(main)' for a main program without a PROGRAM statement
    kind: str  # 'subroutine' | 'function' | 'program'
    line: int  # first line of the routine's first statement in the original file
    end_line: Optional[int] = None
    host: Optional[str] = None  # containing module, or the host routine of an internal procedure
    internal: bool = False  # CONTAINed in a subroutine, function or program
    has_loops: bool = False
    loops: int = 0  # DO statements of the routine itself
    calls: list[str] = field(default_factory=list)  # targets of its CALL statements (not function references)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ScanResult:
    routines: list[Routine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. preprocessing failed, scanned raw


# ----------------------------------------------------------------------------- statements


def _blank_strings(s: str, quote_state: Optional[str] = None) -> tuple[str, Optional[str]]:
    """Replace the contents of character literals by spaces and cut a ``!`` comment.
    ``quote_state`` is the quote still open from a previous free-form line (continued
    string); returns the processed text and the quote left open at its end."""
    out = []
    q = quote_state
    i = 0
    while i < len(s):
        c = s[i]
        if q:
            if c == q:
                if i + 1 < len(s) and s[i + 1] == q:  # doubled quote inside the literal
                    out.append("  ")
                    i += 2
                    continue
                q = None
                out.append(c)
            else:
                out.append(" ")
        elif c in "'\"":
            q = c
            out.append(c)
        elif c == "!":
            break
        else:
            out.append(c)
        i += 1
    return "".join(out), q


def fixed_statements(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(line, text) of each statement of fixed-form source; ``lines`` are (line, raw text)."""
    stmts: list[tuple[int, str]] = []
    cur_line, cur = 0, None
    for ln, raw in lines:
        if not raw.strip():
            continue
        c0 = raw[0]
        if c0 in "cC*!dD#" or raw.lstrip().startswith("!"):
            continue
        raw = raw.expandtabs(6) if raw.startswith("\t") else raw  # DEC tab form: tab then text at column 7
        text = raw[:72]
        label, cont, body = text[:5], text[5:6], text[6:]
        body, _ = _blank_strings(body)
        if cont.strip() and cont != "0" and cur is not None:
            cur += body
            continue
        if cur is not None:
            stmts.append((cur_line, cur))
        cur_line, cur = ln, (label.strip() + " " if label.strip() else "") + body
    if cur is not None:
        stmts.append((cur_line, cur))
    return [(ln, s) for ln, st in stmts for s in st.split(";") if s.strip()]


def free_statements(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    stmts: list[tuple[int, str]] = []
    cur_line, cur = 0, None
    quote: Optional[str] = None
    for ln, raw in lines:
        s = raw.rstrip("\n")
        if s.lstrip().startswith("#"):
            continue
        if cur is not None:
            st = s.lstrip()
            if st.startswith("&"):
                s = st[1:]
        elif not s.strip():
            continue
        body, quote = _blank_strings(s, quote)
        if not body.strip() and cur is not None:
            continue  # comment line inside a continued statement
        b = body.rstrip()
        more = b.endswith("&")
        if more:
            b = b[:-1]
        if cur is None:
            cur_line, cur = ln, b
        else:
            cur += " " + b
        if not more:
            stmts.append((cur_line, cur))
            cur, quote = None, None
    if cur is not None:
        stmts.append((cur_line, cur))
    return [(ln, s) for ln, st in stmts for s in st.split(";") if s.strip()]


# ----------------------------------------------------------------------------- classification

_TYPE = (r"(?:integer|real|double\s*precision|double\s*complex|complex|logical|character"
         r"|type\s*\([^)]*\)|class\s*\([^)]*\))(?:\s*\*\s*(?:\d+|\(\s*[\w*]+\s*\))|\s*\([^()]*(?:\([^()]*\)[^()]*)*\))?")
_PREFIX = r"(?:(?:recursive|pure|elemental|impure|non_recursive|module)\s+|" + _TYPE + r"\s+)*"
_PROC_RE = re.compile(r"^" + _PREFIX + r"(subroutine|function)\s*(\w+)", re.I)
_PROGRAM_RE = re.compile(r"^program\s+(\w+)", re.I)
_MODULE_RE = re.compile(r"^module\s+(\w+)\s*$", re.I)
_SUBMODULE_RE = re.compile(r"^submodule\s*\(", re.I)
_BLOCKDATA_RE = re.compile(r"^block\s*data\b", re.I)
_INTERFACE_RE = re.compile(r"^(?:abstract\s+)?interface\b", re.I)
_TYPEDEF_RE = re.compile(r"^type\s*(?:,[^:]*)?(?:::)?\s*\w+\s*$", re.I)
_END_RE = re.compile(r"^end\s*(subroutine|function|program|module|submodule|block\s*data|interface|type)?\b\s*(\w*)\s*$", re.I)
_CONTAINS_RE = re.compile(r"^contains\s*$", re.I)
_DO_RE = re.compile(r"^do(?:\s*$|\s+\d+\s*,?\s*\w+\s*=|\s*\d+\s*,?\s*\w+\s*=|\s+\w+\s*=.*,|\s*while\b|\s*concurrent\b"
                    r"|\s+\d+\s*$|\s+\w+\s*=)", re.I)
_LABEL_RE = re.compile(r"^\d+\s+")
_CONSTRUCT_RE = re.compile(r"^[a-z_]\w*\s*:(?!:)\s*", re.I)
# statements that may stand before a unit's first statement without starting a main program
_NOT_PROGRAM_START = re.compile(r"^(?:include\b)", re.I)
_CALL_RE = re.compile(r"(?:^|\)\s*)call\s+([a-z_]\w*)", re.I)


def _clean(stmt: str) -> str:
    s = stmt.strip()
    s = _LABEL_RE.sub("", s)
    s = _CONSTRUCT_RE.sub("", s)
    return s.strip()


def is_do(stmt: str) -> bool:
    s = _clean(stmt)
    if not s[:2].lower() == "do":
        return False
    if re.match(r"^do\s*\w*\s*=[^,]*$", s, re.I) and not re.match(r"^do\s*\d", s, re.I):
        return False  # an assignment to a variable whose name starts with 'do'
    return bool(_DO_RE.match(s))


def scan_statements(stmts: list[tuple[int, str]], file: str) -> list[Routine]:
    """Routines in a list of (line, statement) of one file."""
    out: list[Routine] = []
    # stack entries: (kind, Routine or None, name); kinds: module, submodule, blockdata,
    # interface, type, program, subroutine, function, ifacebody
    stack: list[tuple[str, Optional[Routine], str]] = []
    contains: list[bool] = []

    def innermost_routine() -> Optional[Routine]:
        for kind, r, _ in reversed(stack):
            if kind in ("interface", "ifacebody", "type"):
                return None
            if r is not None:
                return r
        return None

    def push(kind, routine, name):
        stack.append((kind, routine, name))
        contains.append(False)

    def pop(line: int):
        kind, r, _ = stack.pop()
        contains.pop()
        if r is not None:
            r.end_line = line

    for line, raw in stmts:
        s = _clean(raw)
        if not s:
            continue
        low = s.lower()
        in_iface = bool(stack) and stack[-1][0] in ("interface", "ifacebody")
        m_end = _END_RE.match(s)
        if m_end and not re.match(r"^end\s*(do|if|select|where|forall|associate|block(?!\s*data)|critical|enum|team)\b",
                                  s, re.I):
            if stack:
                pop(line)
            continue
        if _INTERFACE_RE.match(s):
            push("interface", None, "")
            continue
        if stack and stack[-1][0] == "type":
            continue  # components and type-bound procedure bindings
        m = _PROC_RE.match(s)
        if m and not re.match(r"^module\s+procedure\b", s, re.I):
            kind, name = m.group(1).lower(), m.group(2).lower()
            if in_iface:
                push("ifacebody", None, name)
                continue
            if not stack:
                r = Routine(file, name, kind, line)
            else:
                pkind, prout, pname = stack[-1]
                internal = pkind in ("program", "subroutine", "function")
                r = Routine(file, name, kind, line, host=pname, internal=internal)
            out.append(r)
            push(kind, r, name)
            continue
        if in_iface:
            continue  # declarations of an interface body; 'module procedure' lines
        m = _PROGRAM_RE.match(s)
        if m and not stack:
            r = Routine(file, m.group(1).lower(), "program", line)
            out.append(r)
            push("program", r, r.name)
            continue
        m = _MODULE_RE.match(s)
        if m and not re.match(r"^module\s+procedure\b", s, re.I):
            push("module", None, m.group(1).lower())
            continue
        if _SUBMODULE_RE.match(s):
            push("submodule", None, "")
            continue
        if _BLOCKDATA_RE.match(s):
            push("blockdata", None, "")
            continue
        if _TYPEDEF_RE.match(s) and not low.startswith("type(") and stack:
            push("type", None, "")
            continue
        if _CONTAINS_RE.match(s):
            if contains:
                contains[-1] = True
            continue
        if not stack:
            if _NOT_PROGRAM_START.match(s):
                continue
            # a statement outside any unit: the start of a main program without PROGRAM
            r = Routine(file, "(main)", "program", line)
            out.append(r)
            push("program", r, r.name)
            # fall through: this statement belongs to it (it may be a DO)
        if is_do(s):
            r = innermost_routine()
            if r is not None:
                r.loops += 1
                r.has_loops = True
        m = _CALL_RE.search(s)
        if m and (low.startswith("call") or low.startswith("if")):
            r = innermost_routine()
            if r is not None and m.group(1).lower() not in r.calls:
                r.calls.append(m.group(1).lower())
    while stack:  # a file that ends without END: close what is open at the last line
        pop(stmts[-1][0] if stmts else 0)
    return out


# ----------------------------------------------------------------------------- files


def source_form(path: str | Path, fixed: Optional[bool] = None) -> str:
    if fixed is not None:
        return "fixed" if fixed else "free"
    return "fixed" if Path(path).suffix in FIXED_SUFFIXES else "free"


def needs_cpp(path: str | Path, cpp: Optional[bool] = None) -> bool:
    if cpp is not None:
        return cpp
    return Path(path).suffix in CPP_SUFFIXES


def preprocess(path: Path, include_dirs=(), defines=None, form: str = "free",
               gfortran: str = "gfortran") -> list[tuple[int, str]]:
    """``gfortran -E -cpp`` of ``path``: (original line, text) of the lines that come from
    ``path`` itself and from the files it ``#include``s (those at the line of the
    ``#include``: routines a header holds are the including file's, as its object says).
    Raises RuntimeError with gfortran's message when it fails."""
    cmd = [gfortran, "-E", "-cpp", "-ffixed-form" if form == "fixed" else "-ffree-form"]
    cmd += [f"-I{d}" for d in include_dirs]
    for k, v in (defines or {}).items():
        cmd.append(f"-D{k}" if v is None else f"-D{k}={v}")
    cmd.append(str(path))
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"gfortran -E failed: {p.stderr.strip()[:500]}")
    me = Path(path).resolve()
    out: list[tuple[int, str]] = []
    in_me, included, ln = True, False, 1
    pending: list[int] = []  # indexes in ``out`` of included lines, placed when the file resumes
    marker = re.compile(r'^#\s*(\d+)\s+"([^"]*)"')
    for text in p.stdout.split("\n"):
        m = marker.match(text)
        if m:
            f = m.group(2)
            was_me = in_me
            in_me = not f.startswith("<") and Path(f).resolve() == me
            included = not in_me and not f.startswith("<") and (included or was_me)
            ln = int(m.group(1))
            if in_me and not was_me:  # back after an #include: it was the line before this one
                for i in pending:
                    out[i] = (ln - 1, out[i][1])
                pending = []
            continue
        if in_me:
            out.append((ln, text))
        elif included:
            pending.append(len(out))
            out.append((ln, text))
        ln += 1
    return out


def scan_file(path: str | Path, *, name: Optional[str] = None, include_dirs=(), defines=None,
              fixed: Optional[bool] = None, cpp: Optional[bool] = None) -> ScanResult:
    """The routines of one file. ``name`` is what rows call the file (default: ``path``)."""
    path = Path(path)
    form = source_form(path, fixed)
    res = ScanResult()
    raw = path.read_text(errors="replace").split("\n")
    lines = list(enumerate(raw, 1))
    if needs_cpp(path, cpp):
        try:
            lines = preprocess(path, include_dirs, defines, form)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            res.notes.append(f"{path}: preprocessing failed, scanned without it ({exc})")
    stmts = fixed_statements(lines) if form == "fixed" else free_statements(lines)
    res.routines = scan_statements(stmts, name or str(path))
    return res
