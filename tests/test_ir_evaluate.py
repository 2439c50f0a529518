"""ir.evaluate follows Fortran: NINT rounds halves away from zero, integer division and
MOD truncate toward zero, integer powers stay integers, and a zero divisor is a ValueError
(what callers catch), never a ZeroDivisionError escaping them."""
from __future__ import annotations

import pytest

from port_fortran.fortran import ir


def lit(v):
    return ir.Literal(v, str(v), ftype=ir.REAL8 if isinstance(v, float) else ir.INTEGER)


def call(name, *args):
    return ir.FuncCall(name, [lit(a) if not isinstance(a, ir.Expr) else a for a in args], intrinsic=True)


@pytest.mark.parametrize("x, want", [(2.5, 3), (-2.5, -3), (0.5, 1), (1.5, 2), (-0.4, 0), (2.49, 2)])
def test_nint_rounds_halves_away_from_zero(x, want):
    assert ir.evaluate(call("nint", x), {}) == want


@pytest.mark.parametrize("a, b, want", [(7, 2, 1), (-7, 2, -1), (7, -2, 1), (6, 3, 0)])
def test_mod_has_the_sign_of_the_first_argument(a, b, want):
    assert ir.evaluate(call("mod", a, b), {}) == want


def test_integer_division_truncates_toward_zero():
    assert ir.evaluate(ir.BinOp("/", lit(-7), lit(2)), {}) == -3


@pytest.mark.parametrize("a, b, want", [(2, -1, 0), (1, -3, 1), (-1, -3, -1), (-1, -2, 1), (3, 2, 9)])
def test_integer_powers_stay_integers(a, b, want):
    v = ir.evaluate(ir.BinOp("**", lit(a), lit(b)), {})
    assert v == want and isinstance(v, int)


@pytest.mark.parametrize("e", [
    ir.BinOp("/", lit(1), lit(0)),
    ir.BinOp("/", lit(1.0), lit(0.0)),
    ir.BinOp("**", lit(0), lit(-1)),
    call("mod", 3, 0),
])
def test_zero_divisor_is_a_value_error(e):
    with pytest.raises(ValueError):
        ir.evaluate(e, {})


def test_unknown_name_is_a_key_error():
    with pytest.raises(KeyError):
        ir.evaluate(ir.Name("n", ftype=ir.INTEGER), {})
