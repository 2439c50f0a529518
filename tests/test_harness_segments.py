"""START/COUNT segments (unstructured meshes): item ``i`` owns the entries
``first(i) .. first(i)+cnt(i)-1`` of other arrays, read through a stepped local
(``icp = first(i)`` ... ``icp = icp + 1``) or directly. Inference recognises the pair
(role ``segments`` on the start array, ``counts`` on the count array), the drawn inputs keep
every segment within the arrays it indexes, the spec file round-trips and is validated,
and the original and a translated port agree on such inputs (serial and OpenMP)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from port_fortran.errors import UserError
from port_fortran.fortran import parse_file
from port_fortran.harness import ir_facts
from port_fortran.harness.infer import infer
from port_fortran.harness.inputs import Case, cases, layout, make_inputs
from port_fortran.harness.spec import dump, parse

# a stepped local, as unstructured-mesh codes write it: segment sums per item
STEPPED = """\
subroutine seg_sum(ntot, nit, first, cnt, w, v, out)
  implicit none
  integer, intent(in) :: ntot, nit
  integer, intent(in) :: first(nit), cnt(nit)
  real(8), intent(in) :: w(ntot), v(2, ntot)
  real(8), intent(out) :: out(nit)
  integer :: it, ip, k
  real(8) :: acc
  do it = 1, nit
    acc = 0d0
    ip = first(it)
    do k = 1, cnt(it)
      acc = acc + w(ip) * v(2, ip)
      ip = ip + 1
    end do
    out(it) = acc
  end do
end subroutine seg_sum
"""

# the position written out, and a loop over the segment itself
DIRECT = """\
subroutine seg_scale(m, n, st, len, a, b)
  implicit none
  integer, intent(in) :: m, n
  integer, intent(in) :: st(n), len(n)
  real(8), intent(in) :: a(m)
  real(8), intent(inout) :: b(m)
  integer :: i, k
  do i = 1, n
    do k = 1, len(i)
      b(st(i) + k - 1) = 2d0 * a(st(i) + k - 1)
    end do
  end do
end subroutine seg_scale

subroutine seg_range(m, n, st, len, a, s)
  implicit none
  integer, intent(in) :: m, n
  integer, intent(in) :: st(n), len(n)
  real(8), intent(in) :: a(m)
  real(8), intent(out) :: s(n)
  integer :: i, k
  do i = 1, n
    s(i) = 0d0
    do k = st(i), st(i) + len(i) - 1
      s(i) = s(i) + a(k)
    end do
  end do
end subroutine seg_range
"""

# not segments: the step is conditional, and a CSR row pointer
NOT_SEGMENTS = """\
subroutine cond_step(ntot, nit, first, cnt, w, out)
  implicit none
  integer, intent(in) :: ntot, nit
  integer, intent(in) :: first(nit), cnt(nit)
  real(8), intent(in) :: w(ntot)
  real(8), intent(out) :: out(nit)
  integer :: it, ip, k
  do it = 1, nit
    out(it) = 0d0
    ip = first(it)
    do k = 1, cnt(it)
      out(it) = out(it) + w(ip)
      if (w(ip) > 0d0) ip = ip + 1
    end do
  end do
end subroutine cond_step

subroutine csr_sum(n, nnz, ptr, a, s)
  implicit none
  integer, intent(in) :: n, nnz
  integer, intent(in) :: ptr(n + 1)
  real(8), intent(in) :: a(nnz)
  real(8), intent(out) :: s(n)
  integer :: i, k
  do i = 1, n
    s(i) = 0d0
    do k = ptr(i), ptr(i + 1) - 1
      s(i) = s(i) + a(k)
    end do
  end do
