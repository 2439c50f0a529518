"""Reading a Fortran file into the text fparser sees, with a map back to the original lines.

Steps (each a pure function over text, except the file reads at the edge):

1. form: free or fixed as gfortran takes it: ``-ffree-form``/``-ffixed-form`` among the
   file's flags (:func:`source_options`), else by extension, else by sniffing the content;
2. C preprocessing when the file needs it (``.F``/``.F90``... or ``#`` lines), by gfortran
   itself (``gfortran -E -cpp``, :mod:`.cpp`): the text is what gfortran compiles;
3. Fortran ``include 'x.inc'`` expanded (searched in the file's directory, then the
   include dirs);
4. fixed-form clean-up: tabs in columns 1-6, columns past 72 dropped (past the length
   ``-ffixed-line-length-N`` gives; none with ``-ffixed-line-length-none``);
5. statements fparser cannot parse but the IR must report (ASSIGN, assigned GOTO) are
   replaced by ``CONTINUE`` and remembered, so they come back as ``Unsupported`` nodes;
   Fortran 2018 locality specs of DO CONCURRENT (``local(x)``), which fparser rejects, are
   dropped from the text it sees (DO CONCURRENT is reported unsupported with its line
   anyway, and the rest of the unit must not be lost to it).

Every output line keeps where it came from: ``LineOrigin(file, line, main_line)`` where
``file``/``line`` is the file and line the text really comes from and ``main_line`` the
line in the main file (the ``include`` line for included text).
"""
from __future__ import annotations

import contextvars
import functools

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

FIXED_EXTS = {".f", ".for", ".f77", ".ftn", ".fpp"}
FREE_EXTS = {".f90", ".f95", ".f03", ".f08", ".f18"}
CPP_EXTS = {".F", ".FOR", ".F77", ".FTN", ".FPP", ".F90", ".F95", ".F03", ".F08", ".F18", ".fpp"}
FORTRAN_EXTS = {e for e in FIXED_EXTS | FREE_EXTS} | {e.upper() for e in FIXED_EXTS | FREE_EXTS}


@dataclass(frozen=True)
class LineOrigin:
    file: str  # the file the text comes from (the main file or an include file)
    line: int  # line in that file
    main_line: int  # line in the main file (the include line for included text)


@dataclass
class SourceText:
    path: str
    form: str  # 'free' | 'fixed'
    text: str
    origins: list[LineOrigin]  # one per line of ``text``
    fixed_length: Optional[int] = 72  # the fixed-form line length it was read with (None: no limit)
    includes: list[str] = field(default_factory=list)
    preprocessed: bool = False
    # line index (1-based, in ``text``) -> (construct, reason, original statement text)
    replaced: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    errors: list[tuple[str, int, str, str]] = field(default_factory=list)  # (file, line, code, message)

    def origin(self, line: int) -> LineOrigin:
        if 1 <= line <= len(self.origins):
            return self.origins[line - 1]
        if self.origins:
            return self.origins[-1]
        return LineOrigin(self.path, line, line)


@dataclass(frozen=True)
class SourceOptions:
    """How gfortran reads the source under the file's flags: ``form`` forced by
    ``-ffree-form``/``-ffixed-form`` (None: by extension), and the fixed-form line length
    (``-ffixed-line-length-N``; None: ``-none``/``-0``, no column limit)."""
    form: Optional[str] = None
    fixed_length: Optional[int] = 72


_OPTIONS: contextvars.ContextVar[SourceOptions] = contextvars.ContextVar("pf_source_options",
                                                                         default=SourceOptions())


def options_of_fflags(fflags) -> SourceOptions:
    """The :class:`SourceOptions` gfortran takes from ``fflags`` (the last of each kind wins,
    as on gfortran's command line)."""
    form: Optional[str] = None
    length: Optional[int] = 72
    for f in fflags or ():
        f = str(f)
        if f == "-ffree-form":
            form = "free"
        elif f == "-ffixed-form":
            form = "fixed"
        elif f.startswith("-ffixed-line-length-"):
            v = f[len("-ffixed-line-length-"):]
            if v in ("none", "0"):
                length = None
            elif v.isdigit():
                length = int(v)
    return SourceOptions(form, length)


