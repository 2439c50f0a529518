"""Spec inference, spec files (edited / invalid), input generation, the record format and
the comparison rules. No compiler needed: IR from the front end or built by hand."""
from __future__ import annotations

from pathlib import Path

import json

import numpy as np
import pytest
import yaml

from port_fortran.errors import UserError
from port_fortran.fortran import ir, parse_file
from port_fortran.harness import ir_facts
from port_fortran.harness.compare import compare
from port_fortran.harness.inputs import (INT_POISON, Case, Record, cases, layout, make_inputs, read_records,
                                         write_records)
from port_fortran.harness.infer import infer, load_or_infer
from port_fortran.harness.spec import TIMING_BYTES, Tolerance, eval_expr
from test_harness_kit import CSR_F, B, L, N, R, R8, arg, axpy_kernel, write_source

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def blas():
    k = {x.name: x for x in parse_file(str(ROOT / "fortran_kernels" / "blas1.f")).kernels}
    k.update({x.name: x for x in parse_file(str(ROOT / "fortran_kernels" / "blas2.f")).kernels})
    return k


@pytest.fixture(scope="module")
def csr(tmp_path_factory):
    src = write_source(tmp_path_factory.mktemp("csr"), "csr.f", CSR_F)
    return parse_file(str(src)).kernels[0]


def test_gemv_roles_flags_and_leading_dimension(blas):
    k = blas["dgemv"]
    s = infer(k)
    assert s.args["trans"].role == "flag" and s.args["trans"].values == ["N", "T"]  # 'N'/'n' merged, + other
    assert [n for n, a in s.args.items() if a.role == "size"] == ["m", "n"]
    assert s.args["lda"].role == "leading-dim" and s.args["lda"].rows == "m" and s.args["lda"].pad > 0
    assert s.args["a"].dims == ["1:lda", "1:auto"]
    assert {tuple(sorted(c)) for c in s.correctness} == {("m", "n")}
    assert {c["m"] for c in s.correctness} == {1, 7, 33}
    # 'N' and 'T' each get their own input sets
    cs = cases(s, 5)
    assert len(cs) == 6 and {c.choices["trans"] for c in cs} == {"N", "T"}
    lay = layout(k, s, {"m": 7, "n": 5}, {"trans": "T"})
    assert lay.scalars["lda"] == 7 + s.args["lda"].pad
    assert lay.arrays["a"].lbound == (1, 1) and lay.arrays["a"].ubound == (lay.scalars["lda"], 5)
    # x and y are indexed up to m or n depending on the flag: both covered
    assert lay.arrays["x"].ubound[0] >= 7 and lay.arrays["y"].ubound[0] >= 7


def test_strides_and_extents_of_strided_arrays(blas):
    k = blas["daxpy"]
    s = infer(k)
    # zero and negative strides too: the original accepts them (it starts from the far end)
    assert s.args["incx"].role == "stride" and s.args["incx"].values == [1, 2, -2, 0]
    assert s.args["n"].role == "size" and s.args["dx"].dims == ["1:auto"]
    lay = layout(k, s, {"n": 7}, {"incx": 2, "incy": 1})
    assert lay.arrays["dx"].ubound[0] >= 1 + 6 * 2  # ix = ix + incx, n times
    assert lay.arrays["dy"].ubound[0] >= 7
    assert {c.choices["incx"] for c in cases(s, 0)} == {1, 2, -2, 0}
    # a size reached only through a local (nincx = n*incx; do i = 1, nincx, incx)
    assert infer(blas["dscal"]).args["n"].role == "size"


def test_function_result_and_tolerances(blas):
    s = infer(blas["ddot"])
    assert s.tolerance["result"].rel == pytest.approx(1e-12) and s.tolerance["result"].reduction
    assert s.tolerance["dx"].rel == 0.0  # inputs are compared exactly
    recs, _ = make_inputs(blas["ddot"], s, cases(s, 3)[0])
    assert recs[-1].name == "result" and np.isnan(recs[-1].data)


