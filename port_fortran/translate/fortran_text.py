"""Text surgery on Fortran source for hybrid ports (pure functions over lines).

A hybrid port is a copy of the user's file in which some line spans (the outlined loop
nests, with the OpenMP directives that belong to them) are replaced by a CALL, and one USE
line is inserted after the routine's head. Everything here respects the source form:
fixed form keeps labels in columns 1-5, continuation marks in column 6 and statements in
columns 7-72; free form stays within 132 columns, continued with ``&``.

Lines are 1-based, as in the IR (lines of the main file)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..fortran.reader import strip_comment

FIXED_WIDTH = 72
FREE_WIDTH = 132

_SENTINEL_FIXED = re.compile(r"^[cC*!]\$", re.IGNORECASE)
_SENTINEL_FREE = re.compile(r"^\s*!\$", re.IGNORECASE)
_DIR_FIXED = re.compile(r"^[cC*!](dir|dec|gcc|ibm|pgi|acc)\$", re.IGNORECASE)  # !DIR$ IVDEP and friends
_DIR_FREE = re.compile(r"^\s*!(dir|dec|gcc|ibm|pgi)\$", re.IGNORECASE)


@dataclass
class Edit:
    """Replace lines ``first``..``last`` (inclusive) by ``text`` (a list of lines); an
    insertion when ``last == first - 1`` (the lines go before ``first``)."""

    first: int
    last: int
    text: list[str] = field(default_factory=list)
    why: str = ""

    def to_dict(self) -> dict:
        return {"first": self.first, "last": self.last, "text": list(self.text), "why": self.why}


def is_comment(line: str, form: str) -> bool:
    """A comment or blank line (directives are comments here)."""
    if form == "fixed":
        return not line.strip() or line[:1] in "cC*!" or line.lstrip().startswith("!")
    return not line.strip() or line.lstrip().startswith("!")


def directive(line: str, form: str) -> Optional[str]:
    """The text of a directive line after its sentinel, lower case (``omp parallel do``,
    ``omp& private(i)``, ``dir ivdep``), or None for any other line."""
    s = line.rstrip()
    if form == "fixed":
        m = _SENTINEL_FIXED.match(s)
        if m:
            return s[2:].strip().lower()
        m = _DIR_FIXED.match(s)
        if m:
            return f"{m.group(1).lower()} " + s[m.end():].strip().lower()
    m = _SENTINEL_FREE.match(s)
    if m:
        return s[m.end():].strip().lower()
    m = _DIR_FREE.match(s)
    if m:
        return f"{m.group(1).lower()} " + s[m.end():].strip().lower()
    return None


def code_part(line: str, form: str) -> tuple[str, str]:
    """(label, statement text without a trailing comment) of a non-comment line (fixed
    form: tab-format lines read as the compiler reads them)."""
    if form == "fixed":
        from ..fortran.reader import clean_fixed
        line = clean_fixed(line)  # cut where the file's flags end a statement (reader.source_options)
        label = line[:5].strip()
        body = line[6:] if len(line) > 6 else ""
    else:
        m = re.match(r"^\s*(\d{1,5})\s+(.*)$", line)
        label, body = (m.group(1), m.group(2)) if m else ("", line)
    return label, strip_comment(body)


def head_end(lines: list[str], first: int, form: str) -> int:
    """The last line of the statement that starts at line ``first`` (its continuation lines;
    comment lines between them are part of it)."""
    last = first
    if form == "fixed":
        i = first + 1
        while i <= len(lines):
            ln = lines[i - 1]
            if is_comment(ln, form):
                i += 1
                continue
            if len(ln) > 5 and ln[5] not in " 0" and not ln[:5].strip():
                last = i
                i += 1
                continue
            break
        return last
    i = first
    while i <= len(lines) and strip_comment(lines[i - 1]).rstrip().endswith("&"):
        i += 1
        while i <= len(lines) and is_comment(lines[i - 1], form):
            i += 1
        last = i
    return min(last, len(lines))


# loop directives, combined constructs included: `!$omp parallel do simd`, `!$omp target teams
# distribute parallel do`, `!$omp teams loop`, `!$omp taskloop simd`, `!$acc parallel loop`
_OMP_LOOP = r"((target|teams|distribute|parallel)\s+)*(do|loop|taskloop)(\s+simd)?|simd"
_LOOP_DIRECTIVE = re.compile(rf"^(omp\s+({_OMP_LOOP})|acc\s+((parallel|kernels|serial)\s+)?loop|"
                             r"(dir|dec|gcc|ibm|pgi)\s)\b")
_END_LOOP_DIRECTIVE = re.compile(rf"^omp\s+end\s+({_OMP_LOOP})\b|"
                                 r"^acc\s+end\s+((parallel|kernels|serial)\s+)?loop\b")


class TextRefusal(Exception):
    def __init__(self, code: str, message: str, line: int):
        super().__init__(message)
        self.code, self.message, self.line = code, message, line


@dataclass
class Directive:
    first: int
    last: int
    text: str  # after the sentinel, continuation lines joined, lower case


def directives(lines: list[str], lo: int, hi: int, form: str) -> list[Directive]:
    """The directives in lines ``lo``..``hi``, each with its continuation lines (fixed form:
    a mark in column 6 of the sentinel line; free form: a trailing ``&``)."""
    out: list[Directive] = []
    cont = False
    for i in range(max(lo, 1), min(hi, len(lines)) + 1):
        d = directive(lines[i - 1], form)
        if d is None:
            cont = False
            continue
        raw = lines[i - 1]
        fixed_cont = form == "fixed" and len(raw) > 5 and raw[5] not in " 0"
        piece = d.lstrip("&").strip()
        if out and (cont or fixed_cont) and out[-1].last == i - 1:
            out[-1].last = i
            out[-1].text += " " + re.sub(r"^(omp|acc)\s*&?\s*", "", piece)
        else:
            out.append(Directive(i, i, piece))
        cont = form == "free" and d.rstrip().endswith("&")
        if cont:
            out[-1].text = out[-1].text.rstrip("& ").strip()
    for x in out:  # `!$omp enddo`, `!$omp endparallel`: spelled as gfortran also takes them
        x.text = _END_GLUED.sub(r"\1end ", x.text)
    return out


_END_GLUED = re.compile(r"^((?:omp|acc)\s+)end(?=(parallel|do|simd|single|master|masked|critical|sections|workshare|"
                        r"target|teams|distribute|loop|taskloop|kernels|serial|atomic|task|data)\b)")


def nest_span(lines: list[str], first: int, last: int, form: str, routine: tuple[int, int],
              regions_ok: bool = False, statements: Optional[list[tuple[int, int]]] = None) -> tuple[int, int]:
    """The lines a loop nest occupies with the directives that belong to it: loop directives
    (``!$omp parallel do``, ``!$omp simd``, ``!dir$ ivdep``...) just above its DO, and the
    matching ``!$omp end ... do`` just below its end, and the conditional-compilation groups
    it shares lines with (:func:`preprocessor_span`, given the routine's other
    ``statements``). Raises TextRefusal when the nest is not where the IR says (included
    text, macro), shares a line with another statement, holds preprocessor lines it cannot
    be cut out with, or sits inside an OpenMP parallel region (a CALL there would run once
    per thread) unless ``regions_ok`` (the caller serialises the region:
    :func:`parallel_region`)."""
    if not (1 <= first <= last <= len(lines)):
        raise TextRefusal("nest-not-in-source", f"lines {first}-{last} are not in the file", first)
    label, code = code_part(lines[first - 1], form)
    if is_comment(lines[first - 1], form) or not re.match(r"\s*(\w+\s*:\s*)?do(?![a-z_])", code, re.IGNORECASE):
        raise TextRefusal("nest-not-in-source", f"line {first} of the file is not the DO statement the IR holds "
                          "(the loop comes from an INCLUDE file or a macro): it cannot be replaced there", first)
    lo, hi = preprocessor_span(lines, first, last, form, routine, statements)
    for i in (first, last):
        if not is_comment(lines[i - 1], form) and ";" in code_part(lines[i - 1], form)[1]:
            raise TextRefusal("shared-line", f"line {i} holds another statement besides the loop (';'): "
                              "the nest cannot be cut out of it", i)
    above, end_dir = _attached_directives(lines, first, last, form, routine)
    start = min(above[-1].first if above else first, lo)
    end = max(end_dir.last if end_dir else last, hi)
    region = _open_parallel_region(lines, routine[0], first, form)
    if region and not regions_ok:
        raise TextRefusal("openmp-region", f"the loop is inside the OpenMP parallel region opened at line {region}: "
                          "a kernel launched there would run once per thread", first)
    return start, end


_PP_BRANCH = re.compile(r"^#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_PP_OPEN = re.compile(r"^#\s*(if|ifdef|ifndef)\b")
_PP_CLOSE = re.compile(r"^#\s*endif\b")
_BLOCK_WORD = re.compile(r"^\s*(\d+\s+)?(else|elseif|else\s+if|end|endif|enddo|endselect|case|contains)\b", re.IGNORECASE)


def preprocessor_span(lines: list[str], first: int, last: int, form: str, routine: tuple[int, int],
                      statements: Optional[list[tuple[int, int]]]) -> tuple[int, int]:
    """Lines ``first``..``last`` widened to the conditional-compilation groups (``#if`` ..
    ``#endif``) they share a line with. CCS-QCD writes its loop headers twice, for OpenACC
    and for OpenMP (``#ifdef _OPENACC`` / ``#else`` / ``#endif`` between the DO lines and the
    body): the IR holds the branch this build takes, and the copy replaces the whole groups
    with the kernel's CALL -- the copy is for the configuration it is compiled with, as the
    kernel is. Refused (``preprocessor-in-nest``) when there are preprocessor lines and the
    caller gave no ``statements`` (the (line, end line) of the routine's statements outside
    the nest), when another statement starts or ends in the widened lines, when they hold
    other preprocessor lines (``#define``, ``#include``: the rest of the file may need them)
    or block keywords of code outside the nest (an ELSE, an END), or when a group is not
    closed within the routine."""
    pp = [i for i in range(first, last + 1) if lines[i - 1].startswith("#")]
    if not pp:
        return first, last
    if statements is None:
        raise TextRefusal("preprocessor-in-nest", f"preprocessor line {pp[0]} inside the loop nest: the nest differs "
                          "between configurations, one Kokkos kernel cannot stand for all of them", pp[0])
    groups: list[list[int]] = []  # the lines of each group's #if, #elif, #else and #endif, at every depth
    stack: list[list[int]] = []
    for i in range(routine[0], min(routine[1], len(lines)) + 1):
        t = lines[i - 1]
        if _PP_OPEN.match(t):
            stack.append([i])
        elif stack and _PP_BRANCH.match(t):
            stack[-1].append(i)
            if _PP_CLOSE.match(t):
                groups.append(stack.pop())
        elif _PP_CLOSE.match(t):
            raise TextRefusal("preprocessor-in-nest", f"preprocessor line {i} closes a group opened outside the "
                              "routine: the nest cannot be cut out with it", i)
    if stack:
        raise TextRefusal("preprocessor-in-nest", f"the group opened at line {stack[0][0]} is not closed in the "
                          "routine: the nest cannot be cut out with it", stack[0][0])
    lo, hi = first, last
    grown = True
    while grown:  # a group one of whose lines falls among them, reaching out of them
        grown = False
        for g in groups:
            if any(lo <= i <= hi for i in g) and (g[0] < lo or g[-1] > hi):
                lo, hi, grown = min(lo, g[0]), max(hi, g[-1]), True
    for i in range(lo, hi + 1):
        t = lines[i - 1]
        if t.startswith("#") and not _PP_BRANCH.match(t):
            raise TextRefusal("preprocessor-in-nest", f"preprocessor line {i} ({t.split()[0]}) inside the loop nest: "
                              "the rest of the file may need it, the nest cannot be cut out", i)
        if (i < first or i > last) and not t.startswith("#") and not is_comment(t, form) \
                and _BLOCK_WORD.match(code_part(t, form)[1]):
            raise TextRefusal("preprocessor-in-nest", f"line {i}, beside the loop nest in the preprocessor branches of "
                              f"lines {lo}-{hi}, belongs to a construct around it: the nest cannot be cut out", i)
    for a, b in statements:
        if lo <= a <= hi or (a < lo and lo <= b <= hi):
            raise TextRefusal("preprocessor-in-nest", f"the statement at line {a} shares the preprocessor branches of "
                              f"lines {lo}-{hi} with the loop nest: the nest cannot be cut out alone", a)
    if form == "free" and lo < first:
        prev = lo - 1
        while prev >= routine[0] and (is_comment(lines[prev - 1], form) or lines[prev - 1].startswith("#")):
            prev -= 1
        if prev >= routine[0] and strip_comment(lines[prev - 1]).rstrip().endswith("&"):
            raise TextRefusal("preprocessor-in-nest", f"line {prev} continues into the preprocessor branches of "
                              f"lines {lo}-{hi}: the nest cannot be cut out", prev)
    return lo, hi


def _attached_directives(lines: list[str], first: int, last: int, form: str,
                         routine: tuple[int, int]) -> tuple[list[Directive], Optional[Directive]]:
    """The loop directives of the DO at ``first`` (ending at ``last``): those in the comment
    block right above it, nearest first, up to the first other directive; and the END
    directive in the comment block right below its end, or None."""
    above = first - 1
    while above >= routine[0] and is_comment(lines[above - 1], form):
        above -= 1
    run: list[Directive] = []
    for d in reversed(directives(lines, above + 1, first - 1, form)):
        if not _LOOP_DIRECTIVE.match(d.text):
            break
        run.append(d)
    below = last + 1
    while below <= routine[1] and is_comment(lines[below - 1], form):
        below += 1
    after = directives(lines, last + 1, below - 1, form)
    return run, (after[0] if after and _END_LOOP_DIRECTIVE.match(after[0].text) else None)


def loop_directives(lines: list[str], first: int, last: int, form: str,
                    routine: tuple[int, int]) -> list[tuple[int, int]]:
    """The line ranges of the ``!$omp``/``!$acc`` loop directives of the DO at ``first``
    (ending at ``last``) and of their END directive, [] when it has none."""
    above, end_dir = _attached_directives(lines, first, last, form, routine)
    out = [(d.first, d.last) for d in above if re.match(r"^(omp|acc)\b", d.text)]
    if out and end_dir is not None:
        out.append((end_dir.first, end_dir.last))
    return out


def _open_parallel_region(lines: list[str], begin: int, line: int, form: str) -> int:
    """The line of an ``!$omp parallel`` (not a combined ``parallel do``) still open at
    ``line``, or 0."""
    stack: list[int] = []
    for d in directives(lines, begin, line - 1, form):
        if re.match(r"^omp\s+parallel\b(?!\s+(do|sections|workshare)\b)", d.text):
            stack.append(d.first)
        elif re.match(r"^omp\s+end\s+parallel\b(?!\s+(do|sections|workshare)\b)", d.text) and stack:
            stack.pop()
    return stack[-1] if stack else 0


# what an OpenMP parallel region may hold to run as the serial code it stands for: a
# conforming region of worksharing loops, reductions and synchronisation computes on one
# thread what it computes on many (clauses such as private/reduction keep their meaning)
_SERIALISABLE = re.compile(r"^omp\s+(end\s+)?(parallel|do|single|master|masked|critical|barrier|atomic|flush|simd|"
                           r"do\s+simd)\b(?!\s+(sections|workshare)\b)")
_THREAD_QUERY = re.compile(r"\bomp_(get_thread_num|get_num_threads|get_team_num|in_parallel)\b", re.IGNORECASE)


@dataclass
class Region:
    """An OpenMP parallel region (not a combined ``parallel do``): its opening line, its
    END line, and the directives (line ranges) between them, its own two included."""

    first: int
    last: int
    directives: list[tuple[int, int]]
    why_not: str = ""  # why it cannot run serially ('' when it can)


def parallel_region(lines: list[str], line: int, form: str, routine: tuple[int, int]) -> Optional[Region]:
    """The OpenMP parallel region open at ``line`` (None when none is): a hybrid copy whose
    nest inside it becomes a Kokkos call removes the region's directives (the region then
    runs as its serial code, the nests in parallel as kernels), which is sound when every
    directive in it is a worksharing loop, a reduction or a synchronisation and nothing
    asks which thread it is (``why_not`` says otherwise)."""
    opened = _open_parallel_region(lines, routine[0], line, form)
    if not opened:
        return None
    depth, end = 0, 0
    ds = directives(lines, opened, routine[1], form)
    inside: list[Directive] = []
    for d in ds:
        if re.match(r"^omp\s+parallel\b(?!\s+(do|sections|workshare)\b)", d.text):
            depth += 1
        elif re.match(r"^omp\s+end\s+parallel\b(?!\s+(do|sections|workshare)\b)", d.text):
            depth -= 1
            if depth == 0:
                end = d.last
                inside.append(d)
                break
        inside.append(d)
    if not end:
        return Region(opened, opened, [], f"the OpenMP parallel region opened at line {opened} has no END PARALLEL "
                                         "the text shows")
    why = ""
    for d in inside:
        if d.text.startswith("omp") and not _SERIALISABLE.match(d.text):
            why = f"line {d.first}: !$omp {d.text[4:].split()[0] if len(d.text) > 4 else ''} in the region"
            break
        if d.text.startswith("acc"):
            why = f"line {d.first}: an OpenACC directive in the region"
            break
    if not why:
        for i in range(opened, end + 1):
            if not is_comment(lines[i - 1], form) and _THREAD_QUERY.search(code_part(lines[i - 1], form)[1]):
                why = f"line {i} asks which thread runs it"
                break
    return Region(opened, end, [(d.first, d.last) for d in inside if d.text.startswith("omp")], why)


def upper_style(lines: list[str], line: int, form: str) -> bool:
    """Does the statement at ``line`` spell its keyword in upper case (the file's style)?"""
    code = code_part(lines[line - 1], form)[1].strip()
    letters = [c for c in code[:8] if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters)


def indentation(lines: list[str], line: int, form: str) -> str:
    text = lines[line - 1]
    if form == "fixed":
        from ..fortran.reader import clean_fixed
        text = clean_fixed(text)
        body = text[6:] if len(text) > 6 else ""
        return " " * (6 + len(body) - len(body.lstrip()))
    m = re.match(r"^(\s*)(\d{1,5}\s+)?(\s*)", text)
    return m.group(1) + " " * (len(m.group(2) or "") + len(m.group(3) or ""))


def statement(text: str, form: str, indent: str, label: Optional[int] = None) -> list[str]:
    """One statement as source lines: broken after commas to stay within the form's width."""
    if form == "fixed":
        lab = f"{label:>5d}" if label is not None else "     "
        first_prefix = lab + " " + indent[6:]
        cont_prefix = "     &" + indent[6:] + "  "
        width = FIXED_WIDTH
    else:
        first_prefix = (f"{label} " if label is not None else "") + indent
        cont_prefix = indent + "    "
        width = FREE_WIDTH - 2  # room for ' &'
    parts = _split_after_commas(text)
    out: list[str] = []
    cur = first_prefix
    for p in parts:
        if len(cur) + len(p) > width and cur.strip() and cur not in (first_prefix, cont_prefix):
            out.append(cur.rstrip() + (" &" if form == "free" else ""))
            cur = cont_prefix + p.lstrip()
        else:
            cur += p
    out.append(cur.rstrip())
    return out


def free_lines(text: str, indent: str, width: int = FREE_WIDTH) -> list[str]:
    """A free-form statement within ``width`` columns: broken after a comma or a space
    (outside character literals), continued with ``&``."""
    if len(indent) + len(text) <= width:
        return [indent + text]
    pieces, cur, quote = [], "", None
    for c in text:
        cur += c
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in ", ":
            pieces.append(cur)
            cur = ""
    if cur:
        pieces.append(cur)
    out, line = [], indent
    for p in pieces:
        if len(line) + len(p) > width - 2 and line.strip():
            out.append(line.rstrip() + " &")
            line = indent + "    " + p.lstrip()
        else:
            line += p
    out.append(line.rstrip())
    return out


def _split_after_commas(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for c in text:
        cur += c
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 1:
            parts.append(cur)
            cur = ""
    if cur:
        parts.append(cur)
    return [p if i == 0 else " " + p.lstrip() for i, p in enumerate(parts)]


def comment(text: str, form: str, indent: str = "") -> str:
    """A comment line (``C`` in column 1 in fixed form; free form within 132 columns)."""
    if form == "fixed":
        return "C     " + text
    line = indent + "! " + text
    return line if len(line) <= FREE_WIDTH else line[:FREE_WIDTH - 3] + "..."


def apply_edits(lines: list[str], edits: list[Edit]) -> list[str]:
    """``lines`` with the edits applied (they must not overlap); the original is untouched."""
    out = list(lines)
    for e in sorted(edits, key=lambda x: x.first, reverse=True):
        out[e.first - 1:e.last] = list(e.text)
    return out
