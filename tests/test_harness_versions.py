"""The values that select each version of a loop, and whether the original accepts them.

No compiler: the front end's IR, the flow-sensitive subscript ranges (harness.extents.
FlowRanges), the acceptance test and the spec inference (harness.versions)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

from port_fortran.errors import UserError
from port_fortran.fortran import parse_file
from port_fortran.harness.flowranges import FlowRanges
from port_fortran.harness.inputs import cases, layout
from port_fortran.harness.infer import infer, load_or_infer
from port_fortran.harness.versions import accepts

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ROOT / "tests" / "data" / "translate" / "versions.f"


def _kernels(path) -> dict:
    return {k.name: k for k in parse_file(str(path)).kernels}


def _one(tmp_path, src, name="k.f90"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(src).lstrip("\n"))
    sf = parse_file(str(p), use_cache=False)
    assert not sf.errors, sf.errors
    return sf.kernels[0]


@pytest.fixture(scope="module")
def blas():
    return _kernels(ROOT / "fortran_kernels" / "blas1.f") | _kernels(ROOT / "fortran_kernels" / "sblas1.f")


def test_flow_ranges_follow_the_branches_a_stride_selects(blas):
    k = blas["daxpy"]
    # incx = -2: IX starts at (-n+1)*incx + 1 = 13 and steps down to 1; incy = 0: dy(1) only
    w = FlowRanges(k, {"n": 7, "incx": -2, "incy": 0}).run()
    assert w.touched == {"dx": [(1, 13)], "dy": [(1, 1)]} and not w.errors
    # the unit-stride branch alone
    assert FlowRanges(k, {"n": 7, "incx": 1, "incy": 1}).run().touched == {"dy": [(1, 7)], "dx": [(1, 7)]}
    # a forward GOTO to the unit-stride loop (saxpy): the strided loop is not reached
    w = FlowRanges(blas["saxpy"], {"n": 5, "incx": 1, "incy": 1}).run()
    assert w.touched == {"sy": [(1, 5)], "sx": [(1, 5)]}
    # IF (N .LE. 0 .OR. INCX .LE. 0) RETURN: nothing touched
    assert FlowRanges(blas["dscal"], {"n": 7, "incx": 0}).run().touched == {}
    # an interval (any stride in -2..2) covers every branch
    lo, hi = FlowRanges(k, {"n": 7, "incx": (-2, 2), "incy": 1}).run().touched["dx"][0]
    assert lo <= 1 - 12 and hi >= 13


def test_accepts_blas_negative_and_zero_strides(blas):
    for name in ("daxpy", "ddot", "dnrm2", "dscal"):
        for inc in (-2, 0, 3):
            values = {"n": 7, "incx": inc, "incy": inc}
            assert accepts(blas[name], values) == (True, ""), (name, inc)


def test_a_negative_coefficient_below_the_lower_bound_is_not_accepted(tmp_path):
    k = _one(tmp_path, """
        subroutine s(n, k, a)
          integer n, k, i
          real(8) a(*)
          do i = 1, n
            a(1 + (i-1)*k) = a(1 + (i-1)*k) + 1.0d0
          end do
        end subroutine
    """)
    assert accepts(k, {"n": 7, "k": 0}) == (True, "")
    ok, why = accepts(k, {"n": 7, "k": -1})
    assert not ok and "a would be indexed at -5, below the lower bound 1 of dimension 1" in why
    assert accepts(k, {"n": 1, "k": -1})[0]  # one iteration: a(1) only


def test_zero_step_division_by_zero_explicit_bounds_and_jumps_are_refused(tmp_path):
    k = _one(tmp_path, """
        subroutine s(n, inc, m, a, b)
          integer n, inc, m, i
          real(8) a(*), b(n)
          do i = 1, n, inc
            a(i) = 0
          end do
          b(n / m) = 1
          b(n + m) = 2
        end subroutine
    """)
    ok, why = accepts(k, {"n": 4, "inc": 0, "m": 1})
    assert not ok and "DO step inc = 0" in why and "line 4" in why
    ok, why = accepts(k, {"n": 4, "inc": 1, "m": 0})
    assert not ok and "integer division by m = 0" in why
    ok, why = accepts(k, {"n": 4, "inc": 1, "m": 1})
    assert not ok and "b would be indexed at 5, above the upper bound n of dimension 1" in why
    assert not accepts(k, {"n": 4, "inc": 1, "m": (-1, 1)})[0]  # some value in the range fails
    back = _one(tmp_path, """
              SUBROUTINE B(N, A)
              INTEGER N, I
              DOUBLE PRECISION A(*)
              I = 1
        10    A(I) = 0
              I = I + 1
              IF (I .LE. N) GOTO 10
              END
    """, name="b.f")
    ok, why = accepts(back, {"n": 3})
    assert not ok and "could not be followed" in why and "backward GO TO 10" in why


def test_values_on_both_sides_of_each_condition():
    k = _kernels(VERSIONS)["vsym"]
    s = infer(k)
    assert s.args["k"].role == "scalar" and s.args["k"].values == [1, 0] and s.args["k"].range is None
    assert s.args["koff"].values == [0, 1, "n"]  # k = 0 and k >= n: parallel; k = 1: a recurrence
    assert s.args["lda"].values == ["m", 1]  # the first one selects the parallel version (it is timed)
    note = next(x for x in s.notes if x.startswith("k:"))
    assert "parallel with 1, serial with 0" in note and "left out: -1 (negative): a would be indexed at -5" in note
    # every value meets a case past the smallest sizes; expressions follow the size set
    cs = cases(s, 1)
    big = [c for c in cs if c.sizes["n"] > 1]
    for name, vals in (("k", {0, 1}), ("lda", {1, "m"}), ("koff", {0, 1, "n"})):
        got = {c.choices[name] for c in big}
        want = {(c.sizes[v] if isinstance(v, str) else v) for c in big for v in vals}
        assert got <= want and len({v for v in vals if not isinstance(v, str)} - got) == 0, (name, got)
    assert any(c.choices["koff"] == c.sizes["n"] > 1 for c in cs)
    assert any(c.choices["lda"] == c.sizes["m"] > 1 for c in cs)
    # the timed layout takes the first value of each
    lay = layout(k, s, {"n": 50, "m": 40})
    assert (lay.scalars["k"], lay.scalars["koff"], lay.scalars["lda"]) == (1, 0, 40)
    # so does a caller that chooses flags and strides only (timing)
    lay = layout(k, s, {"n": 50, "m": 40}, {}, rng=np.random.default_rng(3))
    assert (lay.scalars["k"], lay.scalars["koff"], lay.scalars["lda"]) == (1, 0, 40)


def test_stride_notes_say_which_version_each_value_selects(blas):
    s = infer(blas["daxpy"])
    assert s.args["incy"].values == [1, 2, -2, 0]
    note = next(x for x in s.notes if x.startswith("incy:"))
    assert "parallel only if incy /= 0" in note and "with 0 serially" in note and "2, -2 in parallel" in note


def test_strides_the_original_rejects_are_left_out_with_the_reason(tmp_path):
    k = _one(tmp_path, """
        subroutine s(n, x, incx)
          integer n, incx, i
          real(8) x(*)
          do i = 1, n
            x(1 + (i-1)*incx) = 2*x(1 + (i-1)*incx)
          end do
        end subroutine
    """)
    s = infer(k)
    assert s.args["incx"].values == [1, 2, 0]
    assert any(x.startswith("incx: stride -2 left out: x would be indexed at -11") for x in s.notes)


def test_edited_spec_values_for_strides_and_scalars(tmp_path):
    k = _kernels(VERSIONS)["vsym"]
    p = tmp_path / "vsym.spec.yaml"
    load_or_infer(k, p)
    data = yaml.safe_load(p.read_text())
    data["args"]["koff"]["values"] = [0, "n + 2", "2*m"]
    p.write_text(yaml.safe_dump(data))
    s = load_or_infer(k, p)
    assert s.edited and s.args["koff"].values == [0, "n + 2", "2*m"]
    assert {c.choices["koff"] for c in cases(s, 1) if c.sizes == {"n": 7, "m": 5}} <= {0, 9, 10}
    data["args"]["koff"]["values"] = [0, "q + 1"]
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"args.koff.values: .*unknown name 'q'.*size arguments m, n"):
        load_or_infer(k, p)