def test_csr_pointer_and_index_arrays(csr):
    s = infer(csr)
    assert s.args["rowptr"].role == "pointer" and s.args["rowptr"].rows == "n"
    assert s.args["colind"].role == "index" and s.args["colind"].range == ["1", "n"]
    for c in cases(s, 11):
        recs, lay = make_inputs(csr, s, c)
        by = {r.name: r.data for r in recs}
        n = int(by["n"])
        p = by["rowptr"]
        assert p[0] == 1 and np.all(np.diff(p[: n + 1]) >= 0)
        nnz = int(p[n]) - 1
        assert by["val"].size >= nnz and by["colind"].size >= nnz
        if by["colind"].size:
            assert by["colind"].min() >= 1 and by["colind"].max() <= n
        assert by["x"].size >= n
        assert np.all(np.isnan(by["y"]))  # intent(out): poisoned


def test_halo_bounds_positive_values_and_flops(tmp_path):
    # subroutine smooth(n, u, v): v(i) = sqrt(u(i-1) + u(i+1)) with u(0:n+1)
    u_dims = [(L(0), B("+", N("n"), L(1)))]
    loop = ir.Do(var="i", start=L(1), end=N("n"), body=[ir.Assign(
        R("v", N("i")), ir.FuncCall("sqrt", [B("+", R("u", B("-", N("i"), L(1))), R("u", B("+", N("i"), L(1))), R8)],
                                    intrinsic=True, ftype=R8))])
    k = ir.Kernel("smooth", "subroutine", str(tmp_path / "s.f90"), 1, 9,
                  args=[arg("n", 0, used_as_size=True), arg("u", 1, R8, u_dims),
                        arg("v", 2, R8, [(None, N("n"))], intent="out")],
                  locals={"i": ir.Variable("i", ir.INTEGER)}, body=[loop])
    s = infer(k)
    assert s.args["u"].dims == ["0:n + 1"]
    assert s.args["u"].range[0] > 0  # sqrt of it: positive inputs
    recs, _ = make_inputs(k, s, Case(1, {"n": 7}, {}))
    assert recs[1].lbound == (0,) and recs[1].ubound == (8,)
    assert ir_facts.count_flops(axpy_kernel(tmp_path / "a.f90"), {"n": 100}) == 200


def test_timing_sizes_leave_the_caches(blas):
    s = infer(blas["daxpy"])
    lay = layout(blas["daxpy"], s, s.timing)
    total = sum(a.nbytes for a in lay.arrays.values())
    assert TIMING_BYTES / 2 <= total <= TIMING_BYTES * 1.1


HALO_F90 = """
subroutine smooth_halo(x_min, x_max, y_min, y_max, depth, xc, u, v, m, w)
  implicit none
  integer :: x_min, x_max, y_min, y_max, depth, m, j, k
  real(kind=8) :: xc(x_min-2:x_max+2)
  real(kind=8) :: u(x_min-depth:x_max+depth, y_min-depth:y_max+depth)
  real(kind=8) :: v(x_min-depth:x_max+depth, y_min-depth:y_max+depth)
  real(kind=8) :: w(2*m)
  do k = y_min - depth, y_max + depth
    do j = x_min - depth, x_max + depth
      v(j, k) = u(j, k) * xc(j)
    end do
  end do
end subroutine
"""


def test_timing_sizes_keep_a_ghost_cell_width_at_its_correctness_value(tmp_path):
    """A size that only widens dimensions other sizes span (a halo depth) is not scaled
    with the grid at the timing sizes: a real run keeps its halo a few cells deep, and
    code like this one (xc declared two cells past the grid, read over the halo) reads
    outside its arrays when the halo grows with the grid. A size in a product (m) or
    alone in a bound still scales; so does a width that sizes a dimension of its own
    (w(2*m, depth))."""
    from port_fortran.harness.infer import offset_names

    k = parse_file(str(write_source(tmp_path, "halo.f90", HALO_F90))).kernels[0]
    sizes = ["x_min", "x_max", "y_min", "y_max", "depth", "m"]
    assert offset_names(k, sizes) == {"depth"}
    s = infer(k)
    t = s.timing
    assert t["depth"] == min(c["depth"] for c in s.correctness) == 1
    assert t["x_min"] == t["y_min"] == 1 and t["x_max"] > 100 and t["m"] > 100
    lay = layout(k, s, t)
    assert TIMING_BYTES / 2 <= sum(a.nbytes for a in lay.arrays.values()) <= TIMING_BYTES * 1.1
    k2 = parse_file(str(write_source(tmp_path, "halo2.f90", HALO_F90.replace("w(2*m)", "w(2*m, depth)")))).kernels[0]
    assert offset_names(k2, sizes) == set()


