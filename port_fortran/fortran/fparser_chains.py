"""Long operator chains parsed in one pass instead of one recursion per operator.

fparser2 matches the left-associative rules of R702-R717 (``a + b - c``, ``a * b / c``,
``a // b``, ``.and.``, ``.or.``, ``.eqv.``) by splitting the text at the rightmost
operator and matching the left part with the same rule again. Each level calls
``string_replace_map`` on the whole remaining text, a character loop in Python, so an
expression of n terms costs O(n^2) time and n levels of recursion: a 360-term stencil
(ParRes ``grid9``) took 0.9 s and blew Python's recursion limit ("expression nesting too
deep"), and the time quadruples when the stencil doubles.

:func:`install` wraps ``BinaryOpBase.match`` for those rules only: the text is mapped
once, split at every top-level operator at once, and the same left-deep tree fparser
would build (same classes, same items, same strings) is assembled bottom-up. Every
condition under which fparser's own rule would refuse a split makes the wrapper hand the
text to fparser's original matcher unchanged, so results can only differ in speed.
"""
from __future__ import annotations

_INSTALLED = False


def _left_recursive_rules():
    """Rule class -> a cheap upper bound of the number of its operators in a text (a chain
    needs two): most texts are single operands, and they go straight to fparser."""
    from fparser.two import Fortran2003

    return {
        Fortran2003.Add_Operand: lambda s: s.count("*") + s.count("/"),
        Fortran2003.Level_2_Expr: lambda s: s.count("+") + s.count("-"),
        Fortran2003.Level_3_Expr: lambda s: s.count("//"),
        Fortran2003.Or_Operand: lambda s: s.count(".") // 2,
        Fortran2003.Equiv_Operand: lambda s: s.count(".") // 2,
        Fortran2003.Level_5_Expr: lambda s: s.count(".") // 2,
    }


def _construct(cls, string: str, items: tuple):
    """An fparser node as ``Base.__new__`` + ``Base.__init__`` make it from a match result."""
    from fparser.two.utils import _set_parent

    obj = object.__new__(cls)
    obj.string = string
    obj.item = None
    _set_parent(obj, items)
    obj.init(*items)
    obj.parent = None
    return obj


def _chain_match(original, lhs_cls, op_pattern, rhs_cls, string):
    """``BinaryOpBase.match(lhs_cls, op_pattern, rhs_cls, string)`` for a left-recursive
    rule, without recursion. Returns what fparser's match returns: (lhs, op, rhs) or None."""
    from fparser.common.splitline import string_replace_map
    from fparser.two.utils import NoMatchError

    line, repmap = string_replace_map(string)
    pieces = op_pattern.get_compiled().split(line)
    # pieces = [x0, op1, x1, op2, x2, ...]: one capture group per operator, else not ours
    nops = (len(pieces) - 1) // 2
    if len(pieces) % 2 == 0 or nops < 2:
        return original(lhs_cls, op_pattern, rhs_cls, string)
    exact = abs(op_pattern)
    for i in range(1, len(pieces), 2):
        if not exact.match(pieces[i].strip()):
            return original(lhs_cls, op_pattern, rhs_cls, string)
    # Level k splits the prefix ending at operand k. fparser refuses a split when an empty
    # piece lies inside the prefix or its lhs or rhs is blank; the recursion goes down from
    # the top while levels split, and the prefix where it stops is the leftmost operand,
    # matched by the rule itself (through its other branches, e.g. a unary sign).
    if "" in pieces[1:-1]:
        return original(lhs_cls, op_pattern, rhs_cls, string)
    lowest = nops + 1
    for k in range(nops, 0, -1):
        if not pieces[2 * k].strip() or (k == 1 and not pieces[0].strip()):
            break
        lowest = k
    if lowest >= nops:
        return original(lhs_cls, op_pattern, rhs_cls, string)
    restored = [repmap(p) for p in pieces]
    try:
        prefix = "".join(restored[:2 * lowest - 1])
        obj = lhs_cls(prefix.strip())
        for k in range(lowest, nops + 1):
            rhs_obj = rhs_cls(restored[2 * k].strip())
            items = (obj, pieces[2 * k - 1].strip().upper().replace(" ", ""), rhs_obj)
            if k == nops:
                return items
            prefix = prefix + restored[2 * k - 1] + restored[2 * k]
            obj = _construct(lhs_cls, prefix.strip(), items)
    except NoMatchError:
        # some operand is not what this rule expects: fparser's own path decides (and
        # produces its own error or its other alternatives)
        return original(lhs_cls, op_pattern, rhs_cls, string)
    return None


def install() -> None:
    """Wrap ``BinaryOpBase.match`` (idempotent). Affects only the six left-recursive
    expression rules, and only when the text splits at two operators or more."""
    global _INSTALLED
    if _INSTALLED:
        return
    from fparser.two.utils import BinaryOpBase

    original = BinaryOpBase.match
    rules = _left_recursive_rules()

    def match(lhs_cls, op_pattern, rhs_cls, string, right=True, exclude_op_pattern=None):
        bound = rules.get(lhs_cls)
        if (bound is not None and right and exclude_op_pattern is None and not isinstance(op_pattern, str)
                and isinstance(string, str) and bound(string) >= 2):
            return _chain_match(original, lhs_cls, op_pattern, rhs_cls, string)
        return original(lhs_cls, op_pattern, rhs_cls, string, right=right, exclude_op_pattern=exclude_op_pattern)

    match.__wrapped__ = original
    BinaryOpBase.match = staticmethod(match)
    _INSTALLED = True
