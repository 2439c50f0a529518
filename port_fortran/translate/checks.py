"""Kernel-level reasons the translator refuses a routine, before any code is made (pure):
what the front end could not model, module state, arguments that need a descriptor,
local state kept between calls. Asked for the kernel and for every device function."""
from __future__ import annotations

from ..fortran import ir
from ..fortran.stmts import first_use_line
from ..fortran.strings import string_result


def kernel_checks(kernel: ir.Kernel) -> list[ir.Diagnostic]:
    """Kernel-level reasons to refuse, all of them at once."""
    out: list[ir.Diagnostic] = []
    for u in kernel.unsupported:
        out.append(ir.Diagnostic(u.construct, u.reason, u.line))
    if kernel.module_vars:
        names = ", ".join(sorted(kernel.module_vars))
        # where the routine first uses one (their declarations are in the module's file)
        line = first_use_line(kernel.body, set(kernel.module_vars)) or kernel.line_start
        out.append(ir.Diagnostic("module-variable", f"module variables {names} are shared state the port cannot reach", line))
    res = kernel.result
    if res is not None and res.dims:  # hybrid: the function stays Fortran, its loops become kernels
        out.append(ir.Diagnostic("array-result", f"function result '{res.name}' is an array (a C++ function "
                                 "returns one value)", res.line or kernel.line_start))
    for a in kernel.args:
        if a.optional:
            out.append(ir.Diagnostic("optional-argument", f"OPTIONAL argument '{a.name}'", a.line))
        if any(d.assumed_shape for d in a.dims) or a.allocatable:
            out.append(ir.Diagnostic("assumed-shape", f"assumed-shape or allocatable argument '{a.name}' "
                                     "(needs an array descriptor)", a.line))
        if a.ftype.base == "character" and a.dims and a.ftype.char_len is None:
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER array argument '{a.name}' of assumed-length "
                                     "strings (only arrays of a declared length are translated)", a.line))
        if a.ftype.base == "character" and a.value and a.ftype.char_len != 1:
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER argument '{a.name}' with VALUE", a.line))
    out += string_checks(kernel)
    for name, v in kernel.locals.items():
        if v.allocatable:
            out.append(ir.Diagnostic("allocatable", f"ALLOCATABLE local '{name}'", v.line))
        elif v.save and v.parameter is None:
            out.append(ir.Diagnostic("save-variable", f"local '{name}' keeps its value between calls (SAVE or "
                                     "initialised in its declaration)", v.line))
    return out


def string_checks(kernel: ir.Kernel) -> list[ir.Diagnostic]:
    """CHARACTER strings the translator cannot hold (translate/cstrings.py): a length known
    only at run time other than a dummy's ``len=*``, a string function result, strings in
    COMMON or as arrays of locals."""
    out = []
    for v in list(kernel.args) + list(kernel.locals.values()):
        what = "argument" if isinstance(v, ir.Argument) else "local"
        expr = getattr(v, "len_runtime", None)
        if v.ftype.base != "character" or v.ftype.char_len == 1:
            continue
        sized_at_entry = what == "local" and getattr(v, "len_expr", None) is not None and not v.dims \
            and v.common is None and getattr(v, "parameter", None) is None and not v.save
        if sized_at_entry:  # a scalar local: a host buffer (pf::Buf) sized at entry
            continue
        if expr:
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER {what} '{v.name}' of length {expr}, computed at "
                                     "run time (only len=* dummies, constant lengths and scalar locals are translated)",
                                     v.line))
        elif getattr(v, "parameter", None) is not None and v.dims:
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER PARAMETER array '{v.name}' of strings longer "
                                     "than one character", v.line))
        elif v.ftype.char_len is None and what == "local":
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER local '{v.name}' of assumed length", v.line))
        elif v.common is not None:
            out.append(ir.Diagnostic("unsupported-type", f"CHARACTER COMMON member '{v.name}' longer than one "
                                     "character", v.line))
    r = kernel.result
    if r is not None and r.ftype.base == "character" and string_result(kernel) is None:
        what = "array-valued" if r.dims else "CHARACTER*1"
        out.append(ir.Diagnostic("unsupported-type", f"{what} CHARACTER function result '{r.name}' (only string results "
                                 "are taken through gfortran's hidden leading arguments)", kernel.line_start))
    return out
