"""What the Python function of a port takes and returns, from the routine's IR (pure).

The Python function has the Fortran routine's name and takes its arguments in the Fortran
order, except ``intent(out)`` scalars, which it returns instead (a Python number cannot be
written in place). Scalars are Python numbers; arrays are numpy arrays whose dtype is the
Fortran type's (``harness.inputs.dtype_of``), whose rank is the declared rank, in Fortran
(column-major) order, and whose extents are checked against exactly what the port's entry
wraps (``translate.render.array_extents``): every dimension but the last must match the
declaration, the last must hold at least what the routine declares or, for an assumed-size
``*`` dimension, the largest subscript it touches for the given scalar arguments. The call
returns the function result (for a FUNCTION), then the new values of the ``intent(out)``
and ``intent(inout)`` scalars: nothing is ``None``, one value is returned bare, several as
a tuple. COMMON blocks the routine uses are defined in the module and exposed as numpy
views (``module.common.<block>.<member>``).
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import UserError
from ..fortran import ir
from ..fortran.render import expr_str
from ..harness.drivers import c_type, cpp_prototype, unsupported_reason
from ..harness.inputs import dtype_of
from ..translate.symbols import Refusal, build_symbols

# Python-side description of each Fortran type, for docstrings
PY_TYPES = {"integer": "int", "real": "float", "complex": "complex", "logical": "bool",
            "character": "str of 1 character"}


@dataclass(frozen=True)
class ArgBinding:
    name: str  # the Fortran name (also the Python keyword)
    position: int  # 1-based, in the Fortran argument list
    base: str  # integer | real | complex | logical | character
    ftype: str  # e.g. 'real(8)'
    ctype: str  # the C type the entry takes (harness.drivers.c_type), e.g. 'double', 'int32_t'
    intent: str  # in | out | inout
    value: bool = False  # VALUE attribute: passed by value
    rank: int = 0
    dtype: str = ""  # numpy dtype string of arrays, e.g. '<f8'
    dtype_name: str = ""  # numpy's name for it, e.g. 'float64'
    declared: str = ""  # the Fortran declaration, e.g. 'a(lda, *)'
    extents: tuple[tuple[str, str], ...] = ()  # per dimension: C++ (lower, upper) expressions
    bounds_text: tuple[str, ...] = ()  # per dimension: Fortran 'lower:upper' the extent comes from

    @property
    def is_array(self) -> bool:
        return self.rank > 0

    @property
    def python_arg(self) -> bool:
        """The caller passes it (intent(out) scalars are returned, not passed)."""
        return self.is_array or self.intent != "out" or self.value

    @property
    def returned(self) -> bool:
        """Its value after the call is returned (a scalar the routine may write)."""
        return not self.is_array and not self.value and self.intent in ("out", "inout")

    @property
    def writable(self) -> bool:
        return self.intent in ("out", "inout")


@dataclass(frozen=True)
class MemberBinding:
    name: str
    c: str  # member name in the C struct
    ctype: str
    dtype: str
    dtype_name: str
    bounds: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class CommonBinding:
    name: str  # '' for blank COMMON
    title: str  # '/polyc/'
    symbol: str  # gfortran's global symbol, 'polyc_'
    definition: tuple[str, ...]  # C++ lines defining the struct and the symbol
    members: tuple[MemberBinding, ...]

    @property
    def py_name(self) -> str:
        return self.name or "blank"


@dataclass(frozen=True)
class FunctionBinding:
    name: str  # the Fortran routine's name: the Python function's name
    kind: str  # subroutine | function
    file: str
    line_start: int
    line_end: int
    entry: str  # '<k>_kokkos'
    prototype: str  # the entry's C prototype, as the C++ driver declares it
    args: tuple[ArgBinding, ...]
    result_base: str = ""  # base type of a FUNCTION's result ('' for a subroutine)
    result_ctype: str = ""
    result_ftype: str = ""
    consts: tuple[str, ...] = ()  # C++ declarations of named constants the extents use
    extent_scalars: tuple[tuple[str, str, str], ...] = ()  # (Fortran name, C++ name, C++ type) used by extents
    commons: tuple[CommonBinding, ...] = ()
    copy_keyword: str = "copy"

    @property
    def python_args(self) -> list[ArgBinding]:
        return [a for a in self.args if a.python_arg]

    @property
    def returns(self) -> list[str]:
        """What the call returns, in order: 'result', then the returned scalars' names."""
        return (["result"] if self.result_base else []) + [a.name for a in self.args if a.returned]


def _dim_text(d: ir.Dim) -> str:
    hi = "*" if d.upper is None else expr_str(d.upper)
    if d.lower is None or (isinstance(d.lower, ir.Literal) and d.lower.value == 1):
        return hi
    return f"{expr_str(d.lower)}:{hi}"


def _bounds_text(a: ir.Argument, k: int) -> str:
    d = a.dims[k]
    lo = "1" if d.lower is None else expr_str(d.lower)
    if d.upper is not None:
        return f"{lo}:{expr_str(d.upper)}"
    ab = a.access_bounds[k] if k < len(a.access_bounds) else None
    return f"{lo}:{expr_str(ab[1])}" if ab is not None else f"{lo}:?"


