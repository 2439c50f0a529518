"""``parse_file``: read, parse with fparser2 (contained, time-limited, cached), build the IR,
analyse it. Never raises for bad Fortran: problems land in ``SourceFile.errors``."""
from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import pickle
import re
import signal
import threading
from pathlib import Path

from ..cache import cache_root
from .limits import ensure_recursion_limit
from . import ir
from .modules import resolve_interfaces
from .reader import SourceText, read_source, strip_comment

# CPU seconds allowed to parse one program unit, and again to build and analyse a file's
# IR: a base plus a share per 1,000 lines (fparser2 needs about 1 s per 1,000 lines);
# PORT_FORTRAN_PARSE_TIMEOUT overrides it with a fixed figure.
PARSE_TIMEOUT_BASE_S = 60.0
PARSE_TIMEOUT_PER_KLINE_S = 30.0


def default_timeout(lines: int) -> float:
    env = os.environ.get("PORT_FORTRAN_PARSE_TIMEOUT")
    if env:
        try:
            return float(env)
        except ValueError:
            pass
    return PARSE_TIMEOUT_BASE_S + PARSE_TIMEOUT_PER_KLINE_S * lines / 1000.0


_MEM_CACHE: dict[str, bytes] = {}  # pickled SourceFiles
_MEM_CACHE_MAX = 256
_LOCK = threading.Lock()
_PARSER = None


# modules that work on whole programs, after the per-file parse: they do not change what
# the cache holds, so editing them keeps it (program.py does: the per-file analysis of
# calls resolves callees and their impurities through a program of the file)
_NOT_PER_FILE = {"interproc.py", "commands.py", "__init__.py"}


def _code_version() -> str:
    h = hashlib.sha256()
    for p in sorted(Path(__file__).parent.glob("*.py")):
        if p.name not in _NOT_PER_FILE:
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


_VERSION = _code_version()


def cache_dir() -> Path | None:
    """The parse cache on disk, under the cache root (None: ``PORT_FORTRAN_NO_PARSE_CACHE``)."""
    if os.environ.get("PORT_FORTRAN_NO_PARSE_CACHE"):
        return None
    return cache_root() / "parse"


# discovery lives in .discovery (the module resolver needs it without the parser);
# re-exported here, where callers have always found it
from .discovery import APP_MARKER, C_EXTS, default_include_dirs, discover, discover_c  # noqa: E402,F401


# --------------------------------------------------------------------------- fparser


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that fparser's broad handlers let it through."""


def _parser():
    global _PARSER
    if _PARSER is None:
        from fparser.two.parser import ParserFactory

        from .fparser_chains import install
        install()  # long operator chains in one pass (no recursion per operator)
        _PARSER = ParserFactory().create(std="f2008")
    return _PARSER


def _fparse(src: SourceText):
    """Returns (tree, None) or (None, Diagnostic)."""
    from fparser.common.readfortran import FortranStringReader
    from fparser.common.sourceinfo import FortranFormat
    from fparser.two.symbol_table import SYMBOL_TABLES
    from fparser.two.utils import FortranSyntaxError

    parser = _parser()
    SYMBOL_TABLES.clear()
    # comments are not needed (directives are read from the original lines) and fparser
    # rejects a comment between DOs sharing a terminal statement (the Livermore loops)
    reader = FortranStringReader(src.text, ignore_comments=True)
    reader.set_format(FortranFormat(src.form == "free", False))
    sink = io.StringIO()
    log = logging.getLogger("fparser")
    messages: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler = _Collect(level=logging.ERROR)
    log.addHandler(handler)
    propagate, log.propagate = log.propagate, False
    try:
        with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            tree = parser(reader)
    except FortranSyntaxError as exc:
        return None, _syntax_diag(src, str(exc))
    except SystemExit:
        msg = messages[-1] if messages else (sink.getvalue() or "fparser gave up reading the file")
        return None, _syntax_diag(src, msg)
    except RecursionError:
        return None, ir.Diagnostic("parse-error", "expression nesting too deep for the parser", 1, src.path)
    except Exception as exc:  # fparser internal errors on odd input
        return None, _syntax_diag(src, f"{type(exc).__name__}: {exc}")
    finally:
        log.removeHandler(handler)
        log.propagate = propagate
    if tree is None:
        return None, ir.Diagnostic("syntax-error", "no Fortran program units found", 1, src.path)
    return tree, None


