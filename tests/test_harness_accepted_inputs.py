"""Inputs the original accepts (issue 12, class 4).

* ordering constraints from loops, declarations and subscripts (``x_min <= x_max``, a halo
  ``depth <= halo``, a divisor >= 1) and size sets that meet them, correctness and timing;
* zero-size outputs compare equal whatever their bounds (gfortran writes (1:0), the port
  keeps (7:6));
* the original runs first; inputs on which it returns inf/NaN are drawn again with
  narrower ranges; a routine whose original never gives finite outputs gets the reason
  code ``original-not-finite`` (the port is not at fault);
* the anti-cheat property of running the original first: when the port runs, no file of
  the original's output exists anywhere under the port directory.

The harness runs here with gfortran only: the "port" executable is the reference driver
itself (or a script around it), so no Kokkos build is needed.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from port_fortran.fortran import parse_file
from port_fortran.harness.compare import compare
from port_fortran.harness.constraints import constraints
from port_fortran.harness.inputs import Case, Record, layout
from port_fortran.harness.redraw import NOT_FINITE, not_finite
from port_fortran.harness.infer import infer
from port_fortran.harness.spec import Tolerance
from port_fortran.records import BuildResult

GFORTRAN = shutil.which("gfortran")

HALO = """\
subroutine halo_copy(x_min, x_max, y_min, y_max, halo, depth, field, out)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max, halo, depth
  real(8), intent(in) :: field(x_min-halo:x_max+halo, y_min-halo:y_max+halo)
  real(8), intent(out) :: out(x_min:x_max, y_min:y_max)
  integer :: j, k
  do k = y_min, y_max
    do j = x_min, x_max
      out(j, k) = field(j, k) + field(x_min - depth, k)
    end do
  end do
end subroutine halo_copy
"""

BLOCKS = """\
subroutine blocks(n, nb, a, s)
  implicit none
  integer, intent(in) :: n, nb
  real(8), intent(in) :: a(n)
  real(8), intent(out) :: s(n)
  integer :: i
  do i = 1, n
    s(i) = a(i) * mod(i, nb)
  end do