def test_an_argument_named_off_survives_an_edited_spec_file(tmp_path):
    """YAML 1.1 reads the keys on/off/yes/no as booleans: a dummy named ``off`` made an
    edited spec unreadable (a bool key beside the string ones)."""
    k = parse_file(str(ROOT / "tests" / "data" / "timing" / "packh.f90")).kernels[0]
    path = tmp_path / "packh.spec.yaml"
    load_or_infer(k, path)
    path.write_text(path.read_text().replace("off: {role: scalar, intent: in, range: [1, 5]}",
                                             "off: {role: scalar, intent: in, range: [2, 3]}"))
    s = load_or_infer(k, path)
    assert s.edited and s.args["off"].range == [2, 3]


def test_timing_sizes_do_not_swallow_a_bug_in_the_layout(blas, monkeypatch):
    """Only a spec expression without a value at some scale means "too large"; any other
    error in the layout is a bug and reaches the caller (it used to become a silent
    smallest size, timing a kernel at n = 1)."""
    from port_fortran.harness import infer as inference

    s = infer(blas["daxpy"])

    def broken(*a, **kw):
        raise TypeError("a bug in layout")

    monkeypatch.setattr(inference, "layout", broken)
    with pytest.raises(TypeError, match="a bug in layout"):
        inference.timing_sizes(blas["daxpy"], s)


def test_spec_file_round_trip_edit_and_errors(tmp_path, blas):
    k = blas["daxpy"]
    p = tmp_path / "daxpy.spec.yaml"
    s = load_or_infer(k, p)
    text = p.read_text()
    assert text.startswith("# port-fortran harness spec") and not s.edited
    assert not load_or_infer(k, p).edited  # unchanged file: still the inferred one
    data = yaml.safe_load(text)
    data["sizes"]["correctness"] = [{"n": 5}]
    data["args"]["incx"]["values"] = [3]
    p.write_text(yaml.safe_dump(data))
    s2 = load_or_infer(k, p)
    assert s2.edited and s2.correctness == [{"n": 5}] and s2.args["incx"].values == [3]
    assert yaml.safe_load(p.read_text())["args"]["incx"]["values"] == [3]  # the user's file is kept
    data["args"]["incx"]["values"] = [0]  # a zero stride is legal Fortran: accepted
    p.write_text(yaml.safe_dump(data))
    assert load_or_infer(k, p).args["incx"].values == [0]
    data["args"]["incx"]["values"] = [0, 1.5]
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"daxpy.spec.yaml: args.incx.values: expected a non-empty list of integers"):
        load_or_infer(k, p)
    data["args"]["incx"]["values"] = [1]
    data["sizes"]["correctness"] = [{"m": 5}]
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"sizes.correctness\[0\].n: missing"):
        load_or_infer(k, p)
    data["sizes"]["correctness"] = [{"n": 5}]
    data["args"]["bogus"] = {"role": "size"}
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"args.bogus: daxpy has no argument"):
        load_or_infer(k, p)
    p.write_text("args: [unclosed\n")
    with pytest.raises(UserError, match=r"daxpy.spec.yaml.*not valid YAML"):
        load_or_infer(k, p)


