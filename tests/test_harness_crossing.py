"""The boundary-crossing correctness case, the spec key that turns it off, comparison of
large outputs (chunks, samples) and the report's rule that only proven timings are shown.
No compiler runs: the IR comes from the front end, the numbers from numpy."""
from __future__ import annotations

import json
import sqlite3
import textwrap

import numpy as np
import pytest
import yaml

from port_fortran.errors import UserError
from port_fortran.fortran import parse_file
from port_fortran.harness import compare as C
from port_fortran.harness.crossing import CROSS_BYTES, CROSS_FLOPS, _Model, cross_case, parallel_body, parallel_dims
from port_fortran.harness.inputs import Record, read_records, write_records
from port_fortran.harness import inputs as I
from port_fortran.harness.infer import infer, load_or_infer
from port_fortran.harness.spec import Tolerance, dump
from port_fortran.records import Verdict
from port_fortran.translate.blocks import GPU_BLOCK, blocks_at

SRC = """
subroutine scale1(n, a, x, y)
  integer, intent(in) :: n
  double precision, intent(in) :: a, x(n)
  double precision, intent(out) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = a * x(i)
  end do
end subroutine

subroutine sweep2(m, n, u, v)
  integer, intent(in) :: m, n
  double precision, intent(in) :: u(m, n)
  double precision, intent(out) :: v(m, n)
  integer :: i, j
  do j = 1, n
    do i = 1, m
      v(i, j) = 2.0d0 * u(i, j)
    end do
  end do
end subroutine

subroutine sq2(n, u, v)
  integer, intent(in) :: n
  double precision, intent(in) :: u(n, n)
  double precision, intent(out) :: v(n, n)
  integer :: i, j
  do j = 2, n - 1
    do i = 2, n - 1
      v(i, j) = u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1)
    end do
  end do
end subroutine

subroutine box3(nx, ny, nz, u, v)
  integer, intent(in) :: nx, ny, nz
  double precision, intent(in) :: u(nx, ny, nz)
  double precision, intent(out) :: v(nx, ny, nz)
  integer :: i, j, k
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        v(i, j, k) = u(i, j, k) + 1.0d0
      end do
    end do
  end do
end subroutine

subroutine rowdot(m, n, a, x, y)
  integer, intent(in) :: m, n
  double precision, intent(in) :: a(n, m), x(n)
  double precision, intent(out) :: y(m)
  integer :: i, j
  double precision :: s
  do i = 1, m
    s = 0.0d0
    do j = 1, n
      s = s + a(j, i) * x(j)
    end do
    y(i) = s
  end do
end subroutine

subroutine cube(n, a, b, c)
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n), b(n, n)
  double precision, intent(inout) :: c(n, n)
  integer :: i, j, l
  do j = 1, n
    do i = 1, n
      do l = 1, n
        c(i, j) = c(i, j) + a(i, l) * b(l, j)
      end do
    end do
  end do
end subroutine

subroutine prefix(n, x)
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: i
  do i = 2, n
    x(i) = x(i) + x(i - 1)
  end do
end subroutine
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    p = tmp_path_factory.mktemp("src") / "k.f90"
    p.write_text(textwrap.dedent(SRC))
    sf = parse_file(str(p))
    assert not sf.errors, sf.errors
    return sf, {k.name: k for k in sf.kernels}


def _case(kernels, name):
    sf, ks = kernels
    k = ks[name]
    spec = infer(k)
    return k, spec, cross_case(k, spec, sf)


def _trips(k, spec, cc):
    m = _Model(k, spec, parallel_body(k)[0])
    return {(d.do.var, d.position, d.kind): t for d, t in cc.dims}, m


def test_blocks_every_position_knows_the_gpu_block_and_the_tiles():
    assert GPU_BLOCK in blocks_at(1, 0) and GPU_BLOCK in blocks_at(2, 0)
    assert max(blocks_at(2, 1)) == 16 and max(blocks_at(3, 1)) == 8 and max(blocks_at(3, 2)) == 2


def test_one_dimensional_loop_runs_past_a_gpu_block(kernels):
    k, spec, cc = _case(kernels, "scale1")
    assert cc.sizes == {"n": GPU_BLOCK + 3}
    assert [t for _, t in cc.dims] == [1027] and not cc.notes
    # the old largest case, and every threshold between it and the new one, is passed
    assert max(c["n"] for c in spec.correctness) < 40 < 100 < 1000 < cc.sizes["n"]


def test_two_dimensional_band_crosses_each_position_with_its_own_block(kernels):
    k, spec, cc = _case(kernels, "sweep2")
    trips, _ = _trips(k, spec, cc)
    # i is the contiguous index: position 0 (GPU block 1024), j position 1 (tiles up to 16)
    assert trips[("i", 0, "tile")] == 1027 and trips[("j", 1, "tile")] >= 2 * 16 + 3
    assert cc.sizes["m"] == 1027 and cc.sizes["n"] < 100  # j is not made larger than needed
    for d, t in cc.dims:
        assert all(t % b for b in d.blocks), (d.where(), t, d.blocks)


def test_one_size_for_both_dimensions_takes_the_larger_want(kernels, monkeypatch):
    k, spec, cc = _case(kernels, "sq2")
    trips, m = _trips(k, spec, cc)
    assert trips[("i", 0, "tile")] == trips[("j", 1, "tile")] == 1027 and cc.sizes == {"n": 1029}
    assert not cc.notes and m.cost(cc.sizes).nbytes <= CROSS_BYTES
    # with less memory allowed, the wanted counts step down and the verdict will say so
    import port_fortran.harness.crossing as X
    monkeypatch.setattr(X, "CROSS_BYTES", 4 * 2**20)
    small = cross_case(k, spec)
    assert m.cost(small.sizes).nbytes <= 4 * 2**20 and small.sizes["n"] > 259
    assert any("fewer than the 1027 wanted (past a GPU block of 1024)" in n for n in small.notes)


def test_three_dimensional_band(kernels):
    k, spec, cc = _case(kernels, "box3")
    trips, m = _trips(k, spec, cc)
    assert trips[("i", 0, "tile")] > GPU_BLOCK
    assert trips[("j", 1, "tile")] >= 2 * 8 + 3 and trips[("k", 2, "tile")] >= 2 * 2 + 3
    # no size raised without need (a tile of 1 leaves no remainder to step past)
    base = max(spec.correctness, key=lambda c: sum(c.values()))
    assert cc.sizes["ny"] == base["ny"] and cc.sizes["nz"] == base["nz"]
    assert m.cost(cc.sizes).nbytes <= CROSS_BYTES


def test_inner_reduction_runs_past_a_team(kernels):
    k, spec, cc = _case(kernels, "rowdot")
    trips, m = _trips(k, spec, cc)
    assert trips[("j", 0, "team")] > GPU_BLOCK and trips[("i", 0, "range")] > GPU_BLOCK
    assert m.cost(cc.sizes).nbytes <= CROSS_BYTES


def test_cubic_work_is_capped(kernels):
    k, spec, cc = _case(kernels, "cube")
    _, m = _trips(k, spec, cc)
    c = m.cost(cc.sizes)
    assert c.flops <= CROSS_FLOPS and c.nbytes <= CROSS_BYTES and c.iterations <= 1e8
    assert cc.sizes["n"] > max(c["n"] for c in spec.correctness)
    assert cc.notes  # the shortfall is named


def test_a_size_that_only_widens_a_loop_past_the_arrays_is_not_raised(tmp_path):
    """A halo sweep: raising ``depth`` alone would be the smallest raise, but the arrays
    are declared with ``halo``: the original itself would index past them."""
    p = tmp_path / "h.f90"
    p.write_text(textwrap.dedent("""
        subroutine halo(x_min, x_max, halo_depth, depth, r, z)
          integer :: x_min, x_max, halo_depth, depth, j
          double precision, dimension(x_min - halo_depth:x_max + halo_depth) :: r, z
          do j = x_min - depth, x_max + depth
            z(j) = 2.0d0 * r(j)
          end do
        end subroutine
        """))
    sf = parse_file(str(p))
    k = sf.kernels[0]
    spec = infer(k)
    spec.correctness = [{"x_min": 1, "x_max": 9, "halo_depth": 2, "depth": 2}]
    cc = cross_case(k, spec, sf)
    assert cc.sizes["depth"] == 2 and cc.sizes["halo_depth"] == 2 and cc.sizes["x_max"] > 1000
    assert [t for _, t in cc.dims] == [1027]


def test_kernel_launches_inside_serial_loops_are_capped(tmp_path):
    """A parallel loop inside two serial ones is launched about n*n times: n stays small."""
    p = tmp_path / "l.f90"
    p.write_text(textwrap.dedent("""
        subroutine tri(n, m, x, c)
          integer :: n, m, i, j, k
          double precision :: x(0:n), c(0:n, 0:m), s
          do k = 0, m
            do j = 0, n
              c(j, k) = 0.0d0
            end do
          end do
          s = 1.0d0
          do i = 1, n
            do j = 0, i - 1
              s = 0.5d0 * s + x(j)
              do k = 1, m
                c(j, k) = c(j, k) + s
              end do
            end do
          end do
        end subroutine
        """))
    sf = parse_file(str(p))
    k = sf.kernels[0]
    spec = infer(k)
    cc = cross_case(k, spec, sf)
    body = parallel_body(k, sf)[0]
    c = _Model(k, spec, body).cost(cc.sizes)
    assert c.launches is not None and c.launches <= 1e4 < (1027 * 1027) // 2
    assert any("fewer than the 1027 wanted" in n for n in cc.notes)


def test_serial_loop_has_nothing_to_cross(kernels):
    _, spec, cc = _case(kernels, "prefix")
    assert cc is None


def test_array_syntax_is_lowered_to_its_loops(tmp_path):
    p = tmp_path / "a.f90"
    p.write_text(textwrap.dedent("""
        subroutine arr(n, x, y)
          integer, intent(in) :: n
          double precision, intent(in) :: x(n)
          double precision, intent(out) :: y(n)
          y(1:n) = 3.0d0 * x(1:n)
        end subroutine
        """))
    sf = parse_file(str(p))
    k = sf.kernels[0]
    body, notes = parallel_body(k, sf)
    assert not notes and len(parallel_dims(body)) == 1
    assert cross_case(k, infer(k), sf).sizes == {"n": 1027}


# --------------------------------------------------------------------------- the spec key


def test_spec_key_round_trip_and_old_files(kernels, tmp_path):
    _, ks = kernels
    k = ks["scale1"]
    path = tmp_path / "scale1.spec.yaml"
    spec = load_or_infer(k, path)
    assert spec.cross_tiles and "cross_tiles: true" in path.read_text()
    data = yaml.safe_load(path.read_text())
    data["sizes"]["cross_tiles"] = False
    path.write_text(yaml.safe_dump(data))
    edited = load_or_infer(k, path)
    assert edited.edited and edited.cross_tiles is False
    del data["sizes"]["cross_tiles"]  # a spec file written before the key existed
    data["sizes"]["correctness"] = [{"n": 5}]
    path.write_text(yaml.safe_dump(data))
    old = load_or_infer(k, path)
    assert old.edited and old.cross_tiles is True and old.correctness == [{"n": 5}]
    data["sizes"]["cross_tiles"] = "no"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match="sizes.cross_tiles"):
        load_or_infer(k, path)


def test_an_unedited_spec_from_before_the_key_is_inferred_again(kernels, tmp_path):
    from port_fortran.harness.spec import _canon_hash

    _, ks = kernels
    k = ks["scale1"]
    data = infer(k).to_data()
    del data["sizes"]["cross_tiles"]
    data["inferred_hash"] = _canon_hash(data)
    path = tmp_path / "scale1.spec.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_or_infer(k, path)
    assert not spec.edited and spec.cross_tiles and "cross_tiles: true" in path.read_text()


def test_harness_adds_the_crossing_case_unless_turned_off(kernels, tmp_path):
    from port_fortran.harness import Harness

    sf, ks = kernels
    h = Harness(ks["scale1"], sf, tmp_path / "port")
    v = Verdict("serial", True)
    cs = h._crossing_cases(v, 11)
    assert [c.sizes for c in cs] == [{"n": 1027}] and cs[0].kind == "cross-tiles"
    assert v.cross_tiles is True and any("boundary-crossing case: n=1027" in n for n in v.notes)
    data = yaml.safe_load(h.spec_path.read_text())
    data["sizes"]["cross_tiles"] = False
    h.spec_path.write_text(yaml.safe_dump(data))
    h.reload_spec()
    v = Verdict("serial", True)
    assert h._crossing_cases(v, 11) == [] and v.cross_tiles is False
    assert "cross_tiles: false" in v.notes[0]


# --------------------------------------------------------------------------- comparison


def _rec(name, arr):
    return Record(name, 4, (1,) * arr.ndim, np.asfortranarray(arr))


def test_chunked_comparison_equals_the_whole(monkeypatch):
    rng = np.random.default_rng(3)
    ref = rng.uniform(-1, 1, size=(57, 31))
    for plant in ("none", "over", "unwritten"):
        port = ref.copy()
        if plant == "over":
            port[40, 20] += 1e-3
            port[3, 2] += 5e-4
        elif plant == "unwritten":
            port[50, 30] = np.nan
            port[10, 30] = np.nan
        whole = C.compare(_rec("v", ref), _rec("v", port), Tolerance(1e-12))
        monkeypatch.setattr(C, "CHUNK", 7)
        chunked = C.compare(_rec("v", ref), _rec("v", port), Tolerance(1e-12))
        monkeypatch.setattr(C, "CHUNK", 1 << 22)
        assert chunked == whole, plant
        if plant == "none":  # identical arrays: what the element-wise path reports for them
            assert whole.passed and whole.max_abs_err == whole.max_rel_err == 0.0 and whole.worst_index == [1, 1]
    assert whole.worst_index == [11, 31] and "2 of 1767 element(s) never written" in whole.message


def test_sample_hits_every_tile_and_the_last_elements():
    shape = (5000, 70)
    idx = C.sample_indices(shape, budget=1 << 16)
    i, j = np.unravel_index(idx, shape, order="F")
    tiles = {(a // 1024, b // 16) for a, b in zip(i, j)}
    assert tiles == {(a, b) for a in range(-(-5000 // 1024)) for b in range(-(-70 // 16))}
    for d, e in enumerate(shape):
        coord = (i, j)[d]
        assert {e - 1, e - 2, e - 3, 0} <= set(coord.tolist())
    assert len(idx) < 5000 * 70


def test_large_output_is_sampled_and_says_so():
    ref = np.arange(1.0, 300001.0)
    port = ref.copy()
    port[-1] = 0.0  # the last element: always in the sample
    out = C.compare(_rec("y", ref), _rec("y", port), Tolerance(1e-12), full_limit=1000)
    assert not out.passed and out.sampled and out.total_elements == 300000
    assert out.elements < 300000 and out.worst_index == [300000] and "sampled" in out.message
    ok = C.compare(_rec("y", ref), _rec("y", ref.copy()), Tolerance(1e-12), full_limit=1000)
    assert ok.passed and ok.sampled


def test_large_files_are_mapped_and_read_the_same(monkeypatch, tmp_path):
    recs = [Record("n", 1, (), np.array(5, dtype="<i4")), _rec("x", np.arange(12.0).reshape(3, 4))]
    write_records(tmp_path / "r.bin", recs)
    small = read_records(tmp_path / "r.bin", ["n", "x"])
    monkeypatch.setattr(I, "MMAP_BYTES", 0)
    mapped = read_records(tmp_path / "r.bin", ["n", "x"])
    assert int(mapped[0].data) == 5 and np.array_equal(mapped[1].data, small[1].data)
    assert mapped[1].lbound == (1, 1)


# --------------------------------------------------------------------------- reports


def test_report_shows_only_proven_timings_and_old_databases_gain_the_column(tmp_path):
    from port_fortran.reports.collect import collect_report
    from port_fortran.reports.db import RunDB
    from port_fortran.reports.render import render_markdown

    path = tmp_path / "port-fortran.db"
    con = sqlite3.connect(path)  # a database from before proven_sizes existed
    con.executescript("""CREATE TABLE timings (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL,
        kernel_id TEXT NOT NULL, variant TEXT NOT NULL, threads INTEGER NOT NULL DEFAULT 1, median_s REAL NOT NULL,
        spread_s REAL NOT NULL DEFAULT 0, repeats INTEGER NOT NULL DEFAULT 0, kernel_only INTEGER NOT NULL DEFAULT 1,
        gbytes_per_s REAL, gflops REAL, roofline_fraction REAL, sizes TEXT NOT NULL DEFAULT '{}', at REAL NOT NULL);""")
    con.close()
    db = RunDB(path)
    rid = db.start_run(command="test")
    db.upsert_kernel(rid, "k.f:k", "k.f", "k", 1, 5)
    db.set_kernel(rid, "k.f:k", status="verified")
    db.add_verdict(rid, "k.f:k", "openmp", True, data={
        "backend": "openmp", "passed": True, "cross_tiles": True, "notes": ["boundary-crossing case: n=2051"],
        "cases": [{"seed": 1, "sizes": {"n": 33}, "passed": True, "kind": "", "outputs": []},
                  {"seed": 2, "sizes": {"n": 2051}, "passed": True, "kind": "cross-tiles", "outputs": []},
                  {"seed": 3, "sizes": {"n": 4000000}, "passed": True, "kind": "timing-size",
                   "outputs": [{"name": "y", "passed": True, "elements": 9, "sampled": True}]}]})
    big = {"n": 4000000}
    db.add_timing(rid, "k.f:k", "fortran-serial", 2.0, sizes=big)
    db.add_timing(rid, "k.f:k", "kokkos-openmp", 1.0, threads=2, sizes=big, proven_sizes=big)
    db.add_timing(rid, "k.f:k", "kokkos-serial", 0.1, sizes=big)  # never proven: must not show
    db.add_timing(rid, "k.f:k", "kokkos-cuda", 0.1, sizes=big, proven_sizes={"n": 2051})  # proven elsewhere
    report = collect_report(db, rid)
    k = report["kernels"][0]
    assert {t["variant"] for t in k["timings"]} == {"fortran-serial", "kokkos-openmp"}
    assert k["unproven_timings"] == 2
    assert report["backends"] and all(b["backend"] != "serial" or b["timed"] == 0 for b in report["backends"])
    v = k["verdicts"][0]
    assert v["cross_tiles"] is True and v["timing_size"] and v["outputs"][0]["sampled"]
    assert [s["kind"] for s in v["size_sets"]] == ["correctness", "cross-tiles", "timing-size"]
    md = render_markdown(report)
    timing_table = md.split("## Speedup")[1].split("## Sizes proven")[0]
    assert "2 timing(s) not shown" in md and "kokkos-openmp" in timing_table
    assert "kokkos-serial" not in timing_table and "kokkos-cuda" not in timing_table
    assert "n=4000000 |" in timing_table  # the proven-at column
    assert "past every tile: n=2051" in md and "timing sizes: n=4000000" in md
    import jsonschema
    from port_fortran.reports.render import load_schema
    jsonschema.validate(json.loads(json.dumps(report)), load_schema())


def test_gpu_bench_table_shows_proven_rows_only():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "gpu" / "run_bench.py"
    spec = importlib.util.spec_from_file_location("run_bench", path)
    rb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rb)
    row = {"threads": 1, "median_s": 0.5, "spread_s": 0.01, "sizes": {"n": 9}}
    table = rb.table({"k": [{**row, "variant": "fortran-serial", "median_s": 1.0},
                            {**row, "variant": "kokkos-cuda", "proven_sizes": {"n": 9}},
                            {**row, "variant": "kokkos-openmp"}]})  # an unproven row (an old run)
    lines = table.splitlines()
    assert "| proven |" in lines[0] and len(lines) == 4
    assert "| reference | fortran-serial |" in lines[2] and "| yes | kokkos-cuda |" in lines[3]


def test_cpu_bench_reports_compute_bound_kernels_by_their_flops():
    """Issue 15: a dgemm row must not read as if its GB/s were its speed."""
    import importlib.util
    import sys
    from pathlib import Path

    from port_fortran.records import Timing

    path = Path(__file__).resolve().parents[1] / "bench" / "kokkos_vs_fortran.py"
    spec = importlib.util.spec_from_file_location("kokkos_vs_fortran", path)
    kv = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(kv)
    finally:
        sys.path[:] = saved
    base = dict(variant="kokkos-openmp", threads=2, sizes={"n": 9}, median_s=1.0, spread_s=0.0, repeats=3)
    stream = Timing(**base, gbytes_per_s=20.0, gflops=1.6, roofline_fraction=0.8)  # 0.08 flop/byte
    gemm = Timing(**base, gbytes_per_s=1.0, gflops=38.0, roofline_fraction=0.04)
    assert kv.of_bandwidth(stream) == "80%"
    assert kv.of_bandwidth(gemm) == "–"
    assert kv.of_bandwidth(None) == "–"