def _refuse(kernel: ir.Kernel, line: int, why: str) -> UserError:
    where = f"{kernel.file}:{line}" if kernel.file else f"line {line}"
    return UserError(f"{where}: {kernel.name}: no Python binding: {why}")


def _common_bindings(kernel: ir.Kernel) -> tuple[CommonBinding, ...]:
    if not kernel.commons:
        return ()
    from ..translate.common_blocks import blocks, struct_def

    try:
        blks = blocks(kernel)
    except Refusal as r:
        raise _refuse(kernel, r.diagnostic.line, r.diagnostic.message) from None
    out = []
    for b in blks:
        if not b.used():
            continue
        members = tuple(MemberBinding(m.name, m.c, m.ctype, dtype_of(m.ftype).str, dtype_of(m.ftype).name,
                                      tuple(tuple(x) for x in m.bounds)) for m in b.members)
        out.append(CommonBinding(b.name, b.title, b.symbol, tuple(struct_def(b)), members))
    return tuple(out)


def plan_function(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None) -> FunctionBinding:
    """The binding of one routine. Raises UserError (naming file and line) for an interface
    a numpy caller cannot drive: the harness's limits (character arrays, OPTIONAL, ...)
    and array extents the port cannot bound."""
    from ..translate.render import array_extents

    reason = unsupported_reason(kernel)
    if reason:
        raise _refuse(kernel, kernel.line_start, reason)
    for a in kernel.args:
        if a.ftype.base == "character" and a.ftype.char_len != 1:
            raise _refuse(kernel, a.line, f"argument {a.name}: CHARACTER other than one character")
    tab = build_symbols(kernel, source)
    try:
        extents, consts = array_extents(kernel, tab)
    except Refusal as r:
        raise _refuse(kernel, r.diagnostic.line or kernel.line_start, r.diagnostic.message) from None
    args = []
    for a in kernel.args:
        common = dict(name=a.name, position=len(args) + 1, base=a.ftype.base, ftype=str(a.ftype),
                      ctype=c_type(a.ftype), intent=a.intent, value=a.value)
        if a.rank:
            dt = dtype_of(a.ftype)
            args.append(ArgBinding(**common, rank=a.rank, dtype=dt.str, dtype_name=dt.name,
                                   declared=f"{a.name}({', '.join(_dim_text(d) for d in a.dims)})",
                                   extents=tuple(extents[a.name]),
                                   bounds_text=tuple(_bounds_text(a, k) for k in range(a.rank))))
        else:
            args.append(ArgBinding(**common, declared=a.name))
    # the scalars the extent expressions name, declared in the binding under the names and
    # types the translator printed them with
    text = " ".join(lo + " " + hi for a in args for lo, hi in a.extents)
    scalars = []
    for a in kernel.args:
        if a.rank:
            continue
        sym = tab[a.name]
        if _mentions(text, sym.c):
            scalars.append((a.name, sym.c, sym.ctype))
    kw = "copy"
    while kw in {a.name for a in kernel.args}:
        kw += "_"
    res_base = res_ctype = res_ftype = ""
    if kernel.kind == "function" and kernel.result is not None:
        res_base, res_ctype, res_ftype = (kernel.result.ftype.base, c_type(kernel.result.ftype),
                                          str(kernel.result.ftype))
    return FunctionBinding(
        name=kernel.name, kind=kernel.kind, file=Path(kernel.file).name if kernel.file else "?",
        line_start=kernel.line_start, line_end=kernel.line_end, entry=f"{kernel.name}_kokkos",
        prototype=cpp_prototype(kernel), args=tuple(args), result_base=res_base, result_ctype=res_ctype,
        result_ftype=res_ftype, consts=tuple(consts), extent_scalars=tuple(scalars),
        commons=_common_bindings(kernel), copy_keyword=kw)


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![\w.:]){re.escape(name)}(?!\w)", text) is not None


def check_module_name(name: str) -> str:
    """A module name Python can import (raises UserError otherwise)."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UserError(f"--module {name!r}: not a valid Python module name (letters, digits and _, "
                        "not starting with a digit)")
    return name


def merge_commons(functions: list[FunctionBinding]) -> list[CommonBinding]:
    """The COMMON blocks of all functions of one module, each once. Two routines that lay out
    the same block differently cannot share a module (each would need its own symbol)."""
    seen: dict[str, tuple[CommonBinding, str]] = {}
    for f in functions:
        for c in f.commons:
            if c.symbol in seen:
                other, who = seen[c.symbol]
                if other.definition != c.definition:
                    raise UserError(f"{f.file}:{f.line_start}: {f.name} declares COMMON {c.title} differently from "
                                    f"{who}: build their bindings as separate modules")
                continue
            seen[c.symbol] = (c, f.name)
    return [c for c, _ in seen.values()]


__all__ = ["ArgBinding", "CommonBinding", "FunctionBinding", "MemberBinding", "PY_TYPES", "plan_function",
           "check_module_name", "merge_commons"]
