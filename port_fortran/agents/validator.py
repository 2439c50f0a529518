"""The validator: checks a port's C++ before anything is built or run.

1. strip non-code (prose and fences around an LLM answer);
2. reject forbidden patterns — each a :class:`Diagnostic` with a code:
   ``file-io`` (fopen, streams, FILE*, system(), popen: a port must not read the
   reference or write results aside), ``calls-original`` (the original Fortran routine
   ``<k>_`` or an ``extern "C"`` declaration of ``<k>``), ``missing-entry`` (no
   ``<k>_kokkos`` definition; for a hybrid port, no definition of one of its outlined
   nests' entries), ``hard-coded-output`` (big numeric initialisers, many literals with
   more than 8 significant digits that are not constants of the original: stencil weights
   copied from the Fortran are the port's right, see :func:`source_constants`);
3. syntax check with the host compiler: ``g++ -fsyntax-only -std=c++17 -I<kokkos include>
   -I<port dir> -DPF_BACKEND_<B>`` (``syntax-error`` diagnostics, with their lines).

Pure checks are in :func:`check_patterns`; :func:`validate` adds the compiler run.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Optional

from ..fortran.ir import Diagnostic
from .extract import extract_code

_FILE_IO = [
    (r"\bfopen\s*\(", "fopen()"), (r"\bfreopen\s*\(", "freopen()"), (r"\bifstream\b", "std::ifstream"),
    (r"\bofstream\b", "std::ofstream"), (r"\bfstream\b", "std::fstream"), (r"\bFILE\s*\*", "FILE*"),
    (r"\bsystem\s*\(", "system()"), (r"\bpopen\s*\(", "popen()"), (r"\bopen\s*\(\s*\"", "open()"),
    (r"#\s*include\s*<fstream>", "<fstream>"), (r"\bstd::filesystem\b", "std::filesystem"),
    (r"\bexec[lv]p?e?\s*\(", "exec*()"), (r"\bgetenv\s*\(", "getenv()"),
]
_LONG_FLOAT = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fFlL]?(?![\w.])")
MAX_LONG_LITERALS = 12  # literals with > 8 significant digits
MAX_INITIALISER = 24  # numbers in one brace initialiser
# a port's literal is the original's constant when it matches one to this relative
# difference (the same value printed for float or double, or folded from 1/6.)
SAME_CONSTANT_RTOL = 1e-7
# numeric literals of Fortran: 1, 1.5, .5, 1.d0, 0.166666666666667D0, 1e-3_dp, 2.5_8
_FORTRAN_NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)([eEdDqQ][+-]?\d+)?(_\w+)?(?![\w.])")


def strip_comments_and_strings(code: str) -> str:
    """C++ with comments removed and string/char literal contents blanked (line count kept)."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * code.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and code[j] != c:
                j += 2 if code[j] == "\\" else 1
            out.append(c + " " * 0 + c)
            out.append("\n" * code.count("\n", i, min(j, n)))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _line_of(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


def _sig_digits(lit: str) -> int:
    mant = re.split(r"[eE]", lit.rstrip("fFlL"))[0]
    digits = mant.replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) if "." not in mant else len(digits)


def source_constants(kernel) -> list[float]:
    """The numbers the original routine itself contains: every numeric literal of its
    source text (any spelling: 1.0d0, 0.166666666666667D0, 2.5_dp) and the values of its
    named constants and constant tables (PARAMETER, DATA), which a port may print folded
    (1/6. as 0.16666666666666666)."""
    out: list[float] = []
    text = getattr(kernel, "source_text", "") or ""
    for line in text.splitlines():
        if line[:1] in "cC*" and getattr(kernel, "file", "").lower().endswith((".f", ".for", ".f77")):
            continue  # a fixed-form comment line
        code = line.split("!")[0]
        for m in _FORTRAN_NUMBER.finditer(code):
            mant, exp = m.group(1), (m.group(2) or "").lower().replace("d", "e").replace("q", "e")
            try:
                out.append(float(mant + exp))
            except ValueError:
                continue
    for v in list(getattr(kernel, "locals", {}).values()) + list(getattr(kernel, "module_vars", {}).values()):
        vals = v.parameter if isinstance(v.parameter, list) else [v.parameter]
        for x in vals:
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                out.append(float(x))
            elif isinstance(x, complex):
                out += [x.real, x.imag]
    return out


