"""Fortran types: implicit typing, kinds, expression result types and the intrinsic table.

Pure functions over ``ir`` objects; no fparser here.
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Optional

from . import ir
from .ir import FType

# --------------------------------------------------------------------------- default kinds

# (default REAL kind, DOUBLE PRECISION kind) of the file being read: gfortran's defaults,
# or what -fdefault-real-8 / -fdefault-double-8 make them (``default_kinds``)
_KINDS: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar("pf_default_kinds", default=(4, 8))
#: the compiler flags that change the default kinds which the front end follows
DEFAULT_KIND_FFLAGS = ("-fdefault-real-8", "-fdefault-double-8")


def kinds_of_fflags(fflags) -> tuple[int, int]:
    """(default REAL kind, DOUBLE PRECISION kind) under these gfortran flags: -fdefault-real-8
    makes REAL (and ``1.0``) 8 bytes and, unless -fdefault-double-8 is given too, DOUBLE
    PRECISION (and ``1.0d0``) 16 bytes, as gfortran documents."""
    flags = set(fflags or ())
    real = 8 if "-fdefault-real-8" in flags else 4
    double = 16 if real == 8 and "-fdefault-double-8" not in flags else 8
    return real, double


@contextmanager
def default_kinds(kinds: tuple[int, int]):
    """Read Fortran with these default kinds (``kinds_of_fflags``) inside the block."""
    token = _KINDS.set(tuple(kinds))
    try:
        yield
    finally:
        _KINDS.reset(token)


def current_kinds() -> tuple[int, int]:
    return _KINDS.get()


def default_real() -> FType:
    return FType("real", _KINDS.get()[0])


def double_real() -> FType:
    return FType("real", _KINDS.get()[1])


def default_complex() -> FType:
    return FType("complex", _KINDS.get()[0])


def double_complex() -> FType:
    return FType("complex", _KINDS.get()[1])

# --------------------------------------------------------------------------- implicit typing


def default_implicit() -> dict[str, Optional[FType]]:
    """Letter -> type: i-n integer, everything else real (Fortran's default rule)."""
    real = default_real()
    return {c: (ir.INTEGER if "i" <= c <= "n" else real) for c in "abcdefghijklmnopqrstuvwxyz"}


def implicit_type(name: str, rules: dict[str, Optional[FType]]) -> Optional[FType]:
    if not name:
        return None
    c = name[0].lower()
    if c == "_" or c == "$":
        return None
    return rules.get(c)


# --------------------------------------------------------------------------- kinds


# The kinds gfortran has on x86-64 (and, but for real(10), on aarch64) Linux: the byte size.
VALID_KINDS = {
    "integer": (1, 2, 4, 8, 16),
    "real": (4, 8, 10, 16),
    "complex": (4, 8, 10, 16),
    "logical": (1, 2, 4, 8, 16),
    "character": (1, 4),
}
# (kind, decimal precision, decimal exponent range) of gfortran's real kinds
_REAL_MODELS = ((4, 6, 37), (8, 15, 307), (10, 18, 4931), (16, 33, 4931))
_INT_RANGES = ((1, 2), (2, 4), (4, 9), (8, 18), (16, 38))


class KindError(ValueError):
    """A kind that names no type of the compiler (e.g. ``real(3)``, or the negative result
    of ``selected_real_kind`` for a precision it cannot give)."""


def selected_real_kind(p: int | None = None, r: int | None = None) -> int:
    """``SELECTED_REAL_KIND(P, R)`` as gfortran answers it: the smallest kind with at least
    P digits and exponent range R; -1 (precision), -2 (range), -3 (both) when none has."""
    p = 0 if p is None else p
    r = 0 if r is None else r
    for kind, prec, rng in _REAL_MODELS:
        if prec >= p and rng >= r:
            return kind
    p_ok = any(prec >= p for _, prec, _ in _REAL_MODELS)
    r_ok = any(rng >= r for _, _, rng in _REAL_MODELS)
    return -1 if r_ok else (-2 if p_ok else -3)


def selected_int_kind(r: int) -> int:
    """``SELECTED_INT_KIND(R)``: the smallest integer kind holding 10**R; -1 when none does."""
    for kind, rng in _INT_RANGES:
        if rng >= r:
            return kind
    return -1


def real_kind_from_precision(p: int) -> int:
    return selected_real_kind(p)


def int_kind_from_range(r: int) -> int:
    return selected_int_kind(r)


def check_kind(base: str, kind) -> int:
    """``kind`` if the compiler has that kind of ``base``; raises :class:`KindError`."""
    if isinstance(kind, bool) or not isinstance(kind, int):
        raise KindError(f"a kind must be an integer constant, got {kind!r}")
    valid = VALID_KINDS.get(base)
    if valid is not None and kind not in valid:
        if kind < 0:
            raise KindError(f"kind {kind}: SELECTED_*_KIND found no {base} kind with the precision or range asked for")
        raise KindError(f"{base} kind {kind} does not exist (gfortran has {', '.join(map(str, valid))})")
    return kind


def normalise_kind(base: str, kind: int, star: bool) -> int:
    """``complex*16`` means kind 8 per part; ``complex(kind=8)`` is already per part."""
    if base == "complex" and star:
        return max(4, kind // 2)
    return kind


# --------------------------------------------------------------------------- result types

_ORDER = {"integer": 0, "real": 1, "complex": 2}


def promote(a: Optional[FType], b: Optional[FType]) -> Optional[FType]:
    """Type of ``a op b`` for arithmetic operators (integer < real < complex, larger kind)."""
    if a is None:
        return b
    if b is None:
        return a
    if a.base not in _ORDER or b.base not in _ORDER:
        return a if a.base == b.base else None
    if _ORDER[a.base] == _ORDER[b.base]:
        return FType(a.base, max(a.kind, b.kind))
    hi, lo = (a, b) if _ORDER[a.base] > _ORDER[b.base] else (b, a)
    if lo.base == "integer":
        return hi
    # real with complex: the larger kind wins
    return FType(hi.base, max(hi.kind, lo.kind))


def binop_type(op: str, a: Optional[FType], b: Optional[FType]) -> Optional[FType]:
    if op in ("==", "/=", "<", "<=", ">", ">=", "and", "or", "eqv", "neqv"):
        return ir.LOGICAL
    if op == "//":
        la = a.char_len if a and a.base == "character" else None
        lb = b.char_len if b and b.base == "character" else None
        return FType("character", 1, (la + lb) if la is not None and lb is not None else None)
    if op == "**" and a is not None and b is not None and a.base == "integer" and b.base != "integer":
        return promote(a, b)
    if op == "**" and a is not None and b is not None and b.base == "integer":
        return a
    return promote(a, b)


# --------------------------------------------------------------------------- intrinsics

# name -> rule; rules: 'arg' (type of the first argument), 'int', 'real' (default real),
# 'dble', 'logical', 'char', 'promote' (promotion over all args), 'real-of-arg'
# (real part type of a complex arg), 'cmplx', 'dcmplx', 'elem' (element type of arg)
INTRINSICS: dict[str, str] = {
    # numeric
    "abs": "abs", "sqrt": "arg", "exp": "arg", "log": "arg", "log10": "arg",
    "sin": "arg", "cos": "arg", "tan": "arg", "asin": "arg", "acos": "arg", "atan": "arg",
    "atan2": "promote", "sinh": "arg", "cosh": "arg", "tanh": "arg", "asinh": "arg", "acosh": "arg", "atanh": "arg",
    "dsqrt": "dble", "dexp": "dble", "dlog": "dble", "dlog10": "dble", "dsin": "dble", "dcos": "dble", "dtan": "dble",
    "dasin": "dble", "dacos": "dble", "datan": "dble", "datan2": "dble", "dsinh": "dble", "dcosh": "dble", "dtanh": "dble",
    "dabs": "dble", "iabs": "int", "cabs": "real", "csqrt": "arg", "cexp": "arg", "clog": "arg", "cdabs": "dble",
    "zabs": "dble", "cdsqrt": "arg", "alog": "real", "alog10": "real",
    "min": "promote", "max": "promote", "amin1": "real", "amax1": "real", "dmin1": "dble", "dmax1": "dble",
    "min0": "int", "max0": "int", "amin0": "real", "amax0": "real", "min1": "int", "max1": "int",
    "mod": "promote", "amod": "real", "dmod": "dble", "modulo": "promote",
    "sign": "promote", "isign": "int", "dsign": "dble", "dim": "promote", "idim": "int", "ddim": "dble",
    "int": "int", "ifix": "int", "idint": "int", "nint": "int", "idnint": "int", "floor": "int", "ceiling": "int",
    "aint": "arg", "anint": "arg", "dint": "dble", "dnint": "dble",
    "real": "real", "float": "real", "sngl": "real", "dble": "dble", "dfloat": "dble",
    "cmplx": "cmplx", "dcmplx": "dcmplx", "conjg": "arg", "dconjg": "arg", "aimag": "real-of-arg",
    "dimag": "dble", "dreal": "dble",
    "epsilon": "arg", "huge": "arg", "tiny": "arg", "digits": "int", "precision": "int", "radix": "int",
    "range": "int", "kind": "int", "selected_real_kind": "int", "selected_int_kind": "int",
    "fraction": "arg", "exponent": "int", "scale": "arg", "spacing": "arg", "nearest": "arg",
    "hypot": "promote", "erf": "arg", "erfc": "arg", "gamma": "arg", "log_gamma": "arg", "bessel_j0": "arg",
    # arrays
    "sum": "elem", "product": "elem", "maxval": "elem", "minval": "elem", "dot_product": "promote",
    "matmul": "promote", "transpose": "arg", "size": "int", "shape": "int", "lbound": "int", "ubound": "int",
    "maxloc": "int", "minloc": "int", "count": "int", "any": "logical", "all": "logical",
    "allocated": "logical", "present": "logical", "associated": "logical", "reshape": "arg", "spread": "arg",
    "pack": "arg", "unpack": "arg", "merge": "arg", "cshift": "arg", "eoshift": "arg",
    # bits
    "iand": "promote", "ior": "promote", "ieor": "promote", "not": "arg", "ishft": "arg", "ishftc": "arg",
    "ibset": "arg", "ibclr": "arg", "btest": "logical", "ibits": "arg", "shiftl": "arg", "shiftr": "arg",
    "popcnt": "int", "leadz": "int", "trailz": "int",
    # characters
    "len": "int", "len_trim": "int", "index": "int", "ichar": "int", "iachar": "int", "char": "char",
    "achar": "char", "trim": "char", "adjustl": "char", "adjustr": "char", "repeat": "char", "scan": "int",
    "verify": "int", "lge": "logical", "lgt": "logical", "lle": "logical", "llt": "logical",
}

# Intrinsics whose value depends only on their arguments (safe inside parallel loops).
PURE_INTRINSICS = set(INTRINSICS) - {"allocated", "present", "associated"}

# Subroutine intrinsics
INTRINSIC_SUBROUTINES = {"random_number", "random_seed", "cpu_time", "system_clock", "date_and_time",
                         "get_command_argument", "move_alloc", "mvbits"}


def is_intrinsic(name: str) -> bool:
    return name.lower() in INTRINSICS


def intrinsic_type(name: str, args: list, keywords: dict | None = None) -> Optional[FType]:
    """Result type of an intrinsic given its (typed) argument expressions."""
    rule = INTRINSICS.get(name.lower())
    types = [a.ftype for a in args]
    first = types[0] if types else None
    kw = keywords or {}
    kind_arg = kw.get("kind")
    kind_val = kind_arg.value if isinstance(kind_arg, ir.Literal) and isinstance(kind_arg.value, int) else None
    if rule is None:
        return None
    if rule == "arg":
        return first
    if rule == "abs":
        if first is not None and first.base == "complex":
            return FType("real", first.kind)
        return first
    if rule == "int":
        return FType("integer", kind_val or 4)
    if rule == "real":
        if name.lower() == "real" and kind_val:
            return FType("real", kind_val)
        if name.lower() == "real" and first is not None and first.base == "complex":
            return FType("real", first.kind)
        return default_real()
    if rule == "dble":
        return double_real()
    if rule == "logical":
        return ir.LOGICAL
    if rule == "char":
        return FType("character", 1, 1 if name.lower() in ("char", "achar") else None)
    if rule == "promote":
        t = None
        for x in types:
            t = promote(t, x)
        return t
    if rule == "real-of-arg":
        return FType("real", first.kind) if first is not None else None
    if rule == "cmplx":
        if kind_val:
            return FType("complex", kind_val)
        return default_complex()
    if rule == "dcmplx":
        return double_complex()
    if rule == "elem":
        return first
    return None
