"""CHARACTER strings in the rules translator's C++ (the runtime: pf_strings.hpp, which
pf_kokkos_compat.hpp includes).

A string is its bytes and its length, never a terminated C string: a dummy is a ``pf::Str``
(the caller's bytes and the hidden length gfortran passes), a local of constant length a
``pf::Chars<N>`` (its own blank-filled buffer, which converts to ``pf::Str``). One character
(``character*1``, ``s(i:i)``, ``char(k)``) stays a C++ ``char``, as before.

Fortran semantics kept: assignment pads with blanks or truncates (``pf::assign``),
comparisons pad the shorter operand with blanks (``pf::compare``, ordering included),
substrings are 1-based (``pf::sub``, ``pf::at``). Intrinsics: LEN, LEN_TRIM, INDEX, ICHAR,
IACHAR (CHAR and ACHAR give a ``char``); any other intrinsic of a string, and ``//``, are
refused by name. Strings stay on the host: a statement touching a string and an array is
refused (``string-in-kernel``), a loop touching a string runs as a host loop (translate/plan.py).
"""
from __future__ import annotations

from typing import Optional

from ..fortran import ir
from ..fortran.strings import Substring, SubstringStore, is_string_type

ATOM = 100
CMP = {"==": "==", "/=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
STRING_INTRINSICS = {"len", "len_trim", "index", "ichar", "iachar"}
#: intrinsics of CHARACTER arguments the translator does not print (refused by name)
REFUSED = {"trim", "adjustl", "adjustr", "repeat", "scan", "verify", "lge", "lgt", "lle", "llt",
           "new_line", "achar_kind"}
ANY_LEN = ir.FType("character", 1, None)


def c_literal(v: str) -> str:
    """A C++ string literal holding the bytes of ``v`` (no trigraphs, no escapes left)."""
    out = []
    for ch in v:
        if ch in "\\\"?":
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append(f"\\{ord(ch):03o}")
    return '"' + "".join(out) + '"'


def literal(v: str) -> tuple[str, int, ir.FType]:
    return f"pf::str({c_literal(v)}, {len(v)})", ATOM, ir.FType("character", 1, len(v))


def substring(p, e: Substring) -> tuple[str, int, ir.FType]:
    """``s(lo:hi)``: ``pf::at(s, i)`` (a char) when the bounds are the same expression, else
    ``pf::sub(s, lo, hi)``."""
    if not isinstance(e.base, ir.Name):
        p.refuse("unsupported-expression", "a substring of an element of a character array")
    base, _, bt = p._p(e.base)
    if not is_string_type(bt):
        p.refuse("unsupported-expression", f"substring of '{e.base.name}', which is not a CHARACTER string")
    lo = p.expr(e.lower, ir.FType("integer", 8))
    if e.ftype is not None and e.ftype.char_len == 1 and e.lower == e.upper:
        return f"pf::at({base}, {lo})", ATOM, ir.FType("character", 1, 1)
    hi = p.expr(e.upper, ir.FType("integer", 8))
    return f"pf::sub({base}, {lo}, {hi})", ATOM, e.ftype or ANY_LEN


def compare(p, op: str, lt: str, ltype: ir.FType, rt: str, rtype: ir.FType) -> tuple[str, int, ir.FType]:
    """A comparison of two character values: ``==`` of two ``char`` as in C++, anything else
    through ``pf::compare`` (blank padding, unsigned collating order)."""
    if op not in CMP:
        p.refuse("unsupported-expression", f"operator '{op}' on CHARACTER values")
    if ltype.base != "character" or rtype.base != "character":
        p.refuse("type-mismatch", f"CHARACTER compared with {rtype if ltype.base == 'character' else ltype}")
    if not is_string_type(ltype) and not is_string_type(rtype) and op in ("==", "/="):
        return f"{lt} {CMP[op]} {rt}", 9, ir.LOGICAL
    return f"pf::compare({lt}, {rt}) {CMP[op]} 0", 9, ir.LOGICAL


def intrinsic(p, e: ir.FuncCall) -> Optional[tuple[str, int, ir.FType]]:
    """The C++ of a character intrinsic of ``e``, None when ``e`` is not one."""
    name = e.name
    if name in REFUSED:
        p.refuse("unsupported-intrinsic", f"intrinsic {name.upper()} of CHARACTER values is not supported by the "
                                          "rules translator")
    if name not in STRING_INTRINSICS:
        return None
    if e.keywords and name != "index" or set(e.keywords) - {"back"}:
        p.refuse("unsupported-intrinsic", f"{name.upper()} with keyword arguments {', '.join(e.keywords)}")
    args = [p._p(a) for a in e.args]
    if any(t.base != "character" for _, _, t in args[:2 if name == "index" else 1]):
        p.refuse("type-mismatch", f"{name.upper()} of a value that is not CHARACTER")
    if name in ("ichar", "iachar"):
        return f"pf::ichar({args[0][0]})", ATOM, ir.INTEGER
    if name in ("len", "len_trim"):
        return f"static_cast<int>(pf::{name}({args[0][0]}))", ATOM, ir.INTEGER
    back = e.keywords.get("back") or (e.args[2] if len(e.args) > 2 else None)
    extra = f", static_cast<bool>({p.expr(back)})" if back is not None else ""
    return f"static_cast<int>(pf::index({args[0][0]}, {args[1][0]}{extra}))", ATOM, ir.INTEGER


def assign(em, s: ir.Assign) -> Optional[str]:
    """The C++ of an assignment to a string or of a string value (None: neither)."""
    t = s.target
    if isinstance(s.value, SubstringStore):
        v = s.value
        if not isinstance(t, ir.Name):
            raise_refusal(s.line, "assignment to a substring of an element of a character array")
        sub = Substring("substring", [v.base, v.lower, v.upper], True, ftype=ANY_LEN)
        return f"pf::assign({em.ex(sub, line=s.line)}, {em.ex(v.value, line=s.line)});"
    sym = em.tab.get(t.name)
    vt = em.p.type_of(s.value) if sym is not None and sym.ftype.base == "character" else None
    if sym is None or sym.ftype.base != "character" or not (is_string_type(sym.ftype) or is_string_type(vt)):
        return None
    return f"pf::assign({em.ex(t, line=s.line)}, {em.ex(s.value, line=s.line)});"


def raise_refusal(line: int, msg: str, code: str = "unsupported-expression"):
    from .symbols import Refusal
    raise Refusal(code, msg, line)


def touches_strings(exprs, tab) -> Optional[str]:
    """The first CHARACTER string (a name) the expressions read or write, else None. A
    literal is constant data a kernel may read (a device's constant memory on CUDA), and an
    element of an array of strings lives in a View like any array's: neither is counted."""
    for e in exprs:
        for x in ir.walk_expr(e):
            if isinstance(x, (Substring, SubstringStore)):
                return expr_name(x.base)
            if isinstance(x, ir.Name):
                sym = tab.get(x.name)
                if sym is not None and not sym.is_array and is_string_type(sym.ftype):
                    return x.name
    return None


def expr_name(e: ir.Expr) -> str:
    return getattr(e, "name", "?")


def names_in_value(e: ir.Expr) -> set[str]:
    """The names whose values ``e`` reads: as access.names_in, less a string read only for
    its LEN (which writing the string's characters never changes)."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.FuncCall) and x.intrinsic and x.name == "len" and len(x.args) == 1 \
                and isinstance(x.args[0], ir.Name):
            continue
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            out.add(x.name)
        stack.extend(ir.expr_children(x))
    return out


def string_in(stmts: list[ir.Stmt], tab) -> Optional[str]:
    """The first CHARACTER string the statements (nested ones included) touch, else None."""
    from .access import own_exprs
    for t in ir.walk(stmts):
        exprs = list(own_exprs(t)) + ([t.target] if isinstance(t, ir.Assign) else [])
        name = touches_strings(exprs, tab)
        if name is not None:
            return name
    return None


def refuse_in_kernel(s: ir.Stmt, tab) -> None:
    """A statement bound for a kernel (it touches arrays) must not touch a string: strings
    stay on the host, where the caller's bytes are."""
    name = string_in([s], tab)
    if name is not None:
        raise_refusal(s.line, f"CHARACTER string {name} in a statement that also touches arrays (it would run in a "
                              "kernel; strings stay on the host)", code="string-in-kernel")