end subroutine csr_sum
"""


def kernels(tmp_path: Path, text: str, name: str = "k.f90"):
    p = tmp_path / name
    p.write_text(text)
    return {k.name: k for k in parse_file(str(p), use_cache=False).kernels}


def test_start_count_pairs_are_recognised(tmp_path):
    k = kernels(tmp_path, STEPPED)["seg_sum"]
    info = ir_facts.segment_arrays(k)
    assert set(info) == {"first"}
    g = info["first"]
    assert (g.count, g.items, g.total) == ("cnt", "nit", "ntot")
    assert g.targets == {("w", 0), ("v", 1)}
    ks = kernels(tmp_path, DIRECT, "d.f90")
    for name, targets in (("seg_scale", {("a", 0), ("b", 0)}), ("seg_range", {("a", 0)})):
        g = ir_facts.segment_arrays(ks[name])["st"]
        assert (g.count, g.items, g.total, g.targets) == ("len", "n", "m", targets)
    no = kernels(tmp_path, NOT_SEGMENTS, "n.f90")
    assert ir_facts.segment_arrays(no["cond_step"]) == {}
    assert ir_facts.segment_arrays(no["csr_sum"]) == {}
    assert infer(no["csr_sum"]).args["ptr"].role == "pointer"


def test_inferred_spec_has_the_roles_and_the_room_follows_the_items(tmp_path):
    k = kernels(tmp_path, STEPPED)["seg_sum"]
    s = infer(k)
    st, cn = s.args["first"], s.args["cnt"]
    assert st.role == "segments" and (st.count, st.items, st.total, st.per_item) == ("cnt", "nit", "ntot", [0, 6])
    assert cn.role == "counts"
    for sizes in s.correctness + [s.timing]:  # every draw fits
        assert sizes["ntot"] >= 6 * sizes["nit"]
    text = dump(s, k)
    assert "segments     segment starts" in text and "counts       the segment lengths" in text
    back = parse(yaml.safe_load(text), k, "seg_sum.spec.yaml")
    assert back.args["first"] == st and back.args["cnt"] == cn


def _segments_of(recs, start: str, count: str):
    d = {r.name: r.data for r in recs}
    return d[start].astype(int), d[count].astype(int)


def test_drawn_segments_are_disjoint_and_within_the_arrays(tmp_path):
    k = kernels(tmp_path, STEPPED)["seg_sum"]
    s = infer(k)
    zeros = nonzero = unordered = 0
    for c in cases(s, 3) + cases(s, 99):
        recs, lay = make_inputs(k, s, c)
        first, cnt = _segments_of(recs, "first", "cnt")
        room = lay.scalars["ntot"]
        assert len(first) == len(cnt) == lay.scalars["nit"]
        assert cnt.min() >= 0 and cnt.max() <= 6 and cnt.sum() > 0
        taken = np.zeros(room + 1, dtype=int)
        for f, n in zip(first, cnt):
            if n:
                assert 1 <= f and f + n - 1 <= room  # within w(ntot) and v(2, ntot)
                taken[f:f + n] += 1
        assert taken.max() <= 1  # disjoint
        zeros += int((cnt == 0).sum())
        nonzero += int((cnt > 0).sum())
        used = [f for f, n in zip(first, cnt) if n]
        unordered += used != sorted(used)
    assert zeros and nonzero and unordered  # empty segments, real ones, not always in item order
    lay = layout(k, s, s.timing, rng=None)  # the largest choices (timing estimates) fit too
    first, cnt = lay.segment_values["first"], lay.segment_values["cnt"]
    assert (cnt == 6).all() and first[-1] + cnt[-1] - 1 <= lay.scalars["ntot"]


def test_an_edited_total_too_small_is_scaled_or_refused(tmp_path):
    k = kernels(tmp_path, STEPPED)["seg_sum"]
    s = infer(k)
    s.args["first"].total = "nit"  # room for one entry per item on average
    recs, _ = make_inputs(k, s, Case(seed=5, sizes={"ntot": 50, "nit": 9}, choices={}))
    first, cnt = _segments_of(recs, "first", "cnt")
    assert cnt.sum() <= 9 and all(f + n - 1 <= 9 for f, n in zip(first, cnt) if n)
    s.args["first"].per_item = [2, 6]
    with pytest.raises(ValueError, match=r"args.first: 9 segments of at least 2 entries .* do not fit total = nit"):
        make_inputs(k, s, Case(seed=5, sizes={"ntot": 50, "nit": 9}, choices={}))


def test_spec_errors_name_the_field(tmp_path):
    k = kernels(tmp_path, STEPPED)["seg_sum"]
    data = yaml.safe_load(dump(infer(k), k))
    bad = yaml.safe_load(yaml.safe_dump(data))
    bad["args"]["cnt"]["role"] = "array"
    bad["args"]["cnt"]["range"] = [0, 3]
    with pytest.raises(UserError, match=r"args.first.count: 'cnt' has role 'array'; give it role 'counts'"):
        parse(bad, k, "s.yaml")
    bad = yaml.safe_load(yaml.safe_dump(data))
    bad["args"]["first"] = {"role": "index", "range": ["1", "ntot"], "dims": ["1:nit"]}
    with pytest.raises(UserError, match=r"args.cnt.role: 'counts' needs a 'segments' array naming it"):
        parse(bad, k, "s.yaml")
    bad = yaml.safe_load(yaml.safe_dump(data))
    bad["args"]["first"]["count"] = "nope"
    with pytest.raises(UserError, match=r"args.first.count: expected the name of the argument"):
        parse(bad, k, "s.yaml")
    bad = yaml.safe_load(yaml.safe_dump(data))
    bad["args"]["first"]["per_item"] = [3, 1]
    with pytest.raises(UserError, match=r"args.first.per_item"):
        parse(bad, k, "s.yaml")


# ------------------------------------------------------------------ end to end


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran not installed")
def test_a_segment_kernel_verifies_on_serial_and_openmp(tmp_path):
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.harness import Harness
    from port_fortran.records import TranslationRefused
    from port_fortran.translate import translate_kernel, write_port
    if find_install("serial") is None:
        pytest.skip("no Kokkos install (set Kokkos_ROOT)")
    p = tmp_path / "seg.f90"
    p.write_text(STEPPED)
    sf = parse_file(str(p), use_cache=False)
    k = sf.kernels[0]
    try:
        port = translate_kernel(k, sf)
    except TranslationRefused as exc:
        pytest.skip(f"the translator refuses seg_sum: {exc}")
    write_port(port, tmp_path / "seg_sum")
    h = Harness(k, sf, tmp_path / "seg_sum", threads=2)
    assert h.spec.args["first"].role == "segments"
    for backend in ("serial", "openmp"):
        v = h.verify(backend)
        assert v.passed, v.reason  # the original stays within its arrays (it runs bounds-checked)
        outs = [o for c in v.cases for o in c.outputs if o.name == "out"]
        assert outs and all(o.passed for o in outs)
