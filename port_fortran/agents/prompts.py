"""What the LLM agents are told: an IR summary, the entry signature, rendered templates.

Templates live in ``agents/prompts/*.j2``; each has a system part and a user part split by
a line ``=== user ===``. :func:`render` returns langchain-style ``[(role, text), ...]``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

import jinja2

from ..fortran import ir

PROMPT_DIR = Path(__file__).parent / "prompts"
KOKKOS_VERSIONS = "3.4 to 5.x"
COMPAT_API = ("namespace pf: ExecSpace, MemSpace; View<T> (LayoutLeft in MemSpace), HostView<T> (unmanaged "
              "LayoutLeft host view to wrap a caller's array); range(lo, hi) (RangePolicy with Fortran's inclusive "
              "bounds); mdrange({lo...}, {hi...}) (MDRangePolicy); nest<R>({lo...}, {hi...}) (a tight nest, dimension 0 "
              "fastest); parallel_for(label, range(...) | nest<R>(...), lambda) and parallel_reduce(label, range(...) | "
              "nest<R>(...), lambda, reducer) (Kokkos' on device backends, vectorisable plain loops on the host); "
              "extent(lo, hi); ensure_initialized()")
_SPLIT = "=== user ==="

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPT_DIR)), undefined=jinja2.StrictUndefined,
                          keep_trailing_newline=True, autoescape=False)


def expr_text(e: Optional[ir.Expr]) -> str:
    """Fortran-like text of an IR expression (for prompts only)."""
    if e is None:
        return ""
    if isinstance(e, ir.Literal):
        return e.text or repr(e.value)
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.ArrayRef):
        return f"{e.name}({', '.join(expr_text(s) for s in e.subscripts)})"
    if isinstance(e, ir.Slice):
        s = f"{expr_text(e.lower)}:{expr_text(e.upper)}"
        return s + (f":{expr_text(e.step)}" if e.step is not None else "")
    if isinstance(e, ir.BinOp):
        return f"({expr_text(e.left)} {e.op} {expr_text(e.right)})"
    if isinstance(e, ir.UnaryOp):
        return f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, ir.FuncCall):
        return f"{e.name}({', '.join(expr_text(a) for a in e.args)})"
    return "?"


def _dims(v: ir.Variable) -> str:
    out = []
    for d in v.dims:
        if d.assumed_shape:
            out.append(":")
        elif d.upper is None:
            out.append(f"{expr_text(d.lower)}:*" if d.lower is not None else "*")
        else:
            out.append(f"{expr_text(d.lower)}:{expr_text(d.upper)}" if d.lower is not None else expr_text(d.upper))
    return ", ".join(out)


def ir_summary(kernel: ir.Kernel) -> dict[str, Any]:
    args = [{"name": a.name, "type": str(a.ftype), "dims": _dims(a), "intent": a.intent, "value": a.value}
            for a in kernel.args]
    loops = []
    for d in kernel.loops():
        info = d.info
        loops.append({
            "line": d.line, "var": d.var,
            "range": f"{expr_text(d.start)}, {expr_text(d.end)}" + (f", {expr_text(d.step)}" if d.step else ""),
            "parallel": info.parallel,
            "reductions": ", ".join(f"{r.op}({r.var})" for r in info.reductions),
            "private": ", ".join(info.private),
            "scattered": ", ".join(info.scattered),
            "reasons": "; ".join(f"[{r.code}] {r.message}" for r in info.reasons),
        })
    return {"args": args, "loops": loops}


_CTYPES = {("integer", 4): "int", ("integer", 8): "int64_t", ("integer", 2): "int16_t", ("integer", 1): "int8_t",
           ("real", 4): "float", ("real", 8): "double", ("logical", 4): "int", ("logical", 1): "int8_t",
           ("complex", 4): "Kokkos::complex<float>", ("complex", 8): "Kokkos::complex<double>"}


def derived_signature(kernel: ir.Kernel) -> str:
    """The entry signature from the IR (used when the translator offers none): Fortran order,
    pointers for everything passed by reference, const for intent(in)."""
    parts = []
    for a in kernel.args:
        t = _CTYPES.get((a.ftype.base, a.ftype.kind), "void")
        if a.value and not a.dims:
            parts.append(f"{t} {a.name}")
        else:
            parts.append(f"{'const ' if a.intent == 'in' else ''}{t}* {a.name}")
    ret = "void"
    if kernel.kind == "function" and kernel.result is not None:
        ret = _CTYPES.get((kernel.result.ftype.base, kernel.result.ftype.kind), "void")
    return f'extern "C" {ret} {kernel.name}_kokkos({", ".join(parts)})'


def entry_signature(kernel: ir.Kernel, header: Optional[str] = None) -> str:
    """The required entry signature: from the port's header when there is one (the
    translator's scaffold writes it), else derived from the IR."""
    if header:
        decls = header_declarations(header)
        # a full port declares <k>_kokkos; a hybrid port one extern "C" entry per outlined nest
        if any(f"{kernel.name}_kokkos(" in d.replace(" (", "(") for d in decls) or \
                any(d.startswith('extern "C"') for d in decls):
            return ";\n".join(decls) + ";"
    return derived_signature(kernel)


def header_declarations(header: str) -> list[str]:
    """The function declarations of a port header, comments and preprocessor lines removed,
    each on one line."""
    text = re.sub(r"/\*.*?\*/", " ", header, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("#"))
    out = []
    for part in text.split(";"):
        d = " ".join(part.split())
        if "(" in d and "{" not in d and "}" not in d:
            out.append(d)
    return out


def render(template: str, **ctx: Any) -> list[tuple[str, str]]:
    ctx.setdefault("kokkos_versions", KOKKOS_VERSIONS)
    ctx.setdefault("compat_api", COMPAT_API)
    ctx.setdefault("hybrid", None)  # a hybrid port's summary: which nests are kernels, what stays Fortran
    text = _env.get_template(template).render(**ctx)
    system, _, user = text.partition(_SPLIT)
    return [("system", system.strip()), ("human", user.strip())]
