"""Character substrings in the IR: ``s(lo:hi)`` and ``a(i)(lo:hi)``, read and assigned.

Both nodes are :class:`ir.FuncCall` subclasses on purpose: every walker of the package
(names read, names written, intents, dependence, data flow) already treats a function call's
arguments as reads, so a substring is seen as reading its string and its bounds without
each walker learning a new node. An assignment to a substring is the statement
``Assign(target=<the string>, value=SubstringStore(<the string>, lo, hi, value))``: the
string is written (and read: the characters outside ``lo:hi`` stay), which is what the
Fortran statement does (F2018 10.2.1.3: ``s(lo:hi) = v`` defines only those characters).

``lower``/``upper`` are always filled: an omitted lower bound is 1, an omitted upper bound
``len(s)``. The type of a :class:`Substring` is ``character(len=hi-lo+1)`` when both bounds
are the same expression or integer literals, else ``character(len=*)`` (``char_len`` None).
"""
from __future__ import annotations

from typing import Optional

from . import ir


class _Span(ir.FuncCall):
    """``base(lower:upper)`` as a call node: ``args[:3] == [base, lower, upper]``."""

    @property
    def base(self) -> ir.Expr:
        return self.args[0]

    @property
    def lower(self) -> ir.Expr:
        return self.args[1]

    @property
    def upper(self) -> ir.Expr:
        return self.args[2]


class Substring(_Span):
    """``base(lower:upper)``: ``args == [base, lower, upper]``; ``base`` a :class:`ir.Name`
    (a scalar string) or an :class:`ir.ArrayRef` (an element of a character array)."""


class SubstringStore(_Span):
    """The value of ``base`` after ``base(lower:upper) = value``: ``args == [base, lower,
    upper, value]``. Only ever the value of an :class:`ir.Assign` whose target is ``base``."""

    @property
    def value(self) -> ir.Expr:
        return self.args[3]


def substring_length(lo: ir.Expr, hi: ir.Expr) -> Optional[int]:
    """The length of ``lo:hi`` when the text fixes it (``i:i``, ``2:5``), else None."""
    if lo == hi:
        return 1
    if isinstance(lo, ir.Literal) and isinstance(hi, ir.Literal) and isinstance(lo.value, int) \
            and isinstance(hi.value, int):
        return max(0, hi.value - lo.value + 1)
    return None


def make_substring(base: ir.Expr, lo: Optional[ir.Expr], hi: Optional[ir.Expr]) -> Substring:
    """``base(lo:hi)`` with the omitted bounds filled (1, ``len(base)``)."""
    lo = lo if lo is not None else ir.Literal(1, "1", ftype=ir.INTEGER)
    hi = hi if hi is not None else ir.FuncCall("len", [base], True, ftype=ir.INTEGER)
    n = substring_length(lo, hi)
    return Substring("substring", [base, lo, hi], True, ftype=ir.FType("character", 1, n))


def make_store(base: ir.Expr, sub: Substring, value: ir.Expr) -> SubstringStore:
    return SubstringStore("substring_store", [base, sub.lower, sub.upper, value], True, ftype=base.ftype)


def is_string_type(t: Optional[ir.FType]) -> bool:
    """A CHARACTER type of a length other than one (``len=*`` included)."""
    return t is not None and t.base == "character" and t.char_len != 1


def string_result(kernel) -> Optional[ir.Variable]:
    """The result of a function returning a CHARACTER string (not ``character*1``), else None.
    gfortran returns it through two hidden leading arguments, the caller's buffer and its
    length (``void f(char *res, size_t res_len, <args>, <trailing lengths>)``); the port's
    entry takes the same (docs/CONTRACTS.md)."""
    r = getattr(kernel, "result", None)
    if r is None or getattr(kernel, "kind", "function") != "function" or not is_string_type(r.ftype) or r.dims:
        return None
    return r


def render(e: ir.FuncCall, show) -> Optional[str]:
    """Fortran text of a substring node (``show`` renders a subexpression), else None."""
    if isinstance(e, Substring):
        return f"{show(e.base)}({show(e.lower)}:{show(e.upper)})"
    if isinstance(e, SubstringStore):
        return f"{show(e.base)}({show(e.lower)}:{show(e.upper)}) <- {show(e.value)}"
    return None
