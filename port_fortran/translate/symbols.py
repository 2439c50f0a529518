"""The translator's view of a kernel's names: Fortran type, C++ type, rank, lower bounds.

Pure: built from an :class:`ir.Kernel`, no side effects. Also holds :class:`Refusal`, the
exception the translator's modules raise when they are not sure (the engine turns it into
``records.TranslationRefused``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import ir
from ..fortran.error_exits import as_device_callee

CXX_RESERVED = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
    "catch", "char", "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast",
    "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
    "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template",
    "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    "pf", "Kokkos", "std", "main", "printf", "abs", "min", "max", "exp", "log", "sin", "cos",
    "sqrt", "pow", "floor", "ceil", "fabs", "fmod", "atan2", "tan", "ipow", "sign", "modulo",
}


class Refusal(Exception):
    """Raised by the translator's modules when the rules cannot translate something for sure."""

    def __init__(self, code: str, message: str, line: int):
        self.diagnostic = ir.Diagnostic(code, message, line)
        super().__init__(str(self.diagnostic))


def cname(name: str) -> str:
    """A Fortran name as a C++ identifier (Fortran names never clash with C++ keywords
    after this; Fortran names cannot start with ``_`` so a suffix is safe)."""
    return name + "_" if name in CXX_RESERVED else name


def cxx_type(t: ir.FType, line: int = 0) -> str:
    if t.base == "integer":
        return {1: "signed char", 2: "short", 4: "int", 8: "long long"}[t.kind]
    if t.base == "real":
        if t.kind == 4:
            return "float"
        if t.kind == 8:
            return "double"
    if t.base == "complex":
        if t.kind == 4:
            return "Kokkos::complex<float>"
        if t.kind == 8:
            return "Kokkos::complex<double>"
    if t.base == "logical":  # gfortran's logical(k): a k-byte integer holding 0 or 1
        ctype = {1: "signed char", 2: "short", 4: "int", 8: "long long"}.get(t.kind or 4)
        if ctype is not None:
            return ctype
    if t.base == "character" and t.char_len == 1:
        return "char"
    if t.base == "character":  # a string (translate/cstrings.py): a dummy's bytes, or a local's own
        return "pf::Str" if t.char_len is None else f"pf::Chars<{t.char_len}>"
    raise Refusal("unsupported-type", f"type {t} has no C++ equivalent in the rules translator", line)


def fortran_c_kind(t: ir.FType, line: int = 0) -> str:
    """The iso_c_binding declaration of a dummy of type ``t`` (for the bind(C) interface)."""
    if t.base == "integer":
        return {1: "integer(c_signed_char)", 2: "integer(c_short)", 4: "integer(c_int)",
                8: "integer(c_int64_t)"}[t.kind]
    if t.base == "real":
        return {4: "real(c_float)", 8: "real(c_double)"}[t.kind]
    if t.base == "complex":
        return {4: "complex(c_float_complex)", 8: "complex(c_double_complex)"}[t.kind]
    if t.base == "logical" and (t.kind or 4) in (1, 2, 4, 8):
        # the caller's own kind (logical(c_bool) is logical(1)): the bytes it passes
        return f"logical({t.kind or 4})"
    if t.base == "character":  # a string is passed as its bytes (dummy s(*)) and its length
        return "character(kind=c_char)"
    raise Refusal("unsupported-type", f"type {t} cannot cross the bind(C) interface", line)


@dataclass
class Symbol:
    name: str
    ftype: ir.FType
    dims: list[ir.Dim] = field(default_factory=list)
    role: str = "local"  # 'arg' | 'local' | 'param' | 'result' | 'temp' | 'common' (a COMMON member)
    intent: str = "inout"
    value: object = None  # PARAMETER value
    line: int = 0

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def c(self) -> str:
        return cname(self.name)

    @property
    def ctype(self) -> str:
        return cxx_type(self.ftype, self.line)

    def lower(self, d: int) -> ir.Expr:
        lo = self.dims[d].lower
        return lo if lo is not None else ir.Literal(1, "1", ftype=ir.INTEGER)


@dataclass
class SymbolTable:
    kernel: ir.Kernel
    symbols: dict[str, Symbol] = field(default_factory=dict)
    functions: dict[str, ir.Kernel] = field(default_factory=dict)  # routines it calls (same file or tree)
    temps: int = 0

    def get(self, name: str) -> Optional[Symbol]:
        return self.symbols.get(name)

    def __getitem__(self, name: str) -> Symbol:
        return self.symbols[name]

    def is_array(self, name: str) -> bool:
        s = self.symbols.get(name)
        return bool(s and s.is_array)

    def new_temp(self, prefix: str, ftype: ir.FType) -> Symbol:
        self.temps += 1
        name = f"pf_{prefix}{self.temps}"
        sym = Symbol(name, ftype, role="temp")
        self.symbols[name] = sym
        return sym


def build_symbols(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None, program=None) -> SymbolTable:
    """``functions``: the routines the kernel calls that the program resolves (any file of
    the tree, ``fortran.program``), or without a program the other routines of its file."""
    tab = SymbolTable(kernel)
    for a in kernel.args:
        tab.symbols[a.name] = Symbol(a.name, a.ftype, list(a.dims), "arg", a.intent, line=a.line)
    for name, v in kernel.locals.items():
        role = "param" if v.parameter is not None else ("common" if v.common is not None else "local")
        tab.symbols[name] = Symbol(name, v.ftype, list(v.dims), role, value=v.parameter, line=v.line)
    if kernel.kind == "function" and kernel.result is not None:
        r = kernel.result
        tab.symbols[r.name] = Symbol(r.name, r.ftype, list(r.dims), "result", line=r.line)
    if program is not None:
        # as the device functions take them (the COMMON members they only read as trailing
        # arguments, which the calls pass: effects.pass_common_reads)
        resolve = program.resolver() if hasattr(program, "resolver") else None
        tab.functions.update({n: as_device_callee(k, resolve) if resolve is not None and isinstance(k, ir.Kernel)
                              else k for n, k in program.callable_from(kernel).items() if n != kernel.name})
    elif source is not None:
        for k in source.kernels:
            if k.name != kernel.name:
                tab.functions[k.name] = k
    return tab


def const_int(e: Optional[ir.Expr], tab: SymbolTable) -> Optional[int]:
    """The value of an integer constant expression, the table's parameters folded (None:
    not one); an absent expression (a DO loop's step) is 1."""
    if e is None:
        return 1
    env = {n: s.value for n, s in tab.symbols.items() if s.value is not None}
    try:
        v = ir.evaluate(e, env)
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None
