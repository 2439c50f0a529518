"""Short Fortran-like text for IR expressions (messages, ``port-fortran list``)."""
from __future__ import annotations

from . import ir, strings

_PREC = {"eqv": 1, "neqv": 1, "or": 2, "and": 3, "==": 5, "/=": 5, "<": 5, "<=": 5, ">": 5, ">=": 5,
         "//": 6, "+": 7, "-": 7, "*": 8, "/": 8, "**": 10}
_SPELL = {"and": ".and.", "or": ".or.", "eqv": ".eqv.", "neqv": ".neqv.", "not": ".not."}


def expr_str(e, prec: int = 0) -> str:
    if e is None:
        return ""
    if isinstance(e, ir.Literal):
        if isinstance(e.value, str) and not e.text:
            return repr(e.value)
        return e.text or str(e.value)
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Slice):
        s = f"{expr_str(e.lower)}:{expr_str(e.upper)}"
        return s + (f":{expr_str(e.step)}" if e.step is not None else "")
    if isinstance(e, ir.ArrayRef):
        return f"{e.name}({', '.join(expr_str(x) for x in e.subscripts)})"
    if isinstance(e, ir.FuncCall):
        sub = strings.render(e, expr_str)
        if sub is not None:
            return sub
        parts = [expr_str(x) for x in e.args] + [f"{k}={expr_str(v)}" for k, v in e.keywords.items()]
        return f"{e.name}({', '.join(parts)})"
    if isinstance(e, ir.ArrayConstructor):
        return "[" + ", ".join(expr_str(x) for x in e.items) + "]"
    if isinstance(e, ir.UnaryOp):
        s = f"{_SPELL.get(e.op, e.op)}{expr_str(e.operand, 9)}"
        return f"({s})" if prec > 7 else s
    if isinstance(e, ir.BinOp):
        p = _PREC.get(e.op, 4)
        right_p = p + 1 if e.op != "**" else p
        left_p = p if e.op != "**" else p + 1
        s = f"{expr_str(e.left, left_p)} {_SPELL.get(e.op, e.op)} {expr_str(e.right, right_p)}"
        if e.op in ("+", "-", "*", "/", "**"):
            s = f"{expr_str(e.left, left_p)}{e.op}{expr_str(e.right, right_p)}"
        return f"({s})" if p < prec else s
    return repr(e)