# a declared codimension: `integer :: n[*]`, `real, allocatable :: a(:,:)[:]`
_CODIMENSION_RE = re.compile(r"::.*\b\w+\s*(\([^()]*\))?\s*\[[^\]]*\]")


def _syntax_diag(src: SourceText, msg: str) -> ir.Diagnostic:
    # readfortran's own format: "    3:  foo: <== No construct following construct-name."
    m = re.search(r"^\s*(\d+):(.*?)<==\s*(.*)$", msg, re.MULTILINE)
    if m:
        raw = int(m.group(1))
        org = src.origin(raw)
        return ir.Diagnostic("syntax-error", f"syntax error: {m.group(2).strip()} ({m.group(3).strip()})",
                             org.line, org.file)
    m = re.search(r"at line (\d+)", msg)
    raw = int(m.group(1)) if m else 0
    if not raw:
        m = re.search(r"line[s]?\s*#?\s*(\d+)", msg)
        raw = int(m.group(1)) if m else 1
    org = src.origin(raw)
    lines = src.text.split("\n")
    text = lines[raw - 1].strip() if 1 <= raw <= len(lines) else ""
    m2 = re.search(r">>>(.*)", msg)
    if m2 and m2.group(1).strip():
        text = m2.group(1).strip()
    detail = ""
    for ln in msg.splitlines():
        if ln.strip() and not ln.startswith(">>>") and not re.match(r"^\s*at line \d+\s*$", ln):
            detail = ln.strip()
            break
    message = f"syntax error: {text}" + (f" ({detail})" if detail and detail not in text else "")
    code = strip_comment(text)
    if _CODIMENSION_RE.search(code):
        return ir.Diagnostic("coarray", f"coarray Fortran (a codimension in `{code.strip()}`) is "
                             "not supported: the parser reads Fortran 2008 without coarrays", org.line, org.file)
    if src.preprocessed:
        # an identifier left as written by the preprocessor is often a macro the build
        # defines (-D_NX=400): say so
        macros = [t for t in dict.fromkeys(re.findall(r"(?<![\w'\"])(_[A-Z][A-Z0-9_]*)\b", text))]
        if macros:
            what = "a preprocessor macro that is" if len(macros) == 1 else "preprocessor macros that are"
            message += (f"; {', '.join(macros)} looks like {what} not defined: give -D{macros[0]}=VALUE "
                        "as the build does")
    return ir.Diagnostic("syntax-error", message, org.line, org.file)


def _with_timeout(fn, timeout: float):
    """Run ``fn()`` under a limit of ``timeout`` CPU seconds when we can (main thread:
    ITIMER_PROF/SIGPROF, so a loaded machine does not cut parses short); in other threads
    it runs without a limit."""
    if timeout <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return fn()

    def _raise(signum, frame):
        raise _Timeout()

    try:
        old = signal.signal(signal.SIGPROF, _raise)
    except ValueError:  # not allowed here (e.g. embedded interpreter)
        return fn()
    prev = signal.getitimer(signal.ITIMER_PROF)
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        if prev[0] > 0:
            signal.setitimer(signal.ITIMER_PROF, prev[0], prev[1])


# --------------------------------------------------------------------------- parse_file