end subroutine blocks
"""

BLOWUP = """\
subroutine blowup(n, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = exp(800d0 * x(i))   ! overflows for x > 0.887
  end do
end subroutine blowup
"""

ALWAYS_INF = """\
subroutine always_inf(n, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = (abs(x(i)) + 1d0) * huge(1d0) * 2d0
  end do
end subroutine always_inf
"""


def _kernel(tmp_path: Path, text: str, name: str):
    p = tmp_path / f"{name}.f90"
    p.write_text(text)
    sf = parse_file(str(p), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def _meets(sizes: dict, k) -> bool:
    return all(c.value(sizes) >= 0 for c in constraints(k))


# ------------------------------------------------------------------ constraints


def test_constraints_from_loops_dims_and_subscripts(tmp_path):
    k, _ = _kernel(tmp_path, HALO, "halo_copy")
    got = {(c.kind, c.text.split(" (")[0]) for c in constraints(k)}
    assert ("loop", "x_max >= x_min") in got and ("loop", "y_max >= y_min") in got
    assert ("extent", "x_max >= x_min") in got  # out(x_min:x_max, ...)
    assert ("subscript", "halo >= depth") in got  # field(x_min - depth, k) within x_min - halo


def test_inferred_size_sets_respect_the_orderings(tmp_path):
    k, _ = _kernel(tmp_path, HALO, "halo_copy")
    spec = infer(k)
    assert spec.args["depth"].role == "scalar"  # only a subscript offset: drawn per case
    for s in spec.correctness + [spec.timing]:
        assert s["x_max"] >= s["x_min"] and s["y_max"] >= s["y_min"], s
        for seed in range(20):  # the drawn depth stays within the halo
            lay = layout(k, spec, s, rng=np.random.default_rng(seed))
            assert 1 <= lay.scalars["depth"] <= max(1, s["halo"]), (s, lay.scalars)
            assert _meets({**s, "depth": lay.scalars["depth"]}, k)
    big = spec.correctness[-1]
    assert big["x_max"] - big["x_min"] + 1 > 1 and big["y_max"] - big["y_min"] + 1 > 1  # loops really run
    t = spec.timing
    assert t["x_max"] - t["x_min"] + 1 >= 64  # timing: an extent, not an origin equal to the end
    lay = layout(k, spec, spec.correctness[1])
    assert all(n > 0 for n in lay.arrays["out"].shape)


FACES = """\
subroutine faces(x_min, x_max, y_min, y_max, depth, neighbours, fields, q)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max, depth
  integer, intent(in) :: neighbours(4), fields(2)
  real(8), intent(inout) :: q(x_min-2:x_max+2, y_min-2:y_max+2)
  integer :: j, k
  if (fields(1) == 1) then
    if (neighbours(3) == -1) then
      do k = 1, depth
        do j = x_min - depth, x_max + depth
          q(j, 1 - k) = q(j, 0 + k)
        end do
      end do
    end if
  end if
  do k = y_min, y_max
    do j = x_min, x_max
      if (k > y_min + 3 * depth) q(j, k - 3 * depth) = q(j, k - 3 * depth) + q(j, k)
    end do
  end do
end subroutine faces
"""


def test_references_under_branches_on_inputs_bound_the_sizes(tmp_path):
    # CloverLeaf's halo updates: every face under `if (fields(f) == 1)` and
    # `if (neighbours(face) == EXTERNAL_FACE)`, the halo written at 1 - k for k = 1, depth
    # with the field declared from y_min - 2. The harness takes both sides of those
    # comparisons, so the face runs on some case and must stay in bounds: depth <= 2 and
    # y_min <= 1 -- with depth still >= 1, so that the halo loops run. A reference under a
    # branch on a loop variable (q(j, k - 3 * depth) when k > y_min + 3 * depth) bounds nothing.
    k, _ = _kernel(tmp_path, FACES, "faces")
    got = {(c.kind, c.text.split(" (")[0]) for c in constraints(k)}
    assert ("subscript", "2 >= depth") in got and ("subscript", "3 >= depth + y_min") in got
    assert ("subscript", "2 >= 3*depth") not in got  # what the guard keeps in bounds is not asked
    spec = infer(k)
    for s in spec.correctness[1:] + [spec.timing]:
        assert _meets(s, k), s
        assert 1 <= s["depth"] <= 2 and s["y_min"] <= 1, s


def test_divisor_is_at_least_one(tmp_path):
    k, _ = _kernel(tmp_path, BLOCKS, "blocks")
    assert any(c.kind == "divisor" and "nb >= 1" in c.text for c in constraints(k))
    spec = infer(k, hints={"nb": {"range": [-3, 3]}})  # a range with zero in it
    assert spec.args["nb"].role == "scalar" and spec.args["nb"].range == [-3, 3]
    drawn = {layout(k, spec, spec.correctness[1], rng=np.random.default_rng(seed)).scalars["nb"] for seed in range(40)}
    assert drawn == {1, 2, 3}  # random still, never zero nor negative


# ------------------------------------------------------------------ comparison


def test_zero_size_outputs_are_equal_whatever_their_bounds():
    tol = Tolerance(rel=1e-12)
    ref = Record("cp", 4, (1, 1), np.zeros((0, 0), order="F"))
    port = Record("cp", 4, (7, 11), np.zeros((0, 0), order="F"))
    assert compare(ref, port, tol).passed
    other = Record("cp", 4, (7, 11), np.zeros((1, 0), order="F"))
    assert compare(ref, other, tol).passed  # (7:7, 11:10): empty too
    full = Record("cp", 4, (1, 1), np.zeros((1, 1), order="F"))
    assert not compare(full, port, tol).passed  # one element against none


def test_not_finite_tells_poison_from_overflow():
    x = Record("x", 4, (1,), np.array([0.5, 1.0]))
    poisoned = Record("y", 4, (1,), np.array([np.nan, np.nan]))
    assert not_finite([x, poisoned], [x, Record("y", 4, (1,), np.array([np.nan, 2.0]))]) == []  # left alone
    assert not_finite([x, poisoned], [x, Record("y", 4, (1,), np.array([np.inf, 2.0]))]) == ["y"]
    assert not_finite([x, poisoned], [Record("x", 4, (1,), np.array([np.nan, 1.0])), poisoned]) == ["x"]


# ------------------------------------------------------------------ the original first

needs_gfortran = pytest.mark.skipif(GFORTRAN is None, reason="gfortran not installed")


def _harness(tmp_path: Path, text: str, name: str, port_exe=None):
    """A harness whose 'port' is the reference driver (or ``port_exe(ref)``): no Kokkos."""
    from port_fortran.harness.core import Harness
    k, sf = _kernel(tmp_path, text, name)
    h = Harness(k, sf, tmp_path / "port")
    ref = h.build_reference()
    port = port_exe(ref) if port_exe else ref
    h._builds["serial"] = BuildResult("serial", True, artifacts={"ref_driver": str(ref), "pf_driver": str(port)})
    return h


@needs_gfortran
@pytest.mark.integration
def test_overflow_is_drawn_again_with_narrower_ranges(tmp_path):
    h = _harness(tmp_path, BLOWUP, "blowup")
    v = h.verify("serial", seeds=[11])
    assert v.passed, v.reason
    big = [c for c in v.cases if c.sizes["n"] == max(s["n"] for s in h.spec.correctness)][0]
    assert "drawn again" in big.label and "inf/NaN in y" in big.label
    assert big.seed != 11 + 7919 * v.cases.index(big)  # the inputs compared are the redrawn ones
    assert all(o.passed for o in big.outputs)


@needs_gfortran
@pytest.mark.integration
def test_original_never_finite_gets_its_reason_code(tmp_path):
    h = _harness(tmp_path, ALWAYS_INF, "always_inf")
    v = h.verify("serial", seeds=[3])
    assert not v.passed and v.code == NOT_FINITE
    assert all(c.code == NOT_FINITE for c in v.cases)
    assert "every input tried" in v.reason and "the port is not at fault" in v.reason
    assert "[0.95, 1.05]" in v.reason  # the narrowest ranges were tried too


SPY = """#!/bin/sh
# a 'port' that looks for the original's output before doing the work honestly
find "{root}" \\( -name 'ref.bin' -o -name '.original-*' \\) -print >> "{log}"
exec "{ref}" "$@"
"""


@needs_gfortran
@pytest.mark.integration
def test_port_never_finds_the_originals_output(tmp_path):
    """The original runs first, in a private directory that is removed before the port
    starts: a port searching the whole port directory for it finds nothing."""
    log = tmp_path / "spy.log"

    def spy(ref: Path) -> Path:
        p = tmp_path / "spy_port.sh"
        p.write_text(SPY.format(root=tmp_path / "port", log=log, ref=ref))
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
        return p

    h = _harness(tmp_path, BLOWUP, "blowup", port_exe=spy)
    v = h.verify("serial", seeds=[5])
    assert v.passed, v.reason
    assert log.exists() and log.read_text() == ""  # the spy ran every case and found nothing
    cases = tmp_path / "port" / "build" / "serial" / "cases"
    assert sorted(os.listdir(cases)) == ["in.bin"]  # nothing of either run is left beside the inputs


STOPS = """\
      SUBROUTINE HALT (N, X)
      DIMENSION X(N)
      IF (X(1) .GT. -2.0) STOP
      DO 10 I = 1, N
         X(I) = 2.0*X(I)
   10 CONTINUE
      END
"""

SIZED = """\
      SUBROUTINE GEOM (NEL, G)
      PARAMETER (LDIM=3, LX1=4)
      REAL G(2*LDIM, LX1*LX1, NEL)
      DO 10 IE = 1, NEL
      DO 10 J = 1, LX1*LX1
      DO 10 K = 1, 2*LDIM
         G(K, J, IE) = G(K, J, IE) + 1.0
   10 CONTINUE
      END
"""


@needs_gfortran
@pytest.mark.integration
def test_an_original_that_ends_the_program_is_its_own_failure(tmp_path):
    """A STOP in the routine: the driver never gets to write the outputs. Each case draws
    again (another branch may return) and, when none returns, the verdict is the
    original's (original-failed, naming STOP), not an unreadable output of the port's run
    (Livermore's and Nekbone's routines that STOP on bad arguments)."""
    from port_fortran.harness.redraw import ORIGINAL_FAILED
    h = _harness(tmp_path, STOPS, "halt")
    v = h.verify("serial", seeds=[2])
    assert not v.passed and v.code == ORIGINAL_FAILED, v.reason
    assert "ended the program instead of returning (a STOP or EXIT" in v.reason


def test_declared_extents_in_named_constants_are_evaluated(tmp_path):
    k, _ = _kernel(tmp_path, SIZED, "geom")
    spec = infer(k)
    lay = layout(k, spec, {"nel": 5}, rng=None)
    assert lay.arrays["g"].ubound == (6, 16, 5)


CAPPED = """\
      SUBROUTINE CAPPED (N, X)
      PARAMETER (NMAX=40)
      DIMENSION X(N)
      IF (N .GT. NMAX) STOP
      DO 10 I = 1, N
         X(I) = 2.0*X(I)
   10 CONTINUE
      END
"""


@needs_gfortran
@pytest.mark.integration
def test_sizes_the_original_rejects_are_left_out_of_the_proof(tmp_path):
    """A size check that STOPs (Nekbone's speclib: NP > NMAX): the cases whose sizes the
    original rejects are not the port's failures; the proof stands on the cases it
    accepts and says which were left out."""
    h = _harness(tmp_path, CAPPED, "capped")
    v = h.verify("serial", seeds=[4])
    assert v.passed, v.reason
    assert v.cases and all(c.sizes["n"] <= 40 for c in v.cases)
    left = [n for n in v.notes if "the original rejects" in n]
    assert left and all("ended the program" in n for n in left)


ILL = """\
subroutine ill(n, x, y, z)
  integer :: n, i
  real(8) :: x(n), y(n), z(n)
  do i = 1, n
    y(i) = sin(1.0d6 * x(i))
    z(i) = 2.0d0 * x(i)
  end do
end subroutine ill
"""


def _variant_port(tmp_path: Path, text: str):
    """A 'port' that is the reference driver of another source of the same routine."""
    def make(ref: Path) -> Path:
        from port_fortran.harness.core import Harness
        sub = tmp_path / "variant"
        sub.mkdir(exist_ok=True)
        k, sf = _kernel(sub, text, "ill")
        return Harness(k, sf, sub / "port").build_reference()
    return make


@needs_gfortran
@pytest.mark.integration
def test_rounding_the_original_is_sensitive_to_is_within_its_own_noise(tmp_path):
    """y = sin(1e6 x) moves by ~1e-10 when x moves by 2 ulp: a port rounding 1e6 x another
    way ((1e3 x) 1e3) is as right as the original there; z = 2x is well conditioned, and the
    same port off by 5e-11 in z fails."""
    reordered = ILL.replace("sin(1.0d6 * x(i))", "sin((1.0d3 * x(i)) * 1.0d3)")
    h = _harness(tmp_path, ILL, "ill", port_exe=_variant_port(tmp_path, reordered))
    v = h.verify("serial", seeds=[6])
    assert v.passed, v.reason
    assert any("own sensitivity" in o.message for c in v.cases for o in c.outputs if o.name == "y")
    wrong = reordered.replace("2.0d0 * x(i)", "2.0d0 * x(i) + 5.0d-11 * x(i)")
    h2 = _harness(tmp_path / "w", ILL, "ill", port_exe=_variant_port(tmp_path / "w", wrong)) \
        if (tmp_path / "w").mkdir() is None else None
    v2 = h2.verify("serial", seeds=[6])
    assert not v2.passed and "z" in v2.reason


def test_the_noise_floor_is_capped():
    ref = Record("y", 8, (1,), np.array([1.0, 1.0, 1.0], order="F"))
    port = Record("y", 8, (1,), np.array([1.0 + 1e-9, 1.0 + 1e-3, 1.0 + 1e-9], order="F"))
    noise = np.array([1e-10, 1.0, 0.0])
    tol = Tolerance(rel=1e-12)
    c = compare(ref, port, tol, noise=noise)
    # element 1: within 16 x its movement; element 2: beyond the cap; element 3: no movement
    assert not c.passed and c.message.startswith("2 of 3 elements outside tolerance")
    assert "1 element(s) within 16x the original's own sensitivity" in c.message


CPOW = """\
subroutine cpow(nx, w, s)
  implicit none
  integer, intent(in) :: nx
  integer :: nel, ndim
  common /dimn/ nel, ndim
  real(8), intent(inout) :: w(nx, nel)
  real(8), intent(inout) :: s(nx**ndim)
  integer :: i, ie
  do ie = 1, nel
    do i = 1, nx
      w(i, ie) = 2.0d0 * w(i, ie) + s(i)
    end do
  end do
end subroutine cpow
"""


@needs_gfortran
@pytest.mark.integration
def test_common_members_in_bounds_are_inputs_and_huge_draws_are_not_allocated(tmp_path):
    """A COMMON member read only in a declaration's bound (Nekbone's ``ndim`` in
    ``s(nl**ndim, ...)``) is an input the harness sets; a draw whose arrays would take
    more than a case may (inputs.MAX_CASE_BYTES) is refused before anything is allocated
    and drawn again; sizes no draw fits are left out of the proof with a note."""
    import yaml

    from port_fortran.harness.inputs import InputsTooLarge, make_inputs

    h = _harness(tmp_path, CPOW, "cpow")
    assert "ndim" in h.spec.args  # without it the spec's bound 'nx ** ndim' names an unknown
    data = yaml.safe_load(h.spec_path.read_text())
    data["args"]["ndim"]["range"] = [40, 50]  # 7**40 elements and up: only nx = 1 fits
    data["sizes"]["correctness"] = [{"nx": 1}, {"nx": 7}]
    data["sizes"]["cross_tiles"] = False
    h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
    h.reload_spec()
    with pytest.raises(InputsTooLarge, match=r"the arrays would take .* \(most of it s, shape"):
        make_inputs(h.kernel, h.spec, Case(seed=5, sizes={"nx": 7}, choices={}))
    v = h.verify("serial", seeds=[5])
    assert v.passed, v.reason
    assert v.cases and all(c.sizes["nx"] == 1 for c in v.cases)
    assert any("its inputs are too large" in n for n in v.notes)


SHIFTED = """\
subroutine shifted(n, k, a, b)
  implicit none
  integer, intent(in) :: n, k
  real(8), intent(in) :: a(n)
  real(8), intent(out) :: b(n)
  integer :: i, m
  m = mod(k, 4) + 1  ! past the end: no constraint on k can see it
  do i = 1, n
    b(i) = a(i + m)
  end do
end subroutine shifted
"""


@needs_gfortran
@pytest.mark.integration
def test_an_original_reading_outside_its_arrays_proves_nothing(tmp_path):
    """TeaLeaf's tea_block_solve reads cp(j, y_min - 2) when y_min is not 1 mod 4: on such
    inputs its outputs are garbage the port cannot be held to. A case whose outputs differ
    gets a second opinion from the original built with -fcheck=bounds; when it reads
    outside its arrays the case is the original's (original-out-of-bounds), not a wrong
    result of the port. Here the 'port' clamps the subscript, so it differs exactly there."""
    def variant(ref: Path) -> Path:
        from port_fortran.harness.core import Harness
        sub = tmp_path / "variant"
        sub.mkdir(exist_ok=True)
        k, sf = _kernel(sub, SHIFTED.replace("a(i + m)", "a(min(i + m, n))"), "shifted")
        return Harness(k, sf, sub / "port").build_reference()

    h = _harness(tmp_path, SHIFTED, "shifted", port_exe=variant)
    v = h.verify("serial", seeds=[2])
    assert not v.passed and v.code == "original-out-of-bounds", v.reason
    assert "array 'a'" in v.reason and "the port is not at fault" in v.reason


UNSET = """\
subroutine unset(n, k, x, y)
  implicit none
  integer, intent(in) :: n, k
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y(n)
  real(8) :: t
  integer :: i
  if (x(1) > 1000d0 .and. k > 0) t = 1.0d0  ! a value no draw reaches: t stays unset
  do i = 1, n
    y(i) = x(i) + t
  end do
end subroutine unset
"""


@needs_gfortran
@pytest.mark.integration
def test_an_original_reading_a_variable_it_never_set_proves_nothing(tmp_path):
    """TeaLeaf's ppcg_inner_norxy hands its never-set RX, RY to tea_block_solve: the
    outputs are whatever the stack held, and a port agreeing or not proves nothing. The
    checking build sets uninitialised locals to signalling NaNs: outputs that change with
    it mark the case original-uninitialised (here even though the 'port' agrees)."""
    h = _harness(tmp_path, UNSET, "unset")
    v = h.verify("serial", seeds=[3])
    assert not v.passed and v.code == "original-uninitialised", v.reason
    assert "outputs y change" in v.reason


def test_every_bounds_message_of_the_checking_build_is_read():
    """libgfortran words a bounds violation several ways; an array section outside its
    dimension (BookLeaf's elarray(1:NCORN, iel) with iel = -1) reads 'outside of expected
    range', which the second opinion once missed, so the port's stray write was blamed."""
    from port_fortran.harness.checked import _out_of_bounds

    none = lambda: set()  # noqa: E731
    for msg in ("Index '-1' of dimension 2 of array 'elarray1' outside of expected range (1:37)",
                "Index '0' of dimension 1 of array 'a' below lower bound of 1",
                "Index '9' of dimension 1 of array 'a' above upper bound of 8",
                "Array bound mismatch for dimension 1 of array 'w' (4/3)",
                "Array reference out of bounds for array 'x', upper bound of dimension 1 exceeded (5 > 4)"):
        assert _out_of_bounds(f"At line 77 of file k.f90\nFortran runtime error: {msg}\n\nError termination.", none) == msg
    assert _out_of_bounds("Fortran runtime error: End of file", none) == ""
    # the F77 idiom a(1) standing for a longer array, in any wording
    one = lambda: {"a"}  # noqa: E731
    assert _out_of_bounds("Fortran runtime error: Index '3' of dimension 1 of array 'a' above upper bound of 1", one) == ""
    assert _out_of_bounds("Fortran runtime error: Index '3' of dimension 1 of array 'a' outside of expected range (1:1)",
                          one) == ""


@needs_gfortran
def test_the_bounds_message_of_an_array_section_is_read_from_gfortran(tmp_path):
    """The same, with gfortran itself as the oracle of the wording."""
    import subprocess

    from port_fortran.harness.checked import _out_of_bounds

    src = tmp_path / "sec.f90"
    src.write_text("program p\n  real(8) :: e(4, 3)\n  integer :: iel\n  iel = -1\n  if (command_argument_count() > 5) "
                   "iel = 2\n  e(1:4, iel) = 1.0d0\n  print *, e(1, 1)\nend program p\n")
    exe = tmp_path / "sec"
    subprocess.run(["gfortran", "-fcheck=bounds", str(src), "-o", str(exe)], check=True)
    res = subprocess.run([str(exe)], capture_output=True, text=True)
    assert res.returncode != 0
    assert "array 'e'" in _out_of_bounds(res.stderr + res.stdout, lambda: set())


OVERRUN = """\
subroutine overrun(n, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  real(8), intent(inout) :: y(n)
  call fill(n + 1, x)
  y(1) = y(1) + x(1)
end subroutine overrun

subroutine fill(m, z)
  implicit none
  integer, intent(in) :: m
  real(8), intent(inout) :: z(m)
  z = 2.0d0 * z
end subroutine fill
"""


@needs_gfortran
@pytest.mark.integration
def test_an_original_writing_past_an_argument_is_caught_by_the_guards(tmp_path):
    """Nekbone's ax_e (cube-shaped scratch in local_grad3_t) writes past W when NX1, NY1,
    NZ1 differ: through sequence association, which -fcheck=bounds cannot see, into
    whatever the driver allocated next -- the 'port' then differed at random. The Fortran
    driver puts every array between guard bytes, as the C++ driver does: the overrun is
    named and the inputs are the original's failure, never a wrong port."""
    h = _harness(tmp_path, OVERRUN, "overrun")
    v = h.verify("serial", seeds=[5])
    assert not v.passed and v.code == "original-failed", v.reason
    assert "wrote outside argument x (past its end)" in v.reason and "the port is not at fault" in v.reason


SPIN = """\
subroutine spin(n, x)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer :: i
  i = 0
  do while (n >= 0)
    i = mod(i + 1, 7)
    x(1) = x(1) + 0.0d0 * i
  end do
end subroutine spin
"""


@needs_gfortran
@pytest.mark.integration
def test_an_original_that_never_returns_is_refused_not_failed(tmp_path):
    """FFTPACK's rfftb1 loops for billions of iterations over a factor count read from a
    drawn work array: the original hits the run's time limit, which is its failure on those
    inputs (original-limit), not the port's; the other cases are not waited out."""
    from port_fortran.build_runner.sandbox import Limits

    h = _harness(tmp_path, SPIN, "spin")
    h.limits = Limits(wall_s=2.0, cpu_s=None, mem_mb=4096)
    v = h.verify("serial", seeds=[1])
    assert not v.passed and v.code == "original-limit", v.reason
    assert "wall-time" in v.reason and "the port is not at fault" in v.reason
    assert len(v.cases) == 1 and any("more case(s) not run" in n for n in v.notes)  # not minutes per case


CYCLES = """\
subroutine cycles(v, q, n)
  ! v' = v(q) in place, following the cycles of the permutation q
  ! (a visited entry is marked negative, the marks are undone at the end)
  integer n, q(n), k, j, first, here, there
  double precision v(n), keep
  do 20 k = 1, n
    if (q(k) .le. 0) goto 20
    keep = v(k)
    first = k
    here = k
    do 10 j = k, n
      there = q(here)
      if (there .lt. 0) then
        print *, 'cycles: not a permutation at', here
        stop 3
      endif
      q(here) = -q(here)
      if (there .eq. first) then
        v(here) = keep
        goto 20
      endif
      v(here) = v(there)
      here = there
10  continue
20 continue
  do 30 k = 1, n
    q(k) = -q(k)
30 continue
end
"""


def test_index_arrays_are_drawn_without_repeats_when_the_original_rejects_repeats(tmp_path):
    """An in-place permutation that follows cycles (Nekbone's swap_ip) stops on a repeated
    index: random subscripts failed it on every size but 1, where it changes nothing, and
    the routine was refused original-no-effect. Redrawn with index arrays that repeat no
    value (a permutation of the range), the original runs and the proof has cases."""
    from port_fortran.harness import redraw
    from port_fortran.harness.spec import dump, load_spec_yaml, parse

    k, sf = _kernel(tmp_path, CYCLES, "cycles")
    spec = infer(k)
    assert spec.args["q"].role == "index" and not spec.args["q"].distinct
    what = [w for w, _ in redraw.attempts(k, spec)]
    assert what[:2] == ["a new draw", redraw.DISTINCT]
    d = dict(redraw.attempts(k, spec))[redraw.DISTINCT]
    assert d.args["q"].distinct and not spec.args["q"].distinct  # a copy
    from port_fortran.harness.inputs import make_inputs
    for n in (7, 33):
        recs, _ = make_inputs(k, d, Case(seed=5, sizes={"n": n}, choices={}))
        q = next(r for r in recs if r.name == "q").data
        assert sorted(q.tolist()) == list(range(1, n + 1))  # a permutation
    assert redraw.distinct(d) is None  # nothing left to change
    # the key round-trips through the spec file a user edits
    text = dump(d, k)
    assert "distinct: true" in text and "distinct" not in dump(spec, k).split("args:")[1]
    assert parse(load_spec_yaml(text), k, "cycles.spec.yaml").args["q"].distinct


@needs_gfortran
@pytest.mark.integration
def test_an_in_place_permutation_is_verified_on_distinct_indices(tmp_path):
    h = _harness(tmp_path, CYCLES, "cycles")
    v = h.verify("serial", seeds=[2])
    assert v.passed, v.reason
    big = [c for c in v.cases if c.sizes.get("n", 0) > 1]
    assert big and all("index arrays without repeated values" in c.label for c in big)
    assert all(c.changed > 0 for c in big)  # it did permute


TIMED = """\
subroutine timed(n, x, s, t)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: s, t
  integer :: i
  real(8) :: t0, t1
  call cpu_time(t0)
  s = 0.0d0
  do i = 1, n
    s = s + x(i)
  end do
  call cpu_time(t1)
  t = t1 - t0
end subroutine timed
"""


@needs_gfortran
@pytest.mark.integration
def test_a_time_the_original_measures_is_no_uninitialised_read(tmp_path):
    """CCS-QCD's solver returns the time it took (``etime``): the port's value passed within
    the noise of the original's own runs, but the slower checking build measured another
    time, and the case was refused original-uninitialised. An output that changes when the
    original's clocks run faster is a time: not compared, and said so; another output that
    differs in the checking build is still the original's uninitialised read."""
    from port_fortran.harness.cases import CLOCKED
    from port_fortran.records import CaseResult, OutputCheck

    h = _harness(tmp_path, TIMED, "timed")
    names = ["n", "x", "s", "t"]
    recs, _ = h_inputs(h)
    fin = tmp_path / "in.bin"
    from port_fortran.harness.inputs import write_records
    write_records(fin, recs)
    ref = h._builds["serial"].artifacts["ref_driver"]
    res, ref_out, _ = h._run_original(ref, fin, names, tmp_path)
    assert res.ok
    slower = [Record(r.name, r.code, r.lbound, r.data + (5.0 if r.name == "t" else 0.0)) for r in ref_out]

    def case():
        return CaseResult(seed=1, sizes={}, passed=True, outputs=[OutputCheck(r.name, True, 1) for r in ref_out])

    h._checked_original = lambda *a, **k: ("", slower)  # the checking build measured another time
    cr = h._second_opinion(case(), fin, tmp_path, None, names, ref_out, 1.0,
                           by_clocks=lambda: h._changed_by_clocks({}, ref, fin, names, ref_out, tmp_path, None))
    assert cr.passed and not cr.code, cr.error
    assert next(o for o in cr.outputs if o.name == "t").message.startswith(CLOCKED)
    # without asking the clocks (before): the time was taken for an uninitialised read
    cr = h._second_opinion(case(), fin, tmp_path, None, names, ref_out, 1.0)
    assert not cr.passed and cr.code == "original-uninitialised" and "outputs t " in cr.error
    # an output no clock moves that differs in the checking build stays the original's fault
    h._checked_original = lambda *a, **k: ("", [Record(r.name, r.code, r.lbound, r.data + 5.0) if r.name == "s"
                                                 else r for r in ref_out])
    cr = h._second_opinion(case(), fin, tmp_path, None, names, ref_out, 1.0,
                           by_clocks=lambda: h._changed_by_clocks({}, ref, fin, names, ref_out, tmp_path, None))
    assert not cr.passed and cr.code == "original-uninitialised" and "outputs s " in cr.error


def h_inputs(h):
    from port_fortran.harness.inputs import make_inputs
    return make_inputs(h.kernel, h.spec, Case(seed=3, sizes={"n": 200000}, choices={}))