def _is_source_constant(lit: str, constants: list[float]) -> bool:
    """Is the C++ literal one of ``constants`` (absolute values, sorted)?"""
    import bisect

    try:
        v = abs(float(lit.rstrip("fFlL")))
    except ValueError:
        return False
    i = bisect.bisect_left(constants, v)
    return any(abs(v - c) <= SAME_CONSTANT_RTOL * max(v, c) for c in constants[max(0, i - 1):i + 1])


def check_patterns(code: str, kernel: str, entry: Optional[str] = None, file: str = "",
                   constants: tuple = (), entries: Optional[list[str]] = None) -> list[Diagnostic]:
    """Forbidden patterns in ``code`` (the port's .cpp) for kernel ``kernel``; ``entries``:
    every entry the port must define (a hybrid port's outlined nests), else ``entry``.
    ``constants``: the original's own numbers (:func:`source_constants`); a literal equal
    to one of them is never evidence of a hard-coded result."""
    entries = list(entries or [entry or f"{kernel}_kokkos"])
    src = strip_comments_and_strings(code)
    diags: list[Diagnostic] = []
    io = sorted(((m.start(), what) for rx, what in _FILE_IO for m in [re.search(rx, src)] if m))
    if io:
        pos, what = io[0]
        diags.append(Diagnostic("file-io", f"{what} is not allowed in a port: a kernel must not read or write "
                                           "files or run programs", _line_of(src, pos), file))
    k = re.escape(kernel)
    m = re.search(rf"(?<![\w:.>])({k}_|{k.upper()}_?)\s*\(", src)
    if m:
        diags.append(Diagnostic("calls-original", f"calls the original Fortran routine '{m.group(1)}': the port "
                                                  "must compute the result itself", _line_of(src, m.start()), file))
    else:
        m = re.search(rf"extern\s+\"\"[^;{{]*?\b{k}\s*\(", src) or \
            re.search(rf"extern\s+\"\"\s*\{{[^}}]*\b{k}_?\s*\(", src)
        if m:
            diags.append(Diagnostic("calls-original", f"declares the original routine '{kernel}' extern \"C\": the "
                                                      "port must not call it", _line_of(src, m.start()), file))
    for entry in entries:
        if not re.search(rf"\b{re.escape(entry)}\s*\([^;{{]*\)\s*(noexcept\s*)?\{{", src):
            diags.append(Diagnostic("missing-entry", f"no definition of the entry point extern \"C\" void {entry}(...)",
                                    1, file))
    # hard-coded outputs
    consts = sorted({abs(c) for c in constants})
    longs = [m for m in _LONG_FLOAT.finditer(src)
             if _sig_digits(m.group(0)) > 8 and not _is_source_constant(m.group(0), consts)]
    if len(longs) > MAX_LONG_LITERALS:
        diags.append(Diagnostic("hard-coded-output", f"{len(longs)} numeric literals with more than 8 significant "
                                                     "digits: results must be computed, not pasted",
                                _line_of(src, longs[0].start()), file))
    for m in re.finditer(r"\{([^{}]*)\}", src):
        items = [x.strip() for x in m.group(1).split(",") if x.strip()]
        nums = [x for x in items if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fFlL]?", x)
                and not _is_source_constant(x.lstrip("+-"), consts)]
        if len(nums) >= MAX_INITIALISER and len(nums) >= 0.9 * len(items):
            diags.append(Diagnostic("hard-coded-output", f"an initialiser with {len(nums)} numbers: tables of "
                                                         "results are not allowed", _line_of(src, m.start()), file))
            break
    return diags