@contextmanager
def source_options(opts: SourceOptions) -> Iterator[None]:
    """Read sources with these options inside the block (the program model sets them per
    file from its flags, as ``ftypes.default_kinds`` does for -fdefault-real-8)."""
    token = _OPTIONS.set(opts)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def current_options() -> SourceOptions:
    return _OPTIONS.get()


def form_of(path: str | Path, text: str | None = None) -> str:
    """'fixed' or 'free': as the flags in force say (:func:`source_options`), else by
    extension, else by sniffing ``text``."""
    forced = _OPTIONS.get().form
    if forced is not None:
        return forced
    ext = Path(path).suffix
    if ext.lower() in FREE_EXTS:
        return "free"
    if ext.lower() in FIXED_EXTS:
        return "fixed"
    return sniff_form(text or "")


def sniff_form(text: str) -> str:
    fixed = free = 0
    for raw in text.splitlines()[:400]:
        if not raw.strip() or raw.startswith("#"):
            continue
        c0 = raw[0]
        if c0 in "cC*" and (len(raw) == 1 or not re.match(r"[a-zA-Z_ ]*\s*(=|::|\()", raw)):
            fixed += 2
            continue
        if c0 == "\t" or (len(raw) > 6 and raw[:5].strip() == "" and raw[5] not in " 0" and not raw[5].isalpha()):
            fixed += 1  # tab format or a continuation mark in column 6
        if re.match(r"^[ \d]{5}\s", raw) and raw[:5].strip().isdigit():
            fixed += 1  # statement label in columns 1-5
        if raw.rstrip().endswith("&"):
            free += 2
        if re.match(r"^\S", raw) and c0 not in "cC*!0123456789":
            free += 1  # statement in column 1
    return "fixed" if fixed > free else "free"


def needs_cpp(path: str | Path, text: str) -> bool:
    if Path(path).suffix in CPP_EXTS and Path(path).suffix not in FIXED_EXTS | FREE_EXTS:
        return True
    return any(line.startswith("#") for line in text.splitlines())


# --------------------------------------------------------------------------- preprocessing


def preprocess(text: str, path: str, include_dirs=(), defines: dict | None = None, form: str = "free"):
    """C preprocessing as gfortran does it (:mod:`.cpp`: ``gfortran -E -cpp``). Returns
    (text, origins as (file, line) per output line, errors [(file, line, message)],
    ``#include``d files). Raises RuntimeError when gfortran cannot run."""
    from .cpp import preprocess as gfortran_cpp

    return gfortran_cpp(text, path, include_dirs, defines, form)


# --------------------------------------------------------------------------- includes

_INCLUDE_RE = re.compile(r"""^\s*include\s*(['"])([^'"]+)\1\s*(!.*)?$""", re.IGNORECASE)


def _is_fixed_comment(line: str) -> bool:
    return bool(line) and (line[0] in "cC*!dD" and not line[:6].strip().isdigit()) and line[0] != " "


def strip_comment(text: str) -> str:
    """``text`` without a ``!`` comment outside character literals."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "!":
            return text[:i]
    return text


def find_include(name: str, from_file: str, include_dirs=()) -> Path | None:
    """Where gfortran finds an INCLUDE: next to the including file, in the -I directories,
    then in the compiler's own directory (``omp_lib.h``, ``openacc_lib.h``)."""
    cands = [Path(from_file).resolve().parent / name] + [Path(d) / name for d in include_dirs]
    compiler = compiler_include_dir()
    if compiler is not None:
        cands.append(compiler / name)
    for c in cands:
        if c.is_file():
            return c
    return None


