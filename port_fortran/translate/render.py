"""Port files from the emitted pieces: the entry, the views-level signature, the Fortran
interface module and the CMake project, rendered through the Jinja2 templates in
``port_fortran/kokkos_templates/``. One job: text; no decisions about parallelism."""
from __future__ import annotations

from pathlib import Path

import jinja2

from ..fortran import ir
from ..fortran.strings import is_string_type, string_result
from .cexpr import ExprPrinter, lower_name
from .symbols import Refusal, SymbolTable, cname, cxx_type, fortran_c_kind

TEMPLATES = Path(__file__).resolve().parent.parent / "kokkos_templates"
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), trim_blocks=True,
                          lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


def render(name: str, **ctx) -> str:
    return _ENV.get_template(name).render(**ctx)


def compat_header() -> str:
    return (TEMPLATES / "pf_kokkos_compat.hpp").read_text()


def strings_header() -> str:
    """The CHARACTER string runtime (included by the compat header)."""
    return (TEMPLATES / "pf_strings.hpp").read_text()


def runtime_header() -> str:
    """The residency registry every port's entries use (included by the compat header)."""
    return (TEMPLATES / "pf_runtime.hpp").read_text()


# ------------------------------------------------------------------ signatures


def view_type(sym, const: bool) -> str:
    """A kernel function's array parameter: unmanaged (pf::KView, pf_kokkos_compat.hpp)."""
    return f"pf::KView<{'const ' if const else ''}{sym.ctype}{'*' * sym.rank}>"


def views_params(kernel: ir.Kernel, tab: SymbolTable, used: set[str]) -> list[str]:
    res = string_result(kernel)
    out = [f"pf::Str {tab[res.name].c}"] if res is not None else []  # the caller's buffer, first
    for a in kernel.args:
        sym = tab[a.name]
        unused = "" if a.name in used else "[[maybe_unused]] "
        if sym.is_array:
            out.append(f"{unused}{view_type(sym, a.intent == 'in')} {sym.c}")
        elif is_string_type(a.ftype):  # the caller's bytes (translate/cstrings.py)
            out.append(f"{unused}pf::Str {sym.c}")
        elif a.intent == "in" or a.value:
            out.append(f"{unused}{sym.ctype} {sym.c}")
        else:
            out.append(f"{unused}{sym.ctype}& {sym.c}")
    from .common_blocks import used_members
    for m in used_members(kernel):  # trailing: the COMMON members the routine uses
        sym = tab[m.name]
        unused = "" if m.name in used else "[[maybe_unused]] "
        if sym.is_array:
            out.append(f"{unused}{view_type(sym, not m.written)} {sym.c}")
        elif m.written:
            out.append(f"{unused}{sym.ctype}& {sym.c}")
        else:
            out.append(f"{unused}{sym.ctype} {sym.c}")
    return out


def result_ctype(kernel: ir.Kernel) -> str:
    if kernel.kind == "function" and kernel.result is not None and string_result(kernel) is None:
        if kernel.result.ftype.base == "complex":
            raise Refusal("unsupported-type", "complex function result across extern \"C\"", kernel.line_start)
        return cxx_type(kernel.result.ftype, kernel.line_start)
    return "void"


def views_signature(kernel: ir.Kernel, tab: SymbolTable, used: set[str], with_names: bool = True) -> str:
    params = views_params(kernel, tab, used if with_names else set(tab.symbols))
    ret = result_ctype(kernel)
    sep = ",\n" + " " * (len(ret) + len(kernel.name) + len("_kokkos_views(") + 1)
    return f"{ret} {kernel.name}_kokkos_views({sep.join(params)})"


def entry_params(kernel: ir.Kernel, tab: SymbolTable, decl: bool) -> list[str]:
    res = string_result(kernel)  # a CHARACTER result: gfortran's two leading hidden arguments
    c = tab[res.name].c if res is not None else ""
    out = [f"char* {c if decl else c + '_ptr'}", f"std::size_t {c}_len"] if res is not None else []
    for a in kernel.args:
        sym = tab[a.name]
        const = "const " if a.intent == "in" else ""
        if sym.is_array and is_string_type(a.ftype):  # the caller's bytes: elements of pf::Chars<N>
            out.append(f"{const}char* {sym.c}")
        elif sym.is_array:
            out.append(f"{const}{sym.ctype}* {sym.c}")
        elif is_string_type(a.ftype):
            out.append(f"{const}char* {sym.c if decl else sym.c + '_ptr'}")
        elif a.value:
            out.append(f"{sym.ctype} {sym.c if decl else sym.c + '_value'}")
        else:
            out.append(f"{const}{sym.ctype}* {sym.c if decl else sym.c + '_ptr'}")
    # gfortran's hidden lengths of the CHARACTER string dummies, by value, in their order
    out += [f"std::size_t {tab[a.name].c}_len" for a in string_args(kernel)]
    return out


