"""Device functions: a routine the kernel calls, translated by the same rules as the
kernel body into a ``KOKKOS_INLINE_FUNCTION`` that kernels (and host code) call.

* Scalar dummies: by value when the callee does not write them, else C++ references.
* Array dummies: a pointer into the caller's data wrapped in ``pf::FArray<T, R>`` with the
  callee's declared shape (column-major index arithmetic, the callee's lower bounds,
  the last dimension unbounded as for assumed size). The caller passes the address of the
  element it names (``&u(0, i - 1, j - 1, k - 1)`` for ``u(1, i, j, k)``) or the data of
  a whole array (``cexpr.ExprPrinter.actual``): Fortran's sequence association, which the
  port's LayoutLeft, unpadded Views keep in every memory space.
* Small fixed-size local arrays: C arrays in the function (``pf::FArray`` over them).
* Array syntax and array reductions in the callee are lowered to loops first
  (``lower.py``); its loops run sequentially inside the calling iteration.

Whether a call may sit in a parallel loop is the dependence analysis' question
(``fortran/effects.py``); this module only translates, and refuses what it cannot."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..fortran import ir
from ..records import TranslateOptions
from ..fortran.common_use import names_used
from ..fortran.interchange import source_order
from . import render
from .checks import kernel_checks
from .access import reads_deep, scalars_written
from .cexpr import function_cname, lower_name
from .emit import Emitter, const_int, zero_init
from .lower import lower_arrays
from .structure import restructure
from .symbols import Refusal, build_symbols, cxx_type

MAX_LOCAL_ELEMENTS = 4096  # a local array of a device function lives in each thread's stack


def device_function(fn: ir.Kernel, source: Optional[ir.SourceFile], options: TranslateOptions,
                    program=None) -> str:
    """The C++ of one callee (its file or, with a program, any file of the tree) as a
    KOKKOS_INLINE_FUNCTION named ``<name>_fn``; raises :class:`Refusal` (code
    ``impure-call`` and the like) naming the callee's line when it cannot."""
    diags = kernel_checks(fn)
    if diags:
        raise Refusal("impure-call", f"'{fn.name}' cannot be a device function: {diags[0].message}", diags[0].line)
    named = names_used(fn)  # a block only declared (an include of all of them) is not reached
    used_blocks = [c for c in fn.commons if set(c.variables) & named]
    if used_blocks:
        raise Refusal("impure-call", f"'{fn.name}' cannot be a device function: it reaches COMMON "
                      f"/{used_blocks[0].name}/ (only the kernel itself may use COMMON)", used_blocks[0].line)
    if fn.kind == "function" and fn.result is not None and fn.result.dims:
        raise Refusal("impure-call", f"'{fn.name}' returns an array", fn.line_start)
    if program is not None:
        source = program.source_of(fn) or source
    tab = build_symbols(fn, source, program)
    body = restructure(source_order(fn.body), tab)  # its loops run in order in one thread
    body = lower_arrays(body, tab)
    for s in ir.walk(body):
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and x.intrinsic and x.name in ("size", "ubound", "lbound", "shape"):
                    raise Refusal("impure-call", f"'{fn.name}' asks the shape of an array ({x.name}), which its "
                                  "device function does not carry", s.line)
    em = Emitter(fn, tab, options)
    res = fn.result.name if fn.kind == "function" and fn.result is not None else None
    lines = em.body(body, 1, {"device": True, "loops": [], "result": res, "function": True})

    params, arrays = [], []
    out_args = {n: {q for q, x in enumerate(k.args) if x.intent != "in"} for n, k in tab.functions.items()}
    written = scalars_written(body, out_args)
    for a in fn.args:
        sym = tab[a.name]
        if a.dims:
            const = "const " if a.intent == "in" else ""
            params.append(f"{const}{sym.ctype}* pf_ptr_{a.name}")
            exts = [_extent(em, d, a.line) for d in a.dims[:-1]]
            arrays.append(f"  pf::FArray<{const}{sym.ctype}, {len(a.dims)}> {sym.c}("
                          f"{', '.join([f'pf_ptr_{a.name}'] + exts)});")
        elif a.intent == "in" or a.value:
            params.append(f"{'const ' if a.name not in written else ''}{sym.ctype} {sym.c}")
        else:
            params.append(f"{sym.ctype}& {sym.c}")
    arg_names = {a.name for a in fn.args}
    locals_, local_arrays = [], []
    used = reads_deep(body) | written | em.host_used
    for name, sym in tab.symbols.items():
        if name in arg_names or name not in used or sym.role not in ("local", "result", "temp"):
            continue
        if sym.is_array:
            local_arrays += _local_array(em, fn, sym)
        else:
            locals_.append(f"  {sym.ctype} {sym.c} = {zero_init(sym.ftype)};")
    bounds = []
    for name, sym in tab.symbols.items():
        for d in range(sym.rank):
            ln = lower_name(name, d)
            if ln in em.host_used:
                bounds.append(f"  const int {ln} = {em.ex(sym.lower(d), ir.INTEGER, sym.line)};")
    consts = []
    for name, sym in tab.symbols.items():
        if sym.role == "param" and (name in used or name in em.host_used):
            if sym.is_array:  # a constant table (PARAMETER array, or DATA never assigned)
                consts += _local_array(em, fn, sym, sym.value if isinstance(sym.value, (list, tuple)) else [sym.value])
            else:
                consts.append(f"  const {sym.ctype} {sym.c} = {render.param_text(sym)};")
    ret = cxx_type(fn.result.ftype) if res else "void"
    if res and res not in used:
        locals_.append(f"  {ret} {tab[res].c} = {zero_init(fn.result.ftype)};")
    tail = [f"  return {tab[res].c};"] if res else []
    head = f"// {fn.kind} {fn.name} ({Path(fn.file).name}, line {fn.line_start}), a device function called from the kernels\n"
    head += f"KOKKOS_INLINE_FUNCTION {ret} {function_cname(fn.name)}({', '.join(params)}) {{"
    return "\n".join([head] + consts + bounds + arrays + local_arrays + locals_ + lines + tail + ["}"])


