"""A serial loop whose parallel loops inside are a few iterations each runs whole in one
kernel (translate/launches.py, issue 15): TeaLeaf's tea_block_solve launched three kernels
per grid column for a 4-element block copy (10x the original on Kokkos Serial, 130x on
OpenMP). The trip count comes from the bounds with the scalars the loop assigns once
substituted (hi = kb + bs - 1, lo = kb: 4). A long inner loop still gets its launches.
Integration: the one-kernel port proven on Serial and OpenMP (and TeaLeaf's own shape, whose
scratch arrays each column fills first, as the parallel port it now is)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.translate import translate_kernel, write_port
from port_fortran.translate.launches import SMALL_TRIP, small_trips

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

SRC = Path(__file__).parent / "data" / "translate" / "blocksolve.f90"


def _port(name: str):
    sf = parse_file(str(SRC), use_cache=False)
    k = next(k for k in sf.kernels if k.name == name)
    return k, translate_kernel(k, sf)


def test_a_serial_loop_around_four_iteration_copies_runs_in_one_kernel():
    # blockcarry: each column's sweep starts from the column before, so the columns are
    # serial and only the 4-iteration block copy is parallel
    k, port = _port("blockcarry")
    cpp = port.files["blockcarry.kokkos.cpp"]
    assert port.patterns == ["serial"] and "pf::parallel_for(" not in cpp
    assert cpp.count("pf::single_for(") == 1  # one launch per call, not three per column
    assert any("do kb -> serial, whole in one kernel" in n and "run 4 iterations (line 62)" in n for n in port.notes)
    # blocksolve fills f and g in every column before reading them (privatize, recurrences):
    # its columns are one parallel loop around the blocks
    _k, port = _port("blocksolve")
    assert port.patterns == ["parallel_for"]
    assert any(n.startswith("line 9: do j (interchanged") and "parallel_for" in n for n in port.notes), port.notes
    assert "pf::Private<double, 4> f;" in port.files["blocksolve.kokkos.cpp"]


def test_trip_counts_come_from_the_scalars_the_loop_assigns_once(tmp_path):
    k, _ = _port("blocksolve")
    outer = next(s for s in ir.walk(k.body) if isinstance(s, ir.Do) and s.var == "kb")
    copy = lambda d: d.line == 21  # noqa: E731  (the block copy: the loop that would launch)
    assert "run 4 iterations (line 21)" in small_trips(outer, copy, k.constants())
    # blocks of 32 rows: the copy is worth its launches
    src = tmp_path / "b32.f90"
    src.write_text(SRC.read_text().replace("bs = 4", f"bs = {2 * SMALL_TRIP}"))
    k32 = parse_file(str(src), use_cache=False).kernels[0]
    outer = next(s for s in ir.walk(k32.body) if isinstance(s, ir.Do) and s.var == "kb")
    assert small_trips(outer, copy, k32.constants()) is None
    port = translate_kernel(k32, parse_file(str(src), use_cache=False))
    assert "parallel_for" in port.patterns


def test_a_long_parallel_loop_inside_keeps_its_launches():
    _k, port = _port("colsweep")
    assert "parallel_for" in port.patterns
    assert not any("whole in one kernel" in n for n in port.notes)


@pytest.mark.integration
def test_the_one_kernel_port_is_proven(tmp_path):
    why = toolchain.missing()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    for name in ("blockcarry", "blocksolve"):
        k, port = _port(name)
        write_port(port, tmp_path / name)
        h = Harness(k, SRC, tmp_path / name, threads=2)
        for backend in ("serial", "openmp"):
            v = h.verify(backend, seeds=2)
            assert v.passed, f"{name} [{backend}]: {v.reason}"