@functools.lru_cache(maxsize=None)
def compiler_include_dir() -> Path | None:
    """gfortran's own include directory (``gfortran -print-file-name=finclude``), or None
    when there is no gfortran."""
    import shutil
    import subprocess

    fc = shutil.which("gfortran")
    if fc is None:
        return None
    try:
        out = subprocess.run([fc, "-print-file-name=finclude"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    d = Path(out.strip())
    return d if out.strip() and d.is_dir() else None


def expand_includes(lines: list[str], origins: list[LineOrigin], form: str, include_dirs=(),
                    includes: list[str] | None = None, errors: list | None = None, depth: int = 0):
    """Replace Fortran ``include 'x'`` lines by the file's lines (recursively)."""
    out_lines: list[str] = []
    out_orig: list[LineOrigin] = []
    includes = includes if includes is not None else []
    errors = errors if errors is not None else []
    for ln, org in zip(lines, origins):
        body = ln
        if form == "fixed":
            if _is_fixed_comment(ln):
                out_lines.append(ln)
                out_orig.append(org)
                continue
            body = ln[6:] if len(ln) > 6 else ""
            if ln[:6].strip():
                body = ""  # labelled or continuation: not an include line
        m = _INCLUDE_RE.match(body)
        if not m:
            out_lines.append(ln)
            out_orig.append(org)
            continue
        name = m.group(2)
        found = find_include(name, org.file, include_dirs)
        if found is None or depth > 20:
            errors.append((org.file, org.line, "include-not-found",
                           f"include file '{name}' not found next to {org.file} or in the include dirs (add -I DIR)"))
            out_lines.append("" if form == "free" else "")
            out_orig.append(org)
            continue
        includes.append(str(found))
        try:
            inc_text = found.read_text(errors="replace")
        except OSError as exc:
            errors.append((org.file, org.line, "include-not-found", f"cannot read include file {found}: {exc}"))
            out_lines.append("")
            out_orig.append(org)
            continue
        inc_lines = inc_text.split("\n")
        if inc_lines and inc_lines[-1] == "":
            inc_lines.pop()
        inc_orig = [LineOrigin(str(found), i + 1, org.main_line) for i in range(len(inc_lines))]
        sub_l, sub_o = expand_includes(inc_lines, inc_orig, form, include_dirs, includes, errors, depth + 1)
        out_lines.extend(sub_l)
        out_orig.extend(sub_o)
    return out_lines, out_orig


# --------------------------------------------------------------------------- fixed-form clean-up


def clean_fixed(line: str) -> str:
    if "\t" in line[:7]:
        m = re.match(r"^([ 0-9]{0,5})\t(.*)$", line)
        if m:
            label, rest = m.group(1).strip(), m.group(2)
            if rest[:1] in "123456789" and not label:
                line = "     " + rest[0] + rest[1:]
            else:
                line = f"{label:<5} " + rest
    limit = _OPTIONS.get().fixed_length
    if limit is not None and len(line) > limit and not _is_fixed_comment(line):
        line = line[:limit]
    return line


# Statements fparser rejects but the IR must report: replaced by CONTINUE, remembered.
_ASSIGN_RE = re.compile(r"^assign\s*\d+\s*to\s*[a-z]\w*\s*$", re.IGNORECASE)
_AGOTO_RE = re.compile(r"^go\s*to\s*[a-z]\w*\s*(,?\s*\([\d\s,]*\))?\s*$", re.IGNORECASE)
_PAUSE_RE = re.compile(r"^pause\b.*$", re.IGNORECASE)


def replace_unparsable(lines: list[str], form: str) -> dict[int, tuple[str, str, str]]:
    """Rewrite in place; return {1-based line: (construct, reason, text)}."""
    replaced = {}
    for idx, ln in enumerate(lines):
        if form == "fixed":
            if _is_fixed_comment(ln) or len(ln) < 7 or ln[5] not in " 0":
                continue
            head, stmt = ln[:6], ln[6:]
        else:
            m = re.match(r"^(\s*\d*\s*)(.*)$", ln)
            head, stmt = m.group(1), m.group(2)
            stmt = stmt.split("!")[0]
        s = stmt.strip()
        what = None
        if _ASSIGN_RE.match(s):
            what = ("unsupported-construct", "ASSIGN of a statement label (deleted feature) cannot be modelled")
        elif _AGOTO_RE.match(s) and not re.match(r"^go\s*to\s*\d", s, re.IGNORECASE):
            what = ("unsupported-construct", "assigned GOTO (deleted feature) cannot be modelled")
        elif _PAUSE_RE.match(s):
            what = ("unsupported-construct", "PAUSE (deleted feature) cannot be modelled")
        if what:
            replaced[idx + 1] = (what[0], what[1], s)
            lines[idx] = head + "continue"
    return replaced


_DO_CONCURRENT_RE = re.compile(r"^(\s*(?:\d+\s+)?(?:\w+\s*:\s*)?do\s+concurrent\s*)\(", re.IGNORECASE)
_LOCALITY_RE = re.compile(r"^\s*(local_init|local|shared|default|reduce)\s*\(", re.IGNORECASE)


def drop_locality_specs(lines: list[str], form: str) -> None:
    """``do concurrent (i=1:n) local(t) shared(a)`` -> ``do concurrent (i=1:n)``, in place
    (free-form statements on one line; fparser 0.2 does not know Fortran 2018 locality)."""
    if form != "free":
        return
    for idx, ln in enumerate(lines):
        m = _DO_CONCURRENT_RE.match(ln)
        if not m:
            continue
        depth, end = 0, None
        for j in range(m.end() - 1, len(ln)):
            if ln[j] == "(":
                depth += 1
            elif ln[j] == ")":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
        if end is None:
            continue
        rest = ln[end:]
        code, bang, comment = rest.partition("!")
        if _LOCALITY_RE.match(code) and not code.rstrip().endswith("&"):
            lines[idx] = ln[:end] + (" " + bang + comment if bang else "")


def read_source(path: str | Path, include_dirs=(), defines: dict | None = None,
                text: str | None = None) -> SourceText:
    """Read ``path`` (or use ``text``) into the text fparser sees, with its line map."""
    path = str(path)
    if text is None:
        with open(path, "r", errors="replace") as fh:
            text = fh.read()
    form = form_of(path, text)
    errors: list[tuple[str, int, str, str]] = []
    preprocessed = False
    headers: list[str] = []
    if needs_cpp(path, text):
        try:
            ptext, porig, perrs, headers = preprocess(text, path, include_dirs, defines, form)
            preprocessed = True
            for f, l, msg in perrs:
                if os.path.abspath(f) == os.path.abspath(path):
                    f = path
                errors.append((f, l, "preprocessor-error", msg))
            lines = ptext.split("\n")
            origins = [LineOrigin(f, l, l if os.path.abspath(f) == os.path.abspath(path) else 0) for f, l in porig]
            # text from #include'd files: main_line is the last main-file line seen
            last = 1
            fixed_orig = []
            for o in origins:
                if o.main_line:
                    last = o.main_line
                    fixed_orig.append(o)
                else:
                    fixed_orig.append(LineOrigin(o.file, o.line, last))
            origins = fixed_orig
        except RuntimeError as exc:  # gfortran missing or not running: reported on the file
            errors.append((path, 1, "preprocessor-error", f"C preprocessing failed: {exc}"))
            lines = text.split("\n")
            origins = [LineOrigin(path, i + 1, i + 1) for i in range(len(lines))]
    else:
        lines = text.split("\n")
        origins = [LineOrigin(path, i + 1, i + 1) for i in range(len(lines))]
    includes: list[str] = list(headers)  # #include'd headers, then Fortran INCLUDE files
    lines, origins = expand_includes(lines, origins, form, include_dirs, includes, errors)
    if form == "fixed":
        lines = [clean_fixed(ln) for ln in lines]
    replaced = replace_unparsable(lines, form)
    drop_locality_specs(lines, form)
    # drop leftover preprocessor lines (e.g. #pragma) that fparser would reject
    lines = ["" if ln.startswith("#") else ln for ln in lines]
    includes = list(dict.fromkeys(includes))
    return SourceText(path=path, form=form, text="\n".join(lines), origins=origins, includes=includes,
                      preprocessed=preprocessed, replaced=replaced, errors=errors,
                      fixed_length=_OPTIONS.get().fixed_length)