def test_spec_expressions():
    assert eval_expr("max(m, 1) + 3", {"m": 5}) == 8
    assert eval_expr("max(nel)", {"nel": 5}) == 5 and eval_expr("min(n, 2, m)", {"n": 4, "m": 3}) == 2  # one argument too
    assert eval_expr("(n - 1) // 2", {"n": 8}) == 3
    with pytest.raises(ValueError, match="unknown name"):
        eval_expr("q + 1", {"n": 1})
    with pytest.raises(ValueError):
        eval_expr("__import__('os')", {})
    with pytest.raises(ValueError, match="division by zero"):
        eval_expr("n % m", {"n": 3, "m": 0})  # was a ZeroDivisionError, which no caller expects


def test_record_file_round_trip(tmp_path):
    recs = [Record("n", 1, (), np.array(5, dtype="<i4")),
            Record("a", 4, (0, 1), np.asfortranarray(np.arange(12.0).reshape(3, 4))),
            Record("t", 8, (), np.array(b"T", dtype="S1")),
            Record("c", 6, (1,), np.array([1 + 2j, 3 - 1j]))]
    write_records(tmp_path / "r.bin", recs)
    back = read_records(tmp_path / "r.bin", ["n", "a", "t", "c"])
    for r, b in zip(recs, back):
        assert r.lbound == b.lbound and r.code == b.code and np.array_equal(r.data, b.data)
    assert back[1].ubound == (2, 4)
    (tmp_path / "short.bin").write_bytes((tmp_path / "r.bin").read_bytes()[:-4])
    with pytest.raises(ValueError, match="truncated"):
        read_records(tmp_path / "short.bin", ["n", "a", "t", "c"])


def test_zero_extent_records_of_every_type_and_a_corrupted_header(tmp_path):
    import struct
    empty = [Record("x", 4, (5,), np.zeros(0)), Record("z", 6, (1, 1), np.zeros((0, 3), dtype=complex)),
             Record("l", 7, (1,), np.zeros(0, dtype="<i4")), Record("s", 8, (1,), np.zeros(0, dtype="S4")),
             Record("t", 8, (), np.array(b"abcd", dtype="S4"))]
    write_records(tmp_path / "e.bin", empty)
    back = read_records(tmp_path / "e.bin", [r.name for r in empty])
    assert [b.data.shape for b in back] == [(0,), (0, 3), (0,), (0,), ()] and back[4].data == b"abcd"
    # a zero-extent header followed by one element: named, not "cannot reshape"
    bad = struct.pack("<q", 1) + struct.pack("<qq", 1, 0) + struct.pack("<qq", 4, 8) + struct.pack("<d", 1.0)
    (tmp_path / "bad.bin").write_bytes(bad)
    with pytest.raises(ValueError, match=r"record 'y': the header says 0 element\(s\) \(1:0\) of 8 byte\(s\) but 8"):
        read_records(tmp_path / "bad.bin", ["y"])


def test_compare_rules():
    tol = Tolerance(rel=1e-12)
    ref = Record("y", 4, (0,), np.array([1.0, np.nan, 3.0, 4.0]))
    same = Record("y", 4, (0,), np.array([1.0, np.nan, 3.0 * (1 + 1e-15), 4.0]))
    ok = compare(ref, same, tol)
    assert ok.passed and ok.elements == 4  # NaN in both: the original did not write it either
    unwritten = Record("y", 4, (0,), np.array([1.0, np.nan, np.nan, 4.0]))
    bad = compare(ref, unwritten, tol)
    assert not bad.passed and bad.worst_index == [2] and "never written" in bad.message
    off = Record("y", 4, (0,), np.array([1.0, np.nan, 3.0, 4.5]))
    bad = compare(ref, off, tol)
    assert not bad.passed and bad.worst_index == [3] and bad.max_abs_err == pytest.approx(0.5)
    # reductions: allowed error scales with the sum of magnitudes
    r = Record("s", 4, (), np.array(1e-6))
    p = Record("s", 4, (), np.array(1e-6 + 1e-12))
    assert not compare(r, p, Tolerance(1e-12)).passed
    assert compare(r, p, Tolerance(1e-12, reduction=True), scale=100.0).passed
    ir_ = Record("k", 1, (1,), np.array([1, 2, 3], dtype="<i4"))
    ip = Record("k", 1, (1,), np.array([1, INT_POISON, 3], dtype="<i4"))
    c = compare(ir_, ip, Tolerance(0.0))
    assert not c.passed and c.worst_index == [2] and "never written" in c.message


