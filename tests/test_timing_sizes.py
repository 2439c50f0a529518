"""The sizes a port is timed at: ghost-cell widths stay a few cells deep, and where the
original rejects those sizes the harness falls back to every size scaled together, proves
the port there and times it there (real gfortran, real Kokkos Serial build)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import parse_file
from port_fortran.harness import Harness
from port_fortran.translate import translate_kernel, write_port

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install with Serial")]

SRC = Path(__file__).parent / "data" / "timing" / "packh.f90"


def test_timing_sizes_fall_back_when_the_original_walks_past_a_small_halo(tmp_path):
    sf = parse_file(str(SRC))
    k = sf.kernels[0]
    write_port(translate_kernel(k, sf), tmp_path / "packh")
    h = Harness(k, sf, tmp_path / "packh")
    first = dict(h.spec.timing)
    assert first["halo"] == 1 and first["depth"] > 1000  # the width kept small, the depth scaled
    assert h.verify("serial").passed
    pv = h.prove_timing("serial", cached=False)
    # at the first sizes the original reads field(x_min - 1 + depth + 2*off) past x_max + 1:
    # the bounds-checked original says so, and the sizes scaled together are proven instead
    assert pv.passed, pv.reason
    assert any("rejected by the original [original-out-of-bounds]" in n for n in pv.notes)
    t = h.spec.timing
    assert t["halo"] == t["depth"] == t["x_max"] > 500
    assert pv.cases[0].sizes["halo"] == t["halo"]
    kept = json.loads((tmp_path / "packh" / "build" / "serial" / "timing_proof.json").read_text())["proofs"]
    assert len(kept) == 2  # both size sets' verdicts, so a fresh harness does not run them again
    timings = h.bench(["serial"], repeats=1)
    ks = [x for x in timings if x.variant == "kokkos-serial"]
    assert ks and all(x.proven_sizes == x.sizes and x.sizes["halo"] == t["halo"] for x in ks), h.bench_notes
    # a fresh harness infers the first sizes again and settles on the same ones from the kept proofs
    h2 = Harness(k, sf, tmp_path / "packh")
    assert h2.spec.timing == first
    assert h2.prove_timing("serial").passed and h2.spec.timing == t
