"""Proofs whose loops really run (issue 12, "inputs the original accepts"; the DESIGN's
"verified").

A grid code sets its loop bounds from COMMON (``do k = 1, grid_points(3) - 2`` over COMMON
arrays of PARAMETER extents, ``do i = 1, nx - 2``). Drawn at random (integers in [-5, 5]
for an array, [1, 5] for a scalar member) the loops ran zero to three times: the port was
"verified" on a corner of its arrays and its timing measured nothing. The bounds now get
values cycled over the cases, the first (timed) one as large as the kernel's subscripts
allow. And a verdict whose original changed none of its outputs on any case proves
nothing: it gets its own code, ``original-no-effect``.

The harness runs with gfortran only: the "port" is the reference driver itself.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from port_fortran.fortran import parse_file
from port_fortran.harness.constraints import bound_sides, scalar_bounds
from port_fortran.harness.infer import infer
from port_fortran.harness.inputs import cases, make_inputs
from port_fortran.harness.members import driven_kernel
from port_fortran.records import BuildResult

needs_gfortran = pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran not installed")

HEADER = """\
      integer nmax
      parameter (nmax=12)
      integer gp(3), nz
      double precision q(0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      common /grid/ gp, nz
      common /fields/ q, r
"""

SWEEP = """\
      subroutine sweep
      include 'grid.h'
      integer i, j, k, isize
      isize = gp(1) - 1
      do k = 1, nz - 2
         do j = 1, gp(2) - 2
            do i = 0, isize
               r(i, j, k) = r(i, j, k) + 0.5d0 * q(i, j, k)
            enddo
         enddo
      enddo
      return
      end
"""

NOTHING = """\
subroutine nothing(n, x)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer :: i
  if (x(1) > 1d10) then
    do i = 1, n
      x(i) = 2d0 * x(i)
    end do
  end if
end subroutine nothing
"""


def _kernel(tmp_path: Path, files: dict, name: str):
    for fname, text in files.items():
        (tmp_path / fname).write_text(text)
    src = next(f for f in files if not f.endswith(".h"))
    sf = parse_file(str(tmp_path / src), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def test_elements_and_common_scalars_that_bound_loops_are_bounded_by_the_subscripts(tmp_path):
    k, _ = _kernel(tmp_path, {"grid.h": HEADER, "sweep.f": SWEEP}, "sweep")
    d = driven_kernel(k)
    sides = bound_sides(d)
    assert sides["gp(1)"] == {"upper"} and sides["gp(2)"] == {"upper"} and sides["nz"] == {"upper"}
    # i runs 0 .. gp(1) - 1 over q(0:11, ...): gp(1) <= 12; j and k run 1 .. x - 2: x <= 13
    assert scalar_bounds(d, "gp(1)", {})[1] == 12
    assert scalar_bounds(d, "gp(2)", {})[1] == 13
    assert scalar_bounds(d, "nz", {})[1] == 13


def test_the_first_case_runs_the_loops_over_the_whole_arrays(tmp_path):
    k, _ = _kernel(tmp_path, {"grid.h": HEADER, "sweep.f": SWEEP}, "sweep")
    d = driven_kernel(k)
    spec = infer(d)
    assert spec.args["gp"].elements == {"1": [12, 7, 1], "2": [13, 7, 1]}
    assert spec.args["nz"].values == [13, 7, 1] and spec.args["nz"].range is None
    got = cases(spec, 17)
    first = got[0]
    recs, _ = make_inputs(d, spec, first)
    by = {r.name: r for r in recs}
    assert list(by["gp"].data[:2]) == [12, 13] and int(by["nz"].data) == 13
    # every value of every bound is used in some case
    seen = {(n, v) for c in got for n, v in c.choices.items()}
    assert {("gp(1)", 1), ("gp(1)", 7), ("gp(2)", 7), ("nz", 1)} <= seen


def test_a_verdict_whose_original_changed_nothing_proves_nothing(tmp_path):
    from port_fortran.harness.core import ORIGINAL_NO_EFFECT, Harness
    if shutil.which("gfortran") is None:
        pytest.skip("gfortran not installed")
    k, sf = _kernel(tmp_path, {"nothing.f90": NOTHING}, "nothing")
    h = Harness(k, sf, tmp_path / "port")
    ref = h.build_reference()
    h._builds["serial"] = BuildResult("serial", True, artifacts={"ref_driver": str(ref), "pf_driver": str(ref)})
    v = h.verify("serial", seeds=[3])
    assert all(c.changed == 0 for c in v.cases)
    assert not v.passed and v.code == ORIGINAL_NO_EFFECT
    assert "changed none of its outputs" in v.reason and "nothing.spec.yaml" in v.reason


@needs_gfortran
@pytest.mark.integration
def test_a_case_counts_the_elements_the_original_changed(tmp_path):
    from port_fortran.harness.core import Harness
    k, sf = _kernel(tmp_path, {"grid.h": HEADER, "sweep.f": SWEEP}, "sweep")
    h = Harness(k, sf, tmp_path / "port")
    ref = h.build_reference()
    h._builds["serial"] = BuildResult("serial", True, artifacts={"ref_driver": str(ref), "pf_driver": str(ref)})
    v = h.verify("serial", seeds=[5])
    assert v.passed, v.reason
    # the timed values first: 11 x 12 x 12 elements of r change (i 0..11, j and k 1..11)
    assert v.cases[0].changed == 12 * 11 * 11
    assert np.all([c.changed >= 0 for c in v.cases])


HALO = """\
module faces
  integer, parameter :: LEFT = 1, RIGHT = 2, EXTERNAL_FACE = -1
contains
subroutine reflect(nx, mode, nbrs, mesh)
  implicit none
  integer, intent(in) :: nx, mode
  integer, intent(in) :: nbrs(2)
  real(8), intent(inout) :: mesh(0:nx+1)
  if (nbrs(LEFT) == EXTERNAL_FACE .and. mode >= 3) mesh(0) = mesh(1)
  if (nbrs(RIGHT) == EXTERNAL_FACE) mesh(nx+1) = mesh(nx)
end subroutine reflect
end module faces
"""


def test_integers_compared_with_constants_take_both_sides_of_the_branch(tmp_path):
    """TeaLeaf's halo routines reflect a face only where ``chunk_neighbours(CHUNK_LEFT) ==
    EXTERNAL_FACE``: drawn in [-5, 5] the element almost never matched, and the port was
    'verified' on inputs that skip all its work. The element and a scalar compared with a
    constant get values on both sides, the first taking the branch."""
    k, _ = _kernel(tmp_path, {"faces.f90": HALO}, "reflect")
    spec = infer(k)
    assert spec.args["nbrs"].elements == {"1": [-1, 0], "2": [-1, 0]}
    assert spec.args["mode"].values == [3, 2]
    recs, _ = make_inputs(k, spec, cases(spec, 3)[0])
    by = {r.name: r for r in recs}
    assert list(by["nbrs"].data) == [-1, -1] and int(by["mode"].data) == 3


CALLER = """\
subroutine halo(nx, nbrs, fields, codes, other, depth, a, b)
  use faces, only: reflect
  implicit none
  integer, intent(in) :: nx, depth
  integer, intent(in) :: nbrs(2), fields(3), codes(0:1), other(4)
  real(8), intent(inout) :: a(0:nx+1), b(0:nx+1)
  if (fields(1) == 1) call reflect(nx, depth, nbrs, a)
  if (fields(2) == 1) call reflect(nx, depth + 1, codes, b)
  call reflect(nx, 4, other(3:4), b)
end subroutine halo
"""


def test_comparisons_a_callee_makes_on_what_it_is_passed_take_both_sides(tmp_path):
    """TeaLeaf's update_halo_kernel only passes its neighbour codes on: the tests against
    EXTERNAL_FACE are in update_halo_cell, and its cases drew the codes in [-5, 5], reached
    no face and were refused ``original-no-effect``. A callee's comparison on a dummy whose
    actual is the caller's variable or whole array (same storage: ``codes(0:1)`` passed to
    ``nbrs(2)`` is codes(0), codes(1)) is the caller's; an expression (``depth + 1``, a
    literal) or a section passed leaves it out."""
    from port_fortran.fortran.effects import load_for_port
    from port_fortran.fortran.program_build import build_program

    (tmp_path / "faces.f90").write_text(HALO)
    (tmp_path / "halo.f90").write_text(CALLER)
    prog = build_program([tmp_path / "faces.f90", tmp_path / "halo.f90"])
    k, _ = load_for_port(prog, tmp_path / "halo.f90", "halo")
    spec = infer(k)
    assert spec.args["nbrs"].elements == {"1": [-1, 0], "2": [-1, 0]}
    assert spec.args["codes"].elements == {"0": [-1, 0], "1": [-1, 0]}
    assert spec.args["depth"].values == [3, 2]  # mode >= 3 in reflect, depth passed as it is
    assert spec.args["fields"].elements == {"1": [1, 2], "2": [1, 2]}
    assert spec.args["other"].elements is None  # a section: left out
    # without the program (one file, its callee unknown) nothing is found in the callee
    assert infer(_kernel(tmp_path, {"halo.f90": CALLER}, "halo")[0]).args["nbrs"].elements is None