def test_drivers_and_timing_helpers(blas, tmp_path):
    from port_fortran.harness.drivers import cpp_prototype, fortran_driver
    from port_fortran.harness.timing import moved_bytes, parse_times

    ddot = blas["ddot"]
    f = fortran_driver(ddot)
    assert "real(8), external :: ddot" in f and "r_result = ddot(a_n, a_dx, a_incx, a_dy, a_incy)" in f
    assert cpp_prototype(ddot) == 'extern "C" double ddot_kokkos(int32_t*, double*, int32_t*, double*, int32_t*);'
    sparse = parse_file(str(ROOT / "fortran_kernels" / "sparse.f90")).kernels[0]
    assert "use csr_mod, only: csr_spmv" in fortran_driver(sparse)
    assert parse_times("x\nPF_TIME  1.5000000000000000E-03\nPF_TIME 2e-3\n") == [1.5e-3, 2e-3]
    k = axpy_kernel(tmp_path / "a.f90")
    s = infer(k)
    lay = layout(k, s, {"n": 1000})
    assert moved_bytes(k, s, lay) == 3 * 8000  # x and y read, w written


# --------------------------------------------------------------------------- Fortran flags

LEGACY = """\
      SUBROUTINE SCAL2(N, A, X)
      INTEGER N
      DOUBLE PRECISION A, X(N)
      DO 10 I = 1, N
         X(I) = A * X(I)
   10 CONTINUE
      END
      SUBROUTINE INIT1(N, X)
      DOUBLE PRECISION X(N)
      CALL CLEAR(X, N)
      END
      SUBROUTINE INIT2(N, K)
      INTEGER K(N)
      CALL CLEAR(K, N)
      END
      SUBROUTINE CLEAR(X, N)
      DOUBLE PRECISION X(N)
      DO 20 I = 1, N
         X(I) = 0
   20 CONTINUE
      END
"""


def test_user_fflags_are_used_and_recorded(tmp_path):
    from port_fortran.fortran import parse_file
    from port_fortran.harness import Harness

    src = tmp_path / "scal.f"
    src.write_text(LEGACY)
    sf = parse_file(src, use_cache=False)
    k = next(k for k in sf.kernels if k.name == "scal2")
    h = Harness(k, sf, tmp_path / "port", fflags=["-fno-range-check"], module_search=[str(tmp_path)])
    assert h._fflags(False, False)[-1] == "-fno-range-check"
    meta = json.loads((tmp_path / "port" / "port.json").read_text())
    assert meta["fflags"] == ["-fno-range-check"] and meta["fflags_added"] == {}
    assert meta["module_search"] == [str(tmp_path.resolve())]


@pytest.mark.integration
def test_legacy_argument_mismatch_is_compiled_with_the_flag_gfortran_needs(tmp_path):
    """gfortran >= 10 rejects CALL CLEAR(K) with an INTEGER array for CLEAR's DOUBLE
    PRECISION one: the reference is built again with -fallow-argument-mismatch, and
    port.json says so."""
    import shutil

    from port_fortran.fortran import parse_file
    from port_fortran.harness import Harness

    if shutil.which("gfortran") is None:
        pytest.skip("no gfortran")
    src = tmp_path / "scal.f"
    src.write_text(LEGACY)
    sf = parse_file(src, use_cache=False)
    k = next(k for k in sf.kernels if k.name == "scal2")
    h = Harness(k, sf, tmp_path / "port")
    exe = h.build_reference()
    assert exe.is_file()
    meta = json.loads((tmp_path / "port" / "port.json").read_text())
    assert list(meta["fflags_added"]) == ["-fallow-argument-mismatch"]
    assert "-fallow-argument-mismatch" in h._fflags(True, False)
    # a later harness on the same port directory starts with the flag it learnt
    h2 = Harness(k, sf, tmp_path / "port")
    assert "-fallow-argument-mismatch" in h2._fflags(False, False)


