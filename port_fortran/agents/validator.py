"""The validator: checks a port's C++ before anything is built or run.

1. strip non-code (prose and fences around an LLM answer);
2. reject forbidden patterns — each a :class:`Diagnostic` with a code:
   ``file-io`` (fopen, streams, FILE*, system(), popen: a port must not read the
   reference or write results aside), ``calls-original`` (the original Fortran routine
   ``<k>_`` or an ``extern "C"`` declaration of ``<k>``), ``missing-entry`` (no
   ``<k>_kokkos`` definition; for a hybrid port, no definition of one of its outlined
   nests' entries), ``hard-coded-output`` (big numeric initialisers, many
   literals with more than 8 significant digits);
3. syntax check with the host compiler: ``g++ -fsyntax-only -std=c++17 -I<kokkos include>
   -I<port dir> -DPF_BACKEND_<B>`` (``syntax-error`` diagnostics, with their lines).

Pure checks are in :func:`check_patterns`; :func:`validate` adds the compiler run.
"""
from __future__ import annotations

import os
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


def check_patterns(code: str, kernel: str, entry: Optional[str] = None, file: str = "",
                   entries: Optional[list[str]] = None) -> list[Diagnostic]:
    """Forbidden patterns in ``code`` (the port's .cpp) for kernel ``kernel``; ``entries``:
    every entry the port must define (a hybrid port's outlined nests), else ``entry``."""
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
    longs = [m for m in _LONG_FLOAT.finditer(src) if _sig_digits(m.group(0)) > 8]
    if len(longs) > MAX_LONG_LITERALS:
        diags.append(Diagnostic("hard-coded-output", f"{len(longs)} numeric literals with more than 8 significant "
                                                     "digits: results must be computed, not pasted",
                                _line_of(src, longs[0].start()), file))
    for m in re.finditer(r"\{([^{}]*)\}", src):
        items = [x.strip() for x in m.group(1).split(",") if x.strip()]
        nums = [x for x in items if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fFlL]?", x)]
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
             file_name: Optional[str] = None, include_dirs: tuple[str, ...] = ()) -> tuple[str, list[Diagnostic]]:
    """(clean code, diagnostics). The clean code is what should be written as
    ``<k>.kokkos.cpp``; the syntax check runs on a copy beside the port's header so the
    port's files are not touched."""
    clean = extract_code(code, required_entries(port_dir, kernel)[0]) if "```" in code or "~~~" in code else code
    if not clean.strip():
        return "", [Diagnostic("no-code", "the answer contains no C++ code", 0, file_name or "")]
    name = file_name or f"{kernel}.kokkos.cpp"
    diags = check_patterns(clean, kernel, file=name, entries=required_entries(port_dir, kernel))
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