def _kokkos_host(backend: str):
    """(include dir, extra flags) of a host Kokkos install, or None."""
    try:
        from ..build_runner.kokkos import find_install
    except ImportError:
        return None
    for b in dict.fromkeys((backend, "serial", "openmp")):
        if b not in ("serial", "openmp"):
            continue
        inst = find_install(b)
        if inst is not None and not inst.device_backend:
            inc = Path(inst.prefix) / "include"
            if inc.is_dir():
                flags = ["-fopenmp"] if "openmp" in inst.backends else []
                flags += [f for f in (inst.cxx_flags or "").split() if f.startswith(("-D", "-f", "-m"))]
                return str(inc), flags, b
    return None


def syntax_check(cpp_path: Path, port_dir: Path, backend: str = "serial", timeout_s: float = 300.0,
                 include_dirs: tuple[str, ...] = ()) -> list[Diagnostic]:
    """``g++ -fsyntax-only`` on the port source; [] when it passes or when no Kokkos
    install is found (then the build stage reports it)."""
    cxx = shutil.which("g++") or shutil.which("c++")
    host = _kokkos_host(backend)
    if cxx is None or host is None:
        return []
    inc, flags, host_backend = host
    cmd = [cxx, "-fsyntax-only", "-std=c++17", *flags, f"-I{inc}", f"-I{port_dir}",
           *[f"-I{d}" for d in include_dirs], f"-DPF_BACKEND_{host_backend.upper()}", str(cpp_path)]
    from ..build_runner.sandbox import Limits, run_limited
    from ..build_runner.diagnostics import parse_diagnostics

    res = run_limited(cmd, cwd=str(port_dir), limits=Limits(wall_s=timeout_s, mem_mb=None))
    if res.ok:
        return []
    if res.timed_out:
        return [Diagnostic("syntax-error", f"the syntax check timed out after {timeout_s:g}s", 0, cpp_path.name)]
    diags = [d for d in parse_diagnostics(res.stderr, root=str(port_dir)) if d.code != "compile-warning"]
    out = [Diagnostic("syntax-error", d.message, d.line, d.file or cpp_path.name) for d in diags]
    return out or [Diagnostic("syntax-error", (res.stderr.strip().splitlines() or ["g++ failed"])[-1][:300], 0,
                              cpp_path.name)]


def required_entries(port_dir, kernel: str) -> list[str]:
    """The extern "C" entries a port must define: ``<k>_kokkos``, or for a hybrid port
    (``hybrid.json`` in the port directory) the entry of each outlined loop nest."""
    import json

    p = Path(port_dir) / "hybrid.json"
    if p.is_file():
        try:
            return [o["entry"] for o in json.loads(p.read_text()).get("outlined", [])] or [f"{kernel}_kokkos"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return [f"{kernel}_kokkos"]


def validate(code: str, kernel: str, port_dir: str | Path, *, backend: str = "serial", compile_check: bool = True,
             file_name: Optional[str] = None, include_dirs: tuple[str, ...] = (),
             constants: tuple = ()) -> tuple[str, list[Diagnostic]]:
    """(clean code, diagnostics). The clean code is what should be written as
    ``<k>.kokkos.cpp``; the syntax check runs on a copy beside the port's header so the
    port's files are not touched. ``constants``: the original's numbers (see
    :func:`source_constants`)."""
    entries = required_entries(port_dir, kernel)
    clean = extract_code(code, entries[0]) if "```" in code or "~~~" in code else code
    if not clean.strip():
        return "", [Diagnostic("no-code", "the answer contains no C++ code", 0, file_name or "")]
    name = file_name or f"{kernel}.kokkos.cpp"
    diags = check_patterns(clean, kernel, file=name, constants=constants, entries=entries)
    if diags or not compile_check:
        return clean, diags
    port_dir = Path(port_dir)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", prefix=".pf_validate_", dir=port_dir,
                                     delete=False) as fh:
        fh.write(clean)
        tmp = Path(fh.name)
    try:
        diags = syntax_check(tmp, port_dir, backend, include_dirs=include_dirs)
        for d in diags:
            if d.file and tmp.name in d.file:
                d.file = name
    finally:
        tmp.unlink(missing_ok=True)
    return clean, diags