def _key(src: SourceText, interfaces: dict | None = None, notes: dict | None = None) -> str:
    h = hashlib.sha256()
    h.update(_VERSION.encode())
    h.update(src.path.encode())
    h.update(src.form.encode())
    h.update(src.text.encode())
    h.update(repr(src.origins[:1] + src.origins[-1:]).encode())
    h.update(repr(sorted(src.replaced.items())).encode())
    h.update(repr(src.errors).encode())  # preprocessor/include errors differ with -D/-I
    h.update(repr(src.includes).encode())
    if interfaces:  # modules of other files: their content decides kinds and types here
        h.update(pickle.dumps(sorted(interfaces.items()), protocol=4))
    h.update(repr(sorted((notes or {}).items())).encode())
    from . import ftypes
    h.update(repr(ftypes.current_kinds()).encode())  # -fdefault-real-8 changes every REAL
    return h.hexdigest()




def _load_disk(key: str) -> bytes | None:
    d = cache_dir()
    if d is None:
        return None
    try:
        return (d / f"{key}.pickle").read_bytes()
    except OSError:
        return None


def _store_disk(key: str, blob: bytes) -> None:
    d = cache_dir()
    if d is None:
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{key}.{os.getpid()}.tmp"
        tmp.write_bytes(blob)
        os.replace(tmp, d / f"{key}.pickle")
    except OSError:
        pass


def _from_blob(blob: bytes) -> ir.SourceFile | None:
    try:
        sf = pickle.loads(blob)  # unpickling is iterative: no recursion, however deep the IR
    except Exception:  # a stale or truncated cache entry: parse again
        return None
    return sf if isinstance(sf, ir.SourceFile) else None


def parse_file(path, include_dirs=(), defines=None, *, modules=None, module_search=None,
               timeout: float | None = None, use_cache: bool = True, fflags=None) -> ir.SourceFile:
    """Parse one Fortran file into the IR (kernels analysed). Never raises for bad input.
    Cached in memory and on disk as pickles: each call returns a fresh copy.

    ``fflags``: the compiler flags the file is built with; those that change the default
    kinds (``ftypes.DEFAULT_KIND_FFLAGS``: -fdefault-real-8 ...) and the source form
    (-ffree-form, -ffixed-form, -ffixed-line-length-N: ``reader.options_of_fflags``) are
    read as gfortran does. None: the kinds and options in force (``ftypes.default_kinds``,
    ``reader.source_options``, e.g. set by the program model for the file), else gfortran's.

    Modules the file USEs but does not define: ``modules`` ({name: ir.ModuleInterface},
    e.g. from a program model), else looked for in the files and trees of
    ``module_search`` (default: the file's directory and ``include_dirs``), whose files are
    parsed with the same options. A module found nowhere leaves its names unknown: the
    kernels that need them are refused with the reason (``SourceFile.missing_modules``)."""
    from . import ftypes, reader

    kinds = ftypes.kinds_of_fflags(fflags) if fflags is not None else ftypes.current_kinds()
    opts = reader.options_of_fflags(fflags) if fflags is not None else reader.current_options()
    with ftypes.default_kinds(kinds), reader.source_options(opts):
        return _parse_file(path, include_dirs, defines, modules, module_search, timeout, use_cache)


