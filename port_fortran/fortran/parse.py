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

from . import ir
from .reader import FORTRAN_EXTS, SourceText, read_source

# CPU seconds allowed for one file: a base plus a share per 1,000 lines (fparser2 needs
# about 2 s per 1,000 lines); PORT_FORTRAN_PARSE_TIMEOUT overrides it with a fixed figure.
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
# parsed files, pickled: every hit unpickles a fresh copy (callers may change what they get;
# unpickling is several times faster than copy.deepcopy of the same IR)
_MEM_CACHE: dict[str, bytes] = {}
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
    if os.environ.get("PORT_FORTRAN_NO_PARSE_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "port-fortran" / "parse"


# --------------------------------------------------------------------------- discovery


def discover(paths) -> list[Path]:
    """Fortran files in the given files and directory trees (sorted, de-duplicated)."""
    out: list[Path] = []
    seen = set()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            cands = sorted(x for x in p.rglob("*") if x.is_file() and x.suffix in FORTRAN_EXTS
                           and not any(part.startswith(".") for part in x.relative_to(p).parts))
        elif p.exists():
            cands = [p]
        else:
            cands = [p]  # reported by parse_file as unreadable
        for c in cands:
            key = str(c.resolve()) if c.exists() else str(c)
            if key not in seen:
                seen.add(key)
                out.append(c)
    return out


def default_include_dirs(paths) -> list[str]:
    """Directories named include/inc/includes inside the given trees (sorted). Callers add
    them after the user's -I dirs, so `port-fortran list fortran_kernels/` finds
    fortran_kernels/include/params.inc; whoever compiles the original must use the same."""
    out: list[str] = []
    for s in paths:
        p = Path(s)
        if p.is_dir():
            for d in sorted(p.rglob("*")):
                if d.is_dir() and d.name.lower() in ("include", "inc", "includes") and str(d) not in out:
                    out.append(str(d))
    return out


# --------------------------------------------------------------------------- fparser


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that fparser's broad handlers let it through."""


def _parser():
    global _PARSER
    if _PARSER is None:
        from fparser.two.parser import ParserFactory
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
    reader = FortranStringReader(src.text, ignore_comments=False)
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


def _key(src: SourceText) -> str:
    h = hashlib.sha256()
    h.update(_VERSION.encode())
    h.update(src.path.encode())
    h.update(src.form.encode())
    h.update(src.text.encode())
    h.update(repr(src.origins[:1] + src.origins[-1:]).encode())
    h.update(repr(sorted(src.replaced.items())).encode())
    h.update(repr(src.errors).encode())  # preprocessor/include errors differ with -D/-I
    h.update(repr(src.includes).encode())
    return h.hexdigest()


def _load_disk(key: str) -> bytes | None:
    d = cache_dir()
    if d is None:
        return None
    p = d / f"{key}.pickle"
    try:
        return p.read_bytes()
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


def _unpickle(blob: bytes) -> ir.SourceFile | None:
    try:
        sf = pickle.loads(blob)
    except Exception:  # a cache entry from another version or a torn write: parse again
        return None
    return sf if isinstance(sf, ir.SourceFile) else None


def parse_file(path, include_dirs=(), defines=None, *, timeout: float | None = None,
               use_cache: bool = True) -> ir.SourceFile:
    """Parse one Fortran file into the IR (kernels analysed). Never raises for bad input."""
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
    key = _key(src)
    if use_cache:
        with _LOCK:
            blob = _MEM_CACHE.get(key)
        from_disk = blob is None
        if from_disk:
            blob = _load_disk(key)
        hit = _unpickle(blob) if blob is not None else None
        if hit is not None:
            if from_disk:
                _remember(key, blob)
            return hit
    limit = timeout if timeout is not None else default_timeout(src.text.count("\n") + 1)
    sf = _parse_uncached(src, text, limit)
    if use_cache and not any(e.code == "parse-timeout" for e in sf.errors):
        blob = pickle.dumps(sf, protocol=pickle.HIGHEST_PROTOCOL)
        _remember(key, blob)
        _store_disk(key, blob)
        return pickle.loads(blob)  # the caller's copy; the cache keeps the bytes
    return sf


def _remember(key: str, blob: bytes) -> None:
    with _LOCK:
        if len(_MEM_CACHE) >= _MEM_CACHE_MAX:
            _MEM_CACHE.pop(next(iter(_MEM_CACHE)))
        _MEM_CACHE[key] = blob


_START_RE = re.compile(
    r"^\s*(?:(?:recursive|pure|elemental|impure|module)\s+)*"
    r"(?:(?:integer|real|double\s*precision|double\s*complex|complex|logical|character)(?:\s*\*\s*\d+|\s*\([^)]*\))?\s+)?"
    r"(?:(?:recursive|pure|elemental)\s+)*(subroutine|function|program|module|block\s*data)\b\s*(\w*)",
    re.IGNORECASE)
_END_RE = re.compile(r"^\s*end\s*(subroutine|function|program|module|block\s*data)?\s*\w*\s*(!.*)?$", re.IGNORECASE)


def _stmt_part(line: str, form: str) -> str | None:
    if form == "fixed":
        if not line or line[0] in "cC*!dD" or len(line) < 7 or line[5] not in " 0":
            return None
        return line[6:]
    body = line.split("!")[0]
    return re.sub(r"^\s*\d+\s", " ", body)


def split_units(text: str, form: str) -> list[tuple[int, int]]:
    """(first, last) 1-based line ranges of the top-level program units (a heuristic used
    only to recover from a syntax error)."""
    units = []
    depth = 0
    start = None
    for i, line in enumerate(text.split("\n"), 1):
        st = _stmt_part(line, form)
        if st is None or not st.strip():
            continue
        m = _START_RE.match(st)
        if m and not re.match(r"^\s*module\s+procedure\b", st, re.IGNORECASE) and m.group(2):
            if depth == 0:
                start = i
            depth += 1
            continue
        if _END_RE.match(st) and not re.match(r"^\s*end\s*(if|do|select|where|forall|type|interface|associate|block\b)",
                                              st, re.IGNORECASE):
            if depth > 0:
                depth -= 1
                if depth == 0 and start is not None:
                    units.append((start, i))
                    start = None
    return units


def _blank_outside(src: SourceText, lo: int, hi: int) -> SourceText:
    import dataclasses
    lines = src.text.split("\n")
    kept = [ln if lo <= i <= hi else "" for i, ln in enumerate(lines, 1)]
    return dataclasses.replace(src, text="\n".join(kept))


def _parse_uncached(src: SourceText, original_text: str, timeout: float) -> ir.SourceFile:
    from .analysis import analyse_file
    from .build import FileBuilder

    def work():
        with _LOCK:  # fparser keeps global state (symbol tables): one parse at a time per process
            tree, diag = _fparse(src)
        fb = FileBuilder(src, original_text.split("\n"))
        if diag is None:
            sf = fb.build(tree)
        else:
            # one bad routine must not hide the others: parse each program unit alone
            sf = fb.out
            units = split_units(src.text, src.form)
            if len(units) <= 1:
                sf.errors.append(diag)
            else:
                for lo, hi in units:
                    part = _blank_outside(src, lo, hi)
                    with _LOCK:
                        t, d = _fparse(part)
                    if d is not None:
                        sf.errors.append(d)
                    elif t is not None:
                        fb.src = part
                        fb.build(t)
                fb.src = src
                if not sf.errors:
                    sf.errors.append(diag)
        analyse_file(sf)
        return sf

    try:
        sf = _with_timeout(work, timeout)
    except _Timeout:
        sf = ir.SourceFile(path=src.path, form=src.form)
        sf.errors.append(ir.Diagnostic("parse-timeout", f"parsing took more than {timeout:.0f} CPU seconds; file skipped "
                                       "(set PORT_FORTRAN_PARSE_TIMEOUT to allow more)", 1, src.path))
    sf.errors[:0] = [ir.Diagnostic(code, msg, line, f) for f, line, code, msg in src.errors]
    return sf
