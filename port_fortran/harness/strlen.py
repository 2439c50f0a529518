"""The length of a CHARACTER function result, as the caller computes it (gfortran passes the
result's buffer and length as hidden leading arguments: translate/render.entry_params).

A declared constant length (``character*8``) is that length; a specification expression
(``character(len=len(s))``, ``len=n+2``, ``len=max(len(a), len(b))``) is evaluated from the
case's drawn scalar arguments: integer literals, integer dummies, LEN/LEN_TRIM of string
dummies, ``+ - * /`` (Fortran integer division), MAX, MIN. Anything else (an assumed-length
``character*(*)`` result, a module constant) is refused by name, before any case is drawn.
"""
from __future__ import annotations

import ast
from typing import Any, Optional

from ..fortran import ir
from ..fortran.strings import string_result


def result_length_reason(kernel: ir.Kernel) -> str:
    """Why the harness cannot size this kernel's string result ('' if it can, or if none)."""
    r = string_result(kernel)
    if r is None:
        return ""
    if r.ftype.char_len is not None:
        return ""
    text = getattr(r, "len_runtime", None)
    if not text:
        return f"function result {r.name} of assumed length (character*(*)): its length is the caller's declaration"
    if not kernel.module:
        return (f"external function {kernel.name} with a result of length {text}: a caller needs an explicit "
                "interface to compute it")
    try:
        result_length(kernel, {a.name: (1 if a.ftype.base == "integer" else "x") for a in kernel.args
                               if not a.rank})
    except ValueError as e:
        return f"function result {r.name} of length {text}: {e}"
    return ""


def result_length(kernel: ir.Kernel, scalars: dict[str, Any]) -> int:
    """The length of the string result with the scalar arguments ``scalars`` (name: value;
    a string dummy's value is its text, blank padded). Raises ValueError when it cannot."""
    r = string_result(kernel)
    if r.ftype.char_len is not None:
        return r.ftype.char_len
    text = (getattr(r, "len_runtime", None) or "").lower()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"'{text}' is not an expression the harness evaluates") from None
    return max(0, int(_eval(tree.body, kernel, scalars)))


def _eval(e, kernel, scalars) -> int:
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return e.value
    if isinstance(e, ast.Name):
        v = scalars.get(e.id)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"'{e.id}' is not an integer argument")
        return v
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        v = _eval(e.operand, kernel, scalars)
        return -v if isinstance(e.op, ast.USub) else v
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        a, b = _eval(e.left, kernel, scalars), _eval(e.right, kernel, scalars)
        if isinstance(e.op, ast.Div):
            if b == 0:
                raise ValueError("a division by zero")
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        return a + b if isinstance(e.op, ast.Add) else a - b if isinstance(e.op, ast.Sub) else a * b
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords and e.args:
        f = e.func.id
        if f in ("len", "len_trim") and len(e.args) == 1 and isinstance(e.args[0], ast.Name):
            v = scalars.get(e.args[0].id)
            if not isinstance(v, str):
                raise ValueError(f"'{e.args[0].id}' is not a string argument")
            return len(v) if f == "len" else len(v.rstrip(" "))
        if f in ("max", "min"):
            vals = [_eval(a, kernel, scalars) for a in e.args]
            return max(vals) if f == "max" else min(vals)
    raise ValueError(f"'{ast.unparse(e)}' is not an expression the harness evaluates")