def test_an_internal_procedure_is_not_driven_from_outside_its_host(tmp_path):
    from port_fortran.fortran import parse_file
    from port_fortran.harness.drivers import unsupported_reason

    src = tmp_path / "p.f90"
    src.write_text("program p\n  real :: x(4)\n  call fill(x)\ncontains\n  subroutine fill(y)\n"
                   "    real, intent(out) :: y(4)\n    y = 1\n  end subroutine\nend program\n")
    (k,) = parse_file(src, use_cache=False).kernels
    assert k.host == "p" and "internal procedure of p" in unsupported_reason(k)


EXTRUDE = """\
      subroutine extrude(a, l1, f1, nx, ny, nz)
      integer l1, nx, ny, nz, i0, i1, j, k
      real*8 a(nx, ny, nz), f1
      i0 = 2
      i1 = nx - 1
      do k = i0, i1
      do j = i0, i1
         a(l1 + 1, j, k) = f1 * a(l1 + 1, j, k)
      enddo
      enddo
      end
"""


def test_a_loop_end_held_in_a_local_is_no_leading_dimension(tmp_path):
    """Nekbone's h1mg_extrude: the loop runs to a local (``i1 = nx - 1``): nx is not a
    leading dimension whose rows are 'i1' (a name the spec cannot evaluate), it is a size."""
    k = parse_file(str(write_source(tmp_path, "extrude.f", EXTRUDE))).kernels[0]
    s = infer(k)
    assert all(a.rows is None or "i1" not in a.rows for a in s.args.values())
    assert s.args["ny"].role == "size"
    make_inputs(k, s, cases(s, 3)[0])  # every bound evaluates


def test_a_whole_array_in_array_syntax_has_no_bound_from_subscripts(tmp_path):
    """SNAP's ``wmu = w*mu`` (allocatable module arrays): a whole array in an expression is
    as large as what it is conformable with, so no subscript bounds it (it was taken as
    never referenced, one element, while ec(:, l, id) = mu got many)."""
    from port_fortran.harness.extents import Ranges

    k = parse_file(str(write_source(tmp_path, "whole.f90", """\
subroutine whole(n, a, b, c)
  integer :: n, i
  real(8) :: a(n), b(n), c(n)
  b = 2.0d0 * a
  do i = 1, n
    c(i) = a(i)
  end do
end subroutine whole
"""))).kernels[0]
    r = Ranges(k, {"n": 5}, {})
    assert r.max_subscripts("a", 1) == [None] and r.max_subscripts("c", 1) == [5]
    assert r.min_subscripts("c", 1) == [1]


def test_an_index_read_through_abs_is_drawn_in_range():
    """``ireg = ABS(ielreg(iel))`` then ``w(ireg)``: ielreg is an index array (BookLeaf's
    region codes, refused original-out-of-bounds when drawn from [-5, 5])."""
    from port_fortran.fortran import parse_file

    sf = parse_file(Path(__file__).parent / "data" / "harness" / "absindex.f90", use_cache=False)
    (k,) = sf.kernels
    s = infer(k)
    assert s.args["ielreg"].role == "index" and s.args["ielreg"].range == ["1", "max(nel)"]
    for c in cases(s, 5):
        recs, _ = make_inputs(k, s, c)
        by = {r.name: r.data for r in recs}
        if by["ielreg"].size:
            assert by["ielreg"].min() >= 1 and by["ielreg"].max() <= by["w"].size