def string_args(kernel: ir.Kernel) -> list:
    """The scalar CHARACTER dummies longer than one character: each takes a trailing length
    argument (docs/CONTRACTS.md, the entry's contract)."""
    return [a for a in kernel.args if not a.dims and is_string_type(a.ftype)]


def entry_signature(kernel: ir.Kernel, tab: SymbolTable, decl: bool) -> str:
    ret = result_ctype(kernel)
    params = entry_params(kernel, tab, decl)
    sep = ",\n" + " " * (len(ret) + len(kernel.name) + len("_kokkos(") + 1 + (0 if decl else len('extern "C" ')))
    return f"{ret} {kernel.name}_kokkos({sep.join(params)})"


def array_extents(kernel: ir.Kernel, tab: SymbolTable) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    """How far the entry wraps each array argument: for every dimension the C++ (lower,
    upper) expressions, in the routine's scalar arguments (by their C++ names), of the
    declared bounds, or for an assumed-size ``*`` dimension of the largest subscript the
    kernel touches. Also the declarations of the named constants those expressions use.
    Pure; shared by the entry and the Python bindings (which check a numpy array against
    exactly what the entry will read and write)."""
    p = ExprPrinter(tab)
    p.safe_division = True  # evaluated before the routine's guards (a stride of 0 that it rejects)
    out: dict[str, list[tuple[str, str]]] = {}
    for a in kernel.args:
        sym = tab[a.name]
        if not sym.is_array:
            continue
        exts = []
        for d, dim in enumerate(a.dims):
            if dim.assumed_shape or (dim.lower is None and dim.upper is None and dim.assumed_shape):
                raise Refusal("assumed-shape", f"assumed-shape array '{a.name}' (needs an array descriptor)", a.line)
            lo = sym.lower(d)
            hi = dim.upper
            if hi is None:
                ab = a.access_bounds[d] if d < len(a.access_bounds) else None
                if ab is None:
                    why = next((x.message for x in kernel.diagnostics if x.code == "extent-unknown"
                                and f"'{a.name}'" in x.message), None)
                    raise Refusal("unknown-extent", why or (
                        f"the extent of assumed-size '{a.name}' (dimension {d + 1}) cannot be bounded from the "
                        f"subscripts the kernel uses; state it in the run configuration (--config FILE): "
                        f"routines.{kernel.name}.args.{a.name}.extent: '<upper bound, in terms of the arguments>' "
                        "(port the whole tree to take it from the call sites)"), a.line)
                hi = ab[1]
            p.line = a.line
            exts.append((p.expr(lo), p.expr(hi)))
        out[a.name] = exts
    consts = []
    for name in sorted(p.used):
        s = tab.get(name)
        if s is not None and s.role == "param":
            consts.append(f"const {s.ctype} {s.c} = {param_text(s)};")
        elif s is not None and s.role not in ("arg",):
            raise Refusal("unknown-extent", f"array extent depends on '{name}', not an argument", kernel.line_start)
    return out, consts


