"""The rules model: one kernel IR -> one Port (Kokkos C++, Fortran interface, CMake).

``translate_kernel`` runs the pure stages in order -- checks, structuring (structure.py),
array lowering (lower.py), planning (plan.py), printing (emit.py), rendering (render.py) --
and turns any :class:`Refusal` into ``records.TranslationRefused`` with the reasons and
lines. ``write_port`` is the only function here with side effects."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ..fortran import ir
from ..fortran.error_exits import as_device_callee
from ..fortran.module_reads import with_module_reads
from ..fortran.strings import string_result
from ..records import Port, TranslateOptions, TranslationRefused
from . import common_blocks
from . import render
from .cexpr import function_cname
from .checks import kernel_checks
from .element_reductions import scalarize_element_reductions
from .regblock import register_blocked
from .promote import promoted
from .emit import Emitter, zero_init
from .hoist import hoist_array_bounds
from .inline_calls import inline_host_calls
from .lower import lower_arrays
from .plan import PKernel, Planner
from .structure import restructure
from .symbols import Refusal, SymbolTable, build_symbols


def _callees(kernel: ir.Kernel, tab: SymbolTable, program=None, module_reads: bool = False) -> list[ir.Kernel]:
    """Routines the kernel calls, transitively, callees first (found by the program in any
    file of the tree, or without one in the kernel's file); refuses unknown ones and recursion.
    ``module_reads``: the calls pass the module variables their callees read (an outlined
    nest's: ``hybrid.outline``), so each callee takes them as trailing arguments."""
    order: list[ir.Kernel] = []
    seen: set[str] = set()

    def found(k: ir.Kernel, name: str) -> Optional[ir.Kernel]:
        if program is None:
            return tab.functions.get(name)
        c = program.callee(k, name)
        if c is None or c.routine is None:
            return None
        # its error exits stop the program; the COMMON members it only reads are arguments
        return as_device_callee(program.kernel_of(c.routine), program.resolver())

    def resolve(k: ir.Kernel, name: str) -> Optional[ir.Kernel]:
        callee = found(k, name)
        if callee is None or not module_reads:
            return callee
        out, why = with_module_reads(callee, found)
        if why is not None:
            raise _refusal(callee, kernel, why.code, why.message, why.line)
        return out

    def visit(k: ir.Kernel, stack: tuple):
        for name in k.calls:
            callee = resolve(k, name)
            if name == "lsame" and callee is None:
                continue
            if name in stack or name == kernel.name:
                raise _refusal(k, kernel, "impure-call", f"recursive call to '{name}'", k.line_start)
            if callee is None:
                raise _refusal(k, kernel, "call-to-unknown", unknown_callee(k, name, program), _call_line(k, name))
            if name not in seen:
                visit(callee, stack + (name,))
                seen.add(name)
                order.append(callee)

    visit(kernel, (kernel.name,))
    return order


def _refusal(k: ir.Kernel, kernel: ir.Kernel, code: str, message: str, line: int) -> Refusal:
    r = Refusal(code, message if k is kernel else f"in {k.name} (called by {kernel.name}): {message}", line)
    if k is not kernel:
        r.diagnostic.file = k.file
    return r


def unknown_callee(k: ir.Kernel, name: str, program=None) -> str:
    """Why a call cannot be followed, naming where the callee is (or is not)."""
    if program is None:
        return (f"'{name}' is not defined in this source file (give the files or directories that define it on "
                "the command line)")
    from ..fortran.program import Callee, unknown_where

    c = program.callee(k, name) or Callee(name, "external")
    if c.where == "intrinsic":
        return f"'{name}' is an intrinsic procedure the rules do not translate"
    if c.where == "generic":
        return (f"{unknown_where(c)}: the call is not resolved to one of its specific procedures "
                f"({', '.join(r.name for r in c.alternatives) or 'none in the tree'})")
    if c.where == "module-variable":
        return f"{unknown_where(c)} by the front end (the module is defined in another file)"
    return f"{unknown_where(c)}; give the files that define it on the command line"


def _call_line(k: ir.Kernel, name: str) -> int:
    for s in ir.walk(k.body):
        if isinstance(s, ir.CallStmt) and s.name == name:
            return s.line
        from .access import own_exprs
        for e in own_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and x.name == name:
                    return s.line
    return k.line_start


def inline_function(fn: ir.Kernel, source: Optional[ir.SourceFile], options: TranslateOptions,
                    program=None) -> str:
    """A routine the kernel calls as a KOKKOS_INLINE_FUNCTION (``devfunc.device_function``)."""
    from .devfunc import device_function

    return device_function(fn, source, options, program)


def translate_kernel(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None,
                     options: Optional[TranslateOptions] = None, program=None) -> Port:
    """``program`` (fortran.program.Program): callees are found in every file of the tree;
    without it only in the kernel's own file."""
    return _refusing(kernel, _translate, source, options or TranslateOptions(), program)


def _refusing(kernel: ir.Kernel, make, *args):
    """``make(kernel, *args)`` after the kernel-level checks; a Refusal becomes
    TranslationRefused with the kernel's file."""
    diags = kernel_checks(kernel)
    if diags:
        raise TranslationRefused(kernel.name, diags)
    try:
        return make(kernel, *args)
    except Refusal as r:
        d = r.diagnostic
        if not d.file:
            d.file = kernel.file
        raise TranslationRefused(kernel.name, [d]) from None


@dataclass
class KernelParts:
    """What the rules make of one kernel before it becomes files: the pieces the kernel
    template renders (a full port) or that a hybrid port combines for several outlined
    nests (``translate/hybrid.py``)."""

    kernel: ir.Kernel
    tab: SymbolTable
    blocks: list
    used: set
    helpers: list[str]  # KOKKOS_INLINE_FUNCTIONs and structs the views function needs
    commons: list[list[str]]  # COMMON struct declarations
    views_signature: str
    views_body: list[str]
    entry_signature: str  # with extern "C"
    entry_body: list[str]
    patterns: list[str]
    notes: list[str]
    versions: list[str]
    blocked: bool = False  # blocked bands run on the host: compiled without the loop vectoriser (compat header)


def translate_parts(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None,
                    options: Optional[TranslateOptions] = None, program=None, *,
                    module_reads: bool = False) -> KernelParts:
    """The pieces of a kernel's port (raises TranslationRefused like translate_kernel);
    ``module_reads``: its calls pass the module variables their callees read (``_callees``)."""
    return _refusing(kernel, _parts, source, options or TranslateOptions(), program, module_reads)


def _parts(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: TranslateOptions,
           program=None, module_reads: bool = False, inlined: Sequence[str] = ()) -> KernelParts:
    """``inlined``: the notes of the calls ``inline_calls`` inlined into ``kernel`` (a full
    port's, not an outlined nest's: those keep the original's lines)."""
    tab = build_symbols(kernel, source, program)
    blocks = common_blocks.blocks(kernel)  # refuses layouts it cannot be sure of
    render.result_ctype(kernel)
    for a in kernel.args:
        tab[a.name].ctype  # refuses types without a C++ equivalent
    callees = _callees(kernel, tab, program, module_reads)
    helpers = []
    for fn in callees:
        try:
            helpers.append(inline_function(fn, source, options, program))
        except Refusal as r:  # its lines are the callee's, in the callee's file
            r.diagnostic.file = r.diagnostic.file or fn.file
            if fn.name in kernel.calls:
                r.diagnostic.message += f" (called by {kernel.name} at line {_call_line(kernel, fn.name)})"
            else:
                r.diagnostic.message += f" (reached from {kernel.name} through its callees)"
            raise
    out_args = {fn.name: {i for i, a in enumerate(fn.args) if a.intent != "in"} for fn in callees}

    body = restructure(copy.deepcopy(kernel.body), tab)
    body = lower_arrays(body, tab)
    body = scalarize_element_reductions(body, tab)  # x(i) summed over j: into a scalar first
    for d in ir.walk(body):  # a sunk nest's original order (its host form) goes through the same passes
        if isinstance(d, ir.Do) and getattr(d, "host_original", None) is not None:
            kept = scalarize_element_reductions(lower_arrays(restructure([copy.deepcopy(d.host_original)], tab),
                                                             tab), tab)
            d.host_original = kept[0] if len(kept) == 1 and isinstance(kept[0], ir.Do) else None
    blocked: list[str] = []
    host_blocked = False
    if options.register_block:
        body, blocked, host_blocked = register_blocked(body, tab, options.register_block, kernel)
    body, kept = promoted(body, tab)

    live_end = {a.name for a in kernel.args if a.intent in ("out", "inout") and not a.dims}
    live_end |= {m.name for b in blocks for m in b.used() if m.written and not m.rank}
    result = kernel.result.name if kernel.kind == "function" and kernel.result is not None else None
    if result:
        live_end.add(result)
    pure = {fn.name for fn in callees if fn.kind == "function"
            and all(a.intent == "in" and not a.dims for a in fn.args)}
    planner = Planner(kernel, tab, options, out_args, pure)
    # a policy is built on the host: bounds that read arrays are computed before it
    body = hoist_array_bounds(body, tab, serial=lambda d: planner.parallel_kind(d)[0] is None)
    plan = planner.plan(body, live_end)

    em = Emitter(kernel, tab, options, {fn.name: fn for fn in callees})
    lines = em.nodes(plan, 1, {"device": False, "loops": [], "result": result})
    if result:
        em.use(result)
        if string_result(kernel) is None:  # a string result is the caller's buffer, written in place
            lines.append(f"  return {tab[result].c};")
    decls = _host_decls(kernel, tab, em.host_used)
    used = em.host_used
    for fn in callees:
        where = f"line {fn.line_start}" if fn.file == kernel.file else f"{fn.file}:{fn.line_start}"
        planner.notes.append(f"{fn.kind} {fn.name} ({where}) -> KOKKOS_INLINE_FUNCTION {function_cname(fn.name)}")
    planner.notes += list(inlined) + blocked + kept + common_blocks.notes(kernel)
    planner.notes += [f"line {d.line}: do {d.var} -> on the host backends its iterations run as SIMD lanes "
                      "(each lane one element; the inner loop's sums stay in order)" for d in em.lanes]
    patterns = list(planner.patterns)
    if not patterns and not any(isinstance(n, PKernel) for n in plan):
        planner.notes.append("no array work: the routine runs on the host")
    return KernelParts(
        kernel=kernel, tab=tab, blocks=blocks, used=used, helpers=helpers + em.structs,
        commons=[common_blocks.struct_decl(b) for b in blocks if b.used()],
        views_signature=render.views_signature(kernel, tab, used),
        views_body=_contiguity_checks(kernel, tab, body) + decls + lines,
        entry_signature='extern "C" ' + render.entry_signature(kernel, tab, decl=False),
        entry_body=render.entry_body(kernel, tab), patterns=patterns, notes=planner.notes,
        versions=list(planner.versions), blocked=host_blocked)


def _translate(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: TranslateOptions, program=None) -> Port:
    inlined, notes = inline_host_calls(kernel, program)
    try:
        parts = _parts(inlined, source, options, program, inlined=notes)
    except Refusal:  # what the inlined statements make refusable stays a function call
        if not notes:
            raise
        parts = _parts(kernel, source, options, program)
    k = kernel.name
    files = {
        f"{k}.kokkos.cpp": render.render(
            "kernel.cpp.j2", k=k, kind=kernel.kind, file=Path(kernel.file).name if kernel.file else "?",
            line_start=kernel.line_start, line_end=kernel.line_end, helpers=parts.helpers,
            commons=parts.commons, views_signature=parts.views_signature, views_body=parts.views_body,
            blocked=parts.blocked,
            entry_signature=parts.entry_signature, entry_body=parts.entry_body),
        **interface_files(kernel, parts.tab, parts.blocks, parts.used),
    }
    return Port(kernel=k, entry=f"{k}_kokkos", files=files, model="rules", patterns=parts.patterns,
                notes=parts.notes, options=options, versions=parts.versions)


def _contiguity_checks(kernel: ir.Kernel, tab: SymbolTable, body: list[ir.Stmt]) -> list[str]:
    """Device functions address the caller's arrays as Fortran does (sequence association
    from the element passed): the Views given to the views-level function must be
    contiguous. The port's own are; a caller of the views-level function with padded
    Views is stopped with the reason."""
    from ..fortran.accesses import direct_actuals

    params = {a.name for a in kernel.args} | {m.name for m in common_blocks.used_members(kernel)}
    passed: dict[str, str] = {}
    for s in ir.walk(body):
        for callee, args, q in direct_actuals(s):
            a = args[q]
            if a.name in params and tab.is_array(a.name):
                passed.setdefault(a.name, callee)
    return [f'  if (!{tab[n].c}.span_is_contiguous()) Kokkos::abort("{kernel.name}: the View {n} must be contiguous '
            f'(LayoutLeft without padding): {callee} addresses it as a Fortran array");'
            for n, callee in passed.items()]


def _host_decls(kernel: ir.Kernel, tab: SymbolTable, used: set[str]) -> list[str]:
    from .cexpr import ExprPrinter, lower_name
    pad = "  "
    params, scalars, arrays, lbs = [], [], [], []
    arg_names = {a.name for a in kernel.args}
    p = ExprPrinter(tab)
    common_params = {m.name for m in common_blocks.used_members(kernel)}
    for name, sym in tab.symbols.items():
        if name in arg_names or name not in used or sym.role == "common" or \
                (sym.role == "result" and string_result(kernel) is not None):
            continue  # COMMON members are parameters of the views-level function
        if sym.role == "param" and sym.is_array:
            arrays += _constant_table(sym, p, pad)
        elif sym.role == "param":  # a string constant: a pf::Str of a literal (read only)
            ctype = "pf::Str" if sym.ftype.base == "character" and sym.ftype.char_len != 1 else sym.ctype
            params.append(pad + f"const {ctype} {sym.c} = {render.param_text(sym)};")
        elif sym.is_array:
            exts = []
            for d, dim in enumerate(sym.dims):
                if dim.upper is None:
                    raise Refusal("unknown-extent", f"local array '{name}' without an upper bound", sym.line)
                exts.append(f"pf::extent({p.expr(sym.lower(d))}, {p.expr(dim.upper)})")
            arrays.append(pad + f'pf::View<{sym.ctype}{"*" * sym.rank}> {sym.c}("{name}", {", ".join(exts)});')
        elif getattr(kernel.locals.get(name), "len_expr", None) is not None and sym.role == "local":
            # CHARACTER(len=<expr>): a host buffer sized at entry, as Fortran evaluates it
            n = p.expr(kernel.locals[name].len_expr, ir.FType("integer", 8))
            scalars.append(pad + f"pf::Buf {sym.c}_buf(static_cast<long>({n}));")
            scalars.append(pad + f"pf::Str {sym.c} = {sym.c}_buf;")
        else:
            scalars.append(pad + f"{sym.ctype} {sym.c} = {zero_init(sym.ftype)};")
    for name, sym in tab.symbols.items():
        for d in range(sym.rank):
            ln = lower_name(name, d)
            if ln in used:
                lbs.append(pad + f"const int {ln} = {p.expr(sym.lower(d), ir.INTEGER)};")
    for name in p.used:
        s = tab.get(name)
        if s is not None and s.role == "param" and name not in used:
            params.append(pad + f"const {s.ctype} {s.c} = {render.param_text(s)};")
        elif s is not None and s.role not in ("arg", "param") and not (s.role == "common" and name in common_params) \
                and name not in used:
            raise Refusal("unknown-extent", f"a bound depends on local '{name}'", s.line)
    return params + lbs + scalars + arrays


def _constant_table(sym, p, pad: str) -> list[str]:
    """A constant array (PARAMETER, or an initialised local the routine never assigns) as a
    View in MemSpace filled from a host table in Fortran element order."""
    vals = list(sym.value) if isinstance(sym.value, (list, tuple)) else [sym.value]
    exts = []
    for d, dim in enumerate(sym.dims):
        if dim.upper is None:
            raise Refusal("unknown-extent", f"constant array '{sym.name}' without an upper bound", sym.line)
        exts.append(f"pf::extent({p.expr(sym.lower(d))}, {p.expr(dim.upper)})")
    table = ", ".join(render.value_text(v, sym.ftype, sym.name, sym.line) for v in vals)
    return [pad + f'pf::View<{sym.ctype}{"*" * sym.rank}> {sym.c}("{sym.name}", {", ".join(exts)});',
            pad + f"{{  // constant table {sym.name}, elements in Fortran order",
            pad + f"  static const {sym.ctype} pf_table[{len(vals)}] = {{{table}}};",
            pad + f"  auto pf_host = Kokkos::create_mirror_view({sym.c});",
            pad + f"  for (int q = 0; q < {len(vals)}; ++q) pf_host.data()[q] = pf_table[q];",
            pad + f"  Kokkos::deep_copy({sym.c}, pf_host);",
            pad + "}"]


def write_port(port: Port, out_dir) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in port.files.items():
        (out / name).write_text(text)


def interface_files(kernel: ir.Kernel, tab, blocks, used: set[str]) -> dict[str, str]:
    """A port's files other than the kernel source: the header (entry and views-level
    declarations), the bind(C) module, the compat header and the CMake project."""
    k = kernel.name
    is_function = kernel.kind == "function" and kernel.result is not None and string_result(kernel) is None
    return {
        f"{k}.kokkos.hpp": render.render(
            "kernel.hpp.j2", k=k, guard=render.guard(k), is_function=is_function,
            common_params=[f"{m.name} (COMMON {b.title}{', written back' if m.written else ''})"
                           for b in blocks for m in b.used()],
            views_decl=render.views_signature(kernel, tab, used, with_names=False),
            entry_decl=render.entry_signature(kernel, tab, decl=True)),
        f"{k}_kokkos_mod.f90": render.module_text(kernel, tab),
        "pf_kokkos_compat.hpp": render.compat_header(),
        "pf_runtime.hpp": render.runtime_header(),
        "pf_strings.hpp": render.strings_header(),
        "CMakeLists.txt": render.render("CMakeLists.txt.j2", k=k),
    }


def scaffold(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None, program=None) -> Port:
    """The interface files of a kernel's port without its body (for a port another model
    writes when the rules refuse the body). Raises TranslationRefused when the interface
    itself has no C++ equivalent (argument types, COMMON layouts)."""
    try:
        tab = build_symbols(kernel, source, program)
        blocks = common_blocks.blocks(kernel)
        render.result_ctype(kernel)
        for a in kernel.args:
            tab[a.name].ctype  # refuses types without a C++ equivalent
    except Refusal as r:
        d = r.diagnostic
        if not d.file:
            d.file = kernel.file
        raise TranslationRefused(kernel.name, [d]) from None
    files = interface_files(kernel, tab, blocks, set(tab.symbols))
    return Port(kernel=kernel.name, entry=f"{kernel.name}_kokkos", files=files, model="scaffold")