def test_an_index_wrapped_by_mod_is_drawn_in_range():
    """``ins = ielfc(is, iel)``, ``ins = MOD(ins, NFACE) + 1`` and ``MOD(ielfc(is, iel) + is,
    NFACE) + 1`` subscript ``v``: ielfc holds face codes, drawn within v's first extent (from
    [-5, 5], a negative code made subscript 0: BookLeaf's hydro_kn_limiteviscosity and
    ale_kn_fluxndvl were refused original-out-of-bounds)."""
    from port_fortran.fortran import parse_file

    sf = parse_file(Path(__file__).parent / "data" / "harness" / "modindex.f90", use_cache=False)
    k, scaled, reused, chased, copied_count = sf.kernels
    assert ir_facts.index_arrays(k) == {"ielfc": [("v", 0, 0), ("v", 0, 0)]}
    s = infer(k)
    assert s.args["ielfc"].role == "index" and s.args["ielfc"].range == ["1", "nface"]
    seen = 0
    for c in cases(s, 5):
        recs, _ = make_inputs(k, s, c)
        by = {r.name: r.data for r in recs}
        if by["ielfc"].size:
            seen += 1
            assert by["ielfc"].min() >= 1 and by["ielfc"].max() <= 4
            for is_ in range(1, 5):  # every subscript the loop makes stays in 1..4
                col = by["ielfc"].reshape(4, -1, order="F")[is_ - 1]
                assert ((col % 4 + 1 >= 1) & ((col + is_) % 4 + 1 <= 4)).all()
    assert seen
    # a local set from an element times two is no index temp: icnt stays data
    assert ir_facts.index_arrays(scaled) == {}
    # a local reused for another index: each array is bounded by the uses its values reach
    # (flow-insensitive, ielfc would have been drawn within w's extent and ielel within v's)
    assert ir_facts.index_arrays(reused) == {"ielfc": [("v", 0, 0)], "ielel": [("w", 0, 0)]}
    # a copy holds what the copied local holds (next = nextp after nextp = ip(next): Nekbone's
    # in-place permutations, whose p was drawn from [-5, 5] and failed the original)
    assert ir_facts.index_arrays(chased) == {"ip": [("x", 0, 0), ("x", 0, 0)]}
    assert infer(chased).args["ip"].role == "index"
    # a copy of something else (a count) that may reach the use still marks nothing
    assert ir_facts.index_arrays(copied_count) == {}
    r = infer(reused)
    assert (r.args["ielfc"].range, r.args["ielel"].range) == (["1", "nface"], ["1", "nel"])


SOLVE = """\
subroutine relax_until(n, tol, damp, x, b, iters)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: tol, damp
  real(8), intent(inout) :: x(n)
  real(8), intent(in) :: b(n)
  integer, intent(out) :: iters
  integer :: i, it
  real(8) :: r2, rnorm, bnorm, off
  bnorm = 0.0d0
  do i = 1, n
    bnorm = bnorm + b(i) * b(i)
  end do
  bnorm = sqrt(bnorm) + 1.0d-30
  iters = 0
  do it = 1, 500
    r2 = 0.0d0
    do i = 1, n
      r2 = r2 + (b(i) - x(i))**2
    end do
    rnorm = sqrt(r2) / bnorm
    if (rnorm <= tol) exit
    off = x(1) - b(1)
    if (off > damp) iters = -1
    do i = 1, n
      x(i) = x(i) + 0.5d0 * (b(i) - x(i))
    end do
    iters = it
  end do
end subroutine relax_until
"""


def test_a_tolerance_compared_with_a_norm_is_drawn_positive(tmp_path):
    """CCS-QCD's BiCGStab stops when ``rnorm <= tol`` (rnorm = sqrt(...)/rsource): a tol
    drawn from [-1, 1] was negative on half the cases, the solver ran to its iteration limit
    and STOPped, each run 20 s on the benchmark's lattice. A real argument compared with a
    value that is never negative is drawn positive; one compared with a value of either
    sign (``off = x(1) - b(1)``) keeps the symmetric range."""
    k = parse_file(str(write_source(tmp_path, "relax_until.f90", SOLVE))).kernels[0]
    assert {"rnorm", "bnorm", "r2"} <= ir_facts.nonneg_locals(k) and "off" not in ir_facts.nonneg_locals(k)
    s = infer(k)
    assert s.args["tol"].range == [0.5, 1.5]
    assert s.args["damp"].range == [-1.0, 1.0]