def entry_body(kernel: ir.Kernel, tab: SymbolTable) -> list[str]:
    """The extern "C" entry: read scalars once, wrap arrays, copy to MemSpace when needed,
    call the views-level function, copy back, fence."""
    pad = "  "
    lines = [pad + "pf::ensure_initialized();",
             pad + f'static long& pf_calls = pf::call_counter("{kernel.name}_kokkos");  // PF_CALL_COUNTS (pf_runtime.hpp)',
             pad + "++pf_calls;"]
    res = string_result(kernel)
    for a in ([res] if res is not None else []) + list(kernel.args):
        sym = tab[a.name]
        if sym.is_array:
            continue
        if is_string_type(a.ftype):  # written in place: no copy back
            n = f"static_cast<long>({sym.c}_len)"
            if a.ftype.char_len is not None:  # a declared length is the dummy's, as gfortran takes it
                n = f"{a.ftype.char_len}L"
            lines.append(pad + f"pf::Str {sym.c} = pf::str({sym.c}_ptr, {n});")
            continue
        src = f"{sym.c}_value" if a.value else f"*{sym.c}_ptr"
        lines.append(pad + f"{sym.ctype} {sym.c} = {src};")
    arrays = [a for a in kernel.args if tab[a.name].is_array]
    extents, consts = array_extents(kernel, tab)
    ext_lines = []
    for a in arrays:
        sym = tab[a.name]
        exts = [f"pf::extent({lo}, {hi})" for lo, hi in extents[a.name]]
        const = "const " if a.intent == "in" else ""
        ptr = f"reinterpret_cast<{const}{sym.ctype}*>({sym.c})" if is_string_type(a.ftype) else sym.c
        ext_lines.append(pad + f"pf::HostView<{const}{sym.ctype}{'*' * sym.rank}> h_{sym.name}({ptr}, {', '.join(exts)});")
    # named constants used by the extents
    lines += [pad + c for c in consts]
    if arrays:
        lines.append(pad + "// the caller's arrays, as Fortran lays them out")
        lines += ext_lines
        lines.append(pad + "// in pf::MemSpace: the same memory when it is host-accessible, else the resident copy of a")
        lines.append(pad + "// registered array or a copy for this call; intent(out) arrays are copied in too, so")
        lines.append(pad + "// elements the routine does not write keep their values")
        for a in arrays:
            lines.append(pad + f"auto d_{a.name} = pf::to_device(h_{a.name});")
    from .common_blocks import blocks as common_blocks
    members = [(b, m) for b in common_blocks(kernel) for m in b.used()]
    if members:
        lines.append(pad + "// the COMMON members the routine uses, from gfortran's global symbols")
    for b, m in members:
        sym = tab[m.name]
        if not m.rank and m.is_complex:  # stored as (re, im): see translate/common_blocks.py
            lines.append(pad + f"{sym.ctype} {sym.c}({b.symbol}.{m.c}[0], {b.symbol}.{m.c}[1]);")
            continue
        if not m.rank:
            lines.append(pad + f"{sym.ctype} {sym.c} = {b.symbol}.{m.c};")
            continue
        const = "" if m.written else "const "
        exts = ", ".join(f"pf::extent({lo}, {hi})" for lo, hi in m.bounds)
        if m.is_complex:  # may sit 8 bytes off the alignment Kokkos::complex needs: through aligned storage
            lines.append(pad + f"Kokkos::View<{sym.ctype}{'*' * m.rank}, Kokkos::LayoutLeft, Kokkos::HostSpace> "
                         f"h_{m.name}(\"{m.name}\", {exts});")
            lines.append(pad + f"std::memcpy(static_cast<void*>(h_{m.name}.data()), {b.symbol}.{m.c}, "
                         f"sizeof({b.symbol}.{m.c}));")
        else:
            lines.append(pad + f"pf::HostView<{const}{sym.ctype}{'*' * m.rank}> h_{m.name}({b.symbol}.{m.c}, {exts});")
        lines.append(pad + f"auto d_{m.name} = pf::to_device(h_{m.name});")
    call_args = [tab[res.name].c] if res is not None else []
    call_args += [f"d_{a.name}" if tab[a.name].is_array else tab[a.name].c for a in kernel.args]
    call_args += [f"d_{m.name}" if m.rank else tab[m.name].c for _, m in members]
    call = f"{kernel.name}_kokkos_views({', '.join(call_args)})"
    ret = result_ctype(kernel)
    if ret != "void":
        lines.append(pad + f"const {ret} pf_result = {call};")
    else:
        lines.append(pad + call + ";")
    for a in arrays:
        if a.intent in ("out", "inout"):
            lines.append(pad + f"pf::from_device(h_{a.name}, d_{a.name});  // intent({a.intent})")
    for a in kernel.args:
        sym = tab[a.name]
        if not sym.is_array and not a.value and a.intent in ("out", "inout") and not is_string_type(a.ftype):
            lines.append(pad + f"*{sym.c}_ptr = {sym.c};")
    for b, m in members:
        if m.written and m.rank:
            lines.append(pad + f"pf::from_device(h_{m.name}, d_{m.name});  // COMMON {b.title}, written")
            if m.is_complex:
                lines.append(pad + f"std::memcpy({b.symbol}.{m.c}, static_cast<const void*>(h_{m.name}.data()), "
                             f"sizeof({b.symbol}.{m.c}));")
        elif m.written and m.is_complex:
            c = tab[m.name].c
            lines.append(pad + f"{b.symbol}.{m.c}[0] = {c}.real();  // COMMON {b.title}, written")
            lines.append(pad + f"{b.symbol}.{m.c}[1] = {c}.imag();")
        elif m.written:
            lines.append(pad + f"{b.symbol}.{m.c} = {tab[m.name].c};  // COMMON {b.title}, written")
    lines.append(pad + "Kokkos::fence();")
    if ret != "void":
        lines.append(pad + "return pf_result;")
    return lines


def param_text(s) -> str:
    return value_text(s.value, s.ftype, s.name, s.line)