def _extent(em: Emitter, d: ir.Dim, line: int) -> str:
    """The extent of one dimension of an array dummy, as the callee declares it (evaluated
    on entry, as Fortran evaluates specification expressions)."""
    if d.upper is None or d.assumed_shape:
        raise Refusal("impure-call", "an assumed-size dimension other than the last", line)
    lo_c, hi_c = const_int(d.lower, em.tab), const_int(d.upper, em.tab)
    if lo_c is not None and hi_c is not None:
        return str(max(0, hi_c - lo_c + 1))
    hi = em.ex(d.upper, ir.INTEGER, line)
    if d.lower is None or (isinstance(d.lower, ir.Literal) and d.lower.value == 1):
        return hi
    return f"({hi}) - ({em.ex(d.lower, ir.INTEGER, line)}) + 1"


def _local_array(em: Emitter, fn: ir.Kernel, sym, values=None) -> list[str]:
    """A fixed-size local array: a C array (zeroed, or holding ``values`` in Fortran element
    order: a constant table) and its pf::FArray view."""
    exts = []
    for d in sym.dims:
        lo, hi = const_int(d.lower, em.tab), const_int(d.upper, em.tab) if d.upper is not None else None
        if lo is None or hi is None:
            raise Refusal("automatic-array", f"local array '{sym.name}' of '{fn.name}' has no constant size (a device "
                          "function keeps its local arrays on each thread's stack: declare it with constant bounds)",
                          sym.line)
        exts.append(max(0, hi - lo + 1))
    n = 1
    for e in exts:
        n *= e
    if n > MAX_LOCAL_ELEMENTS:
        raise Refusal("automatic-array", f"local array '{sym.name}' of '{fn.name}' has {n} elements (more than "
                      f"{MAX_LOCAL_ELEMENTS} on each thread's stack)", sym.line)
    store = f"pf_store_{sym.name}"
    args = ", ".join([store] + [str(e) for e in exts[:-1]])
    init = ""
    if values is not None:
        if len(values) != n:
            raise Refusal("impure-call", f"constant table '{sym.name}' of '{fn.name}' has {len(values)} values for "
                          f"{n} elements", sym.line)
        init = ", ".join(render.value_text(v, sym.ftype, sym.name, sym.line) for v in values)
    return [f"  {sym.ctype} {store}[{max(n, 1)}] = {{{init}}};",
            f"  pf::FArray<{sym.ctype}, {sym.rank}> {sym.c}({args});"]