def _parse_file(path, include_dirs, defines, modules, module_search, timeout, use_cache) -> ir.SourceFile:
    ensure_recursion_limit()
    path = str(path)
    defines = dict(defines or {})
    try:
        with open(path, "r", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        sf = ir.SourceFile(path=path, form="free")
        sf.errors.append(ir.Diagnostic("unreadable", f"cannot read {path}: {exc.strerror or exc}", 0, path))
        return sf
    try:
        src = read_source(path, include_dirs, defines, text=text)
    except Exception as exc:
        sf = ir.SourceFile(path=path, form="free")
        sf.errors.append(ir.Diagnostic("read-error", f"cannot prepare {path}: {type(exc).__name__}: {exc}", 1, path))
        return sf
    interfaces, notes = resolve_interfaces(path, src.text, parse_file=parse_file,
                                           include_dirs=tuple(include_dirs), defines=defines,
                                           modules=modules, module_search=module_search)
    key = _key(src, interfaces, notes)
    if use_cache:
        with _LOCK:
            blob = _MEM_CACHE.get(key)
        if blob is None:
            blob = _load_disk(key)
        hit = _from_blob(blob) if blob is not None else None
        if hit is not None:
            with _LOCK:
                _MEM_CACHE[key] = blob
            return hit
    sf = _parse_uncached(src, text, timeout, interfaces, notes)
    if use_cache and not any(e.code in ("parse-timeout", "analysis-timeout") for e in sf.errors):
        try:
            blob = pickle.dumps(sf, protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            return sf
        with _LOCK:
            if len(_MEM_CACHE) >= _MEM_CACHE_MAX:
                _MEM_CACHE.pop(next(iter(_MEM_CACHE)))
            _MEM_CACHE[key] = blob
        _store_disk(key, blob)
    return sf


_START_RE = re.compile(
    r"^\s*(?:(?:recursive|pure|elemental|impure|module)\s+)*"
    r"(?:(?:integer|real|double\s*precision|double\s*complex|complex|logical|character)(?:\s*\*\s*\d+|\s*\([^)]*\))?\s+)?"
    r"(?:(?:recursive|pure|elemental)\s+)*(subroutine|function|program|module|block\s*data|submodule)\b\s*(\w*)",
    re.IGNORECASE)
_END_RE = re.compile(r"^\s*end\s*(subroutine|function|program|module|block\s*data|submodule)?\s*\w*\s*$", re.IGNORECASE)
_END_OTHER_RE = re.compile(r"^\s*end\s*(if|do|select|where|forall|type|interface|associate|enum|critical|team|file"
                           r"|structure|union|map|block(?!\s*data))\b", re.IGNORECASE)
_MODULE_PROC_RE = re.compile(r"^\s*module\s+procedure\b", re.IGNORECASE)


def _statements(text: str, form: str):
    """(line, statement text) of each statement's first line (comments, blank lines and
    continuation lines skipped; labels and trailing comments removed)."""
    continued = False
    for i, line in enumerate(text.split("\n"), 1):
        if form == "fixed":
            if not line or line[0] in "cC*!dD" or len(line) < 7 or line[5] not in " 0":
                continue
            st = strip_comment(line[6:])
        else:
            body = strip_comment(line)
            was_continued, continued = continued, body.rstrip().endswith("&")
            if was_continued or not body.strip():
                continue
            st = re.sub(r"^\s*\d+\s", " ", body).rstrip().rstrip("&")
        if st.strip():
            yield i, st


def split_units(text: str, form: str, strict: bool = True) -> list[tuple[int, int]] | None:
    """(first, last) 1-based line ranges of the top-level program units, a main program
    without a PROGRAM statement included (it starts at the first statement outside any
    unit). None when the statements do not nest as units should (then the file is
    parsed whole). ``strict=False``: the units that can be found, for recovering from a
    syntax error (END without a unit ignored, an unclosed unit dropped, no unnamed main)."""
    units = []
    depth = 0
    start = None
    for i, st in _statements(text, form):
        m = _START_RE.match(st)
        if m and m.group(2) and not _MODULE_PROC_RE.match(st):
            if depth == 0:
                start = i
            depth += 1
            continue
        if _END_RE.match(st) and not _END_OTHER_RE.match(st):
            if depth == 0:
                if not strict:
                    continue
                return None
            depth -= 1
            if depth == 0:
                units.append((start, i))
                start = None
            continue
        if depth == 0 and strict:  # a statement outside any unit: an unnamed main program begins
            start = i
            depth = 1
    if depth != 0 and strict:
        return None
    return units


def slice_source(src: SourceText, lo: int, hi: int) -> SourceText:
    """Lines ``lo``..``hi`` of ``src`` as a text of their own, keeping their origins (the
    parse tree's line numbers then map back through the slice)."""
    import dataclasses
    lines = src.text.split("\n")
    return dataclasses.replace(
        src, text="\n".join(lines[lo - 1:hi]), origins=src.origins[lo - 1:hi],
        replaced={k - lo + 1: v for k, v in src.replaced.items() if lo <= k <= hi}, errors=[])


def _unit_timeout(lines: int, timeout: float | None) -> float:
    return timeout if timeout is not None else default_timeout(lines)


def parse_units(src: SourceText, timeout: float | None = 0) -> tuple[list, list[ir.Diagnostic]]:
    """fparser trees of the program units of ``src``: ``([(source slice, tree)], errors)``.

    Each unit is parsed alone (one CPU limit each) when the statement scan finds the
    units, so one bad or slow routine costs only itself, and a main program without a
    PROGRAM statement does not make fparser drop the rest of the file (it reads such a
    program only as a file's last unit). Otherwise the file is parsed whole. ``timeout``:
    CPU seconds per unit (None: the default for its size; 0: no limit)."""
    units = split_units(src.text, src.form)
    if not units or len(units) == 1:
        (tree, diag), = _parse_parts([src], timeout, [])
        if diag is None:
            return [(src, tree)] if tree is not None else [], []
        # one bad routine must not hide the others: the units that can be found, alone
        units = split_units(src.text, src.form, strict=False)
        if len(units) <= 1:
            return [], [diag]
    return _parse_parts([slice_source(src, lo, hi) for lo, hi in units], timeout, None)


def _parse_parts(parts: list[SourceText], timeout, raw: list | None):
    """Parse each part under its own CPU limit. ``raw`` given: return [(tree, diag)];
    else ([(part, tree)], errors)."""
    out, errors = [], []
    for part in parts:
        limit = _unit_timeout(part.text.count("\n") + 1, timeout)
        try:
            with _LOCK:  # fparser keeps global state (symbol tables): one parse at a time per process
                tree, diag = _with_timeout(lambda: _fparse(part), limit)
        except _Timeout:
            first = part.origin(1)
            diag = ir.Diagnostic("parse-timeout", f"parsing this program unit took more than {limit:.0f} CPU "
                                 "seconds; it is skipped (set PORT_FORTRAN_PARSE_TIMEOUT to allow more)",
                                 first.main_line, part.path)
            tree = None
        if raw is not None:
            raw.append((tree, diag))
            continue
        if diag is not None:
            errors.append(diag)
        elif tree is not None:
            out.append((part, tree))
    return raw if raw is not None else (out, errors)


@contextlib.contextmanager
def _gc_paused():
    """The cyclic GC off while a file is parsed: its full collections walk the whole
    fparser tree again and again (the IR build of a 20,000-line routine took 1.9 s with it,
    0.6 s without); what the parse leaves behind is collected when it is back on."""
    import gc
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _parse_uncached(src: SourceText, original_text: str, timeout: float | None, interfaces=None,
                    notes=None) -> ir.SourceFile:
    with _gc_paused():
        return _parse_gc_off(src, original_text, timeout, interfaces, notes)


def _parse_gc_off(src: SourceText, original_text: str, timeout: float | None, interfaces, notes) -> ir.SourceFile:
    from .analysis import analyse_file
    from .build import FileBuilder

    units, errors = parse_units(src, timeout)
    fb = FileBuilder(src, original_text.split("\n"), modules=interfaces, module_notes=notes)
    limit = _unit_timeout(src.text.count("\n") + 1, timeout)

    def work():
        sf = fb.build_units(units)
        analyse_file(sf)
        return sf

    try:
        sf = _with_timeout(work, limit)
    except _Timeout:
        sf = ir.SourceFile(path=src.path, form=src.form, fixed_length=src.fixed_length)
        sf.errors.append(ir.Diagnostic("analysis-timeout", f"building and analysing the IR took more than {limit:.0f} "
                                       "CPU seconds; file skipped (set PORT_FORTRAN_PARSE_TIMEOUT to allow more)",
                                       1, src.path))
    sf.errors[:0] = errors
    sf.errors[:0] = [ir.Diagnostic(code, msg, line, f) for f, line, code, msg in src.errors]
    return sf