def value_text(v, t, name: str = "", line: int = 0) -> str:
    """A constant of Fortran type ``t`` as a C++ literal."""
    if t.base == "integer":
        return str(int(v))
    if t.base == "real":
        from .cexpr import real_text
        return real_text(float(v), t.kind)
    if t.base == "logical":
        return "1" if v else "0"
    if t.base == "complex":
        from .cexpr import real_text
        c = complex(v)
        return f"{cxx_type(t)}({real_text(c.real, t.kind)}, {real_text(c.imag, t.kind)})"
    if t.base == "character" and isinstance(v, str) and not isinstance(t.char_len, bool):
        from .cstrings import c_literal  # a constant string: padded or cut to its declared length
        text = v if t.char_len is None else v.ljust(t.char_len)[: t.char_len]
        if t.char_len == 1:  # a char literal
            ch = text[:1] or " "
            return f"'\\{ch}'" if ch in "'\\" else (f"'{ch}'" if 32 <= ord(ch) < 127 else f"'\\{ord(ch):03o}'")
        return f"pf::str({c_literal(text)}, {len(text)})"
    raise Refusal("unsupported-type", f"PARAMETER {name} of type {t}", line)


# ------------------------------------------------------------------ Fortran interface


def fortran_expr(e: ir.Expr, dummies: set[str]) -> str:
    if isinstance(e, ir.Literal) and isinstance(e.value, int):
        return str(e.value)
    if isinstance(e, ir.Name) and e.name in dummies:
        return e.name
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*", "/"):
        return f"({fortran_expr(e.left, dummies)} {e.op} {fortran_expr(e.right, dummies)})"
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        return f"(-{fortran_expr(e.operand, dummies)})"
    if isinstance(e, ir.FuncCall) and e.name in ("max", "min", "abs") and e.args:
        return f"{e.name}({', '.join(fortran_expr(a, dummies) for a in e.args)})"
    raise ValueError("not expressible in the interface")


def module_decls(kernel: ir.Kernel, tab: SymbolTable, assumed_last: bool = False) -> list[str]:
    """The dummies of the bind(C) interface. ``assumed_last``: every array's last dimension
    written ``*`` (the hybrid port's outlined nests are passed the routine's own arrays, whose
    declared extent may be the F77 ``(1)`` of an array the nest reads far past: with an
    explicit extent gfortran rejects the call; sequence association passes the same address)."""
    scalars = [a for a in kernel.args if not tab[a.name].is_array]
    arrays = [a for a in kernel.args if tab[a.name].is_array]
    dummies = {a.name for a in scalars if a.ftype.base == "integer"}
    out = []
    for a in scalars + arrays:
        kind = fortran_c_kind(a.ftype, a.line)
        attrs = [kind, f"intent({a.intent})"]
        if a.value:
            attrs.append("value")
        shape = "(*)" if is_string_type(a.ftype) and not a.dims else ""
        if a.dims and is_string_type(a.ftype):
            shape = "(*)"  # its characters in sequence (F2018 15.5.2.11: character sequence association)
        elif a.dims:
            try:
                parts = []
                for d, dim in enumerate(a.dims):
                    last = assumed_last and d == len(a.dims) - 1
                    hi = "*" if dim.upper is None or last else fortran_expr(dim.upper, dummies)
                    if dim.lower is not None and not (isinstance(dim.lower, ir.Literal) and dim.lower.value == 1):
                        parts.append(f"{fortran_expr(dim.lower, dummies)}:{hi}")
                    else:
                        parts.append(hi)
                shape = "(" + ", ".join(parts) + ")"
            except ValueError:
                shape = "(*)"  # sequence association: any array of the right type can be passed
        out.append(f"{', '.join(attrs)} :: {a.name}{shape}")
    out += [f"integer(c_size_t), value, intent(in) :: {a.name}_len" for a in string_args(kernel)]
    return out


def module_text(kernel: ir.Kernel, tab: SymbolTable) -> str:
    """The Fortran interface module, every line within free form's 132 columns."""
    from ..fortran_lines import wrap_free_source
    res = string_result(kernel)  # a subroutine taking the result's buffer and length first
    is_fn = kernel.kind == "function" and kernel.result is not None and res is None
    lead = [res.name, f"{res.name}_len"] if res is not None else []
    decls = [f"character(kind=c_char), intent(out) :: {res.name}(*)",
             f"integer(c_size_t), value, intent(in) :: {res.name}_len"] if res is not None else []
    return wrap_free_source(render(
        "module.f90.j2", k=kernel.name, is_function=is_fn,
        arglist=", ".join(lead + [a.name for a in kernel.args] + [f"{a.name}_len" for a in string_args(kernel)]),
        decls=decls + module_decls(kernel, tab),
        result_decl=fortran_c_kind(kernel.result.ftype) if is_fn else "",
    ))


def guard(k: str) -> str:
    return f"PF_{k.upper()}_KOKKOS_HPP"


__all__ = ["render", "compat_header", "strings_header", "runtime_header", "views_signature", "entry_signature", "entry_body", "array_extents", "module_text",
           "lower_name", "cname", "param_text", "guard"]
