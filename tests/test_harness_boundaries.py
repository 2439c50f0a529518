"""Bugs the small correctness sizes (1, 7, 33) cannot see are caught: a verified rules port
edited to skip every index above 40, 100 or 1000 (a 1-D loop, a 2-D MDRange band, a
reduction), a tiled variant that drops the last partial tile, and 32-bit index arithmetic
that overflows only at the timing sizes (caught before anything is timed), on the Serial
and OpenMP backends, and CUDA where a CUDA Kokkos install is found.

A flat index overflowing 32 bits needs arrays of more than 2**31 elements (16 GB of
doubles): more than this 2-core, 24 GB machine (and CI) can hold twice. The planted overflow
is the same arithmetic at a smaller scale: a subscript computed as (i-1)*40503 in 32 bits,
wrong once i passes 53,020, which the timing sizes reach and no correctness size does.

Each port is built once per backend; the bugs are switched on at run time (environment
variables read by the planted code), so the whole file costs six builds."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import parse_file
from port_fortran.harness import Harness
from port_fortran.records import TranslateOptions
from port_fortran.translate import translate_kernel, write_port

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("openmp") is None, reason="no Kokkos install with Serial and OpenMP")]

SRC = Path(__file__).parent / "data" / "boundaries" / "bnd.f90"
# and CUDA where a CUDA Kokkos install is found (the GPU machine)
BACKENDS = ("serial", "openmp") + (("cuda",) if find_install("cuda") is not None else ())

# read once on the host when the driver starts; each kernel launch copies them into locals
# its lambda captures (so the device sees them too)
SWITCHES = """
#include <climits>
#include <cstdlib>
static long pf_test_env(const char* name, long dflt) { const char* s = std::getenv(name); return s ? std::atol(s) : dflt; }
static const long pf_test_skip_above = pf_test_env("PF_TEST_SKIP", LONG_MAX);
static const bool pf_test_tile_rem = pf_test_env("PF_TEST_TILE_REM", 0) != 0;
static const bool pf_test_int32 = pf_test_env("PF_TEST_INT32", 0) != 0;
"""


def plant(cpp: str, name: str) -> str:
    """The rules port with the switchable bugs: every kernel body starts by skipping indices
    above PF_TEST_SKIP; relax2's tiled MDRange drops the last partial tile of m when there
    is a full one; gathr's subscript is computed in 32 bits."""
    cpp = cpp.replace(f'#include "{name}.kokkos.hpp"\n', f'#include "{name}.kokkos.hpp"\n{SWITCHES}', 1)
    cpp, n = re.subn(r"\n(\s*)((?:Kokkos|pf)::parallel_(?:for|reduce)\()",
                     r"\n\1const long pf_skip = pf_test_skip_above;\n\1const bool pf_int32 = pf_test_int32;\n\1\2", cpp)
    assert n == 1, cpp
    cpp, n = re.subn(r"(KOKKOS_LAMBDA\(const int i\b[^{]*\{\n)", r"\1    if (i > pf_skip) return;\n", cpp)
    assert n == 1, cpp
    if name == "relax2":
        old = "pf::nest<2>({1, 1}, {m, n}, {64, 4})"
        assert old in cpp, cpp
        cpp = cpp.replace(old, "pf::nest<2>({1, 1}, {pf_test_tile_rem && m >= 64 ? (m / 64) * 64 : m, n}, {64, 4})")
    if name == "gathr":
        old = "static_cast<long long>(i - 1) * 40503LL % static_cast<long long>(n)"
        assert old in cpp, cpp
        cpp = cpp.replace(old, f"(pf_int32 ? static_cast<long long>(static_cast<int>(static_cast<unsigned>(i - 1) "
                               f"* 40503u) % n) : {old})")
    return cpp


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    sf = parse_file(str(SRC))
    assert not sf.errors, sf.errors
    out = {}
    for k in sf.kernels:
        port = translate_kernel(k, sf, TranslateOptions(tile=(64, 4)) if k.name == "relax2" else None)
        d = tmp_path_factory.mktemp(k.name)
        write_port(port, d)
        cpp = d / f"{k.name}.kokkos.cpp"
        cpp.write_text(plant(cpp.read_text(), k.name))
        h = Harness(k, sf, d, threads=2)
        for b in BACKENDS:
            res = h.build(b)
            assert res.ok, res.condensed
        out[k.name] = h
    return out


@pytest.fixture(autouse=True)
def no_bugs(monkeypatch):
    for v in ("PF_TEST_SKIP", "PF_TEST_TILE_REM", "PF_TEST_INT32"):
        monkeypatch.delenv(v, raising=False)


@pytest.mark.parametrize("name", ["gathr", "relax2", "dotp"])
def test_port_skipping_indices_past_the_small_sizes_is_caught(ports, monkeypatch, name):
    h = ports[name]
    for b in BACKENDS:
        v = h.verify(b)
        assert v.passed and v.cross_tiles, (name, b, v.reason)
        cross = [c for c in v.cases if c.kind == "cross-tiles"]
        assert cross and all(max(c.sizes.values()) > 1024 for c in cross)
        for skip in (40, 100, 1000):
            monkeypatch.setenv("PF_TEST_SKIP", str(skip))
            v = h.verify(b)
            assert not v.passed, (name, b, skip)
            # the spec's own sizes (at most 37 per dimension) all pass: only the new case sees it
            assert all(c.passed for c in v.cases if not c.kind), (name, b, skip)
            assert all(not c.passed for c in v.cases if c.kind == "cross-tiles")
            assert "[cross-tiles]" in v.reason
        monkeypatch.delenv("PF_TEST_SKIP")


def test_tiled_variant_dropping_the_last_partial_tile_is_caught(ports, monkeypatch):
    h = ports["relax2"]
    monkeypatch.setenv("PF_TEST_TILE_REM", "1")
    for b in BACKENDS:
        v = h.verify(b)
        assert not v.passed and "[cross-tiles]" in v.reason
        bad = [o for c in v.cases if c.kind == "cross-tiles" for o in c.outputs if not o.passed]
        m = next(c.sizes["m"] for c in v.cases if c.kind == "cross-tiles")
        assert m % 64 and bad and bad[0].name == "v" and "never written" in bad[0].message
        assert bad[0].worst_index[0] == (m // 64) * 64 + 1  # the first row of the dropped tile


def test_index_overflow_at_the_timing_size_stops_the_timing(ports, monkeypatch):
    h = ports["gathr"]
    monkeypatch.setenv("PF_TEST_INT32", "1")
    assert h.spec.timing["n"] > 53020  # (n-1) * 40503 passes 2**31 there
    for b in BACKENDS:
        v = h.verify(b)
        assert v.passed, v.reason  # 1027 * 40503 < 2**31: the correctness cases cannot see it
        pv = h.prove_timing(b, cached=False)
        assert not pv.passed and "at the timing sizes" in pv.reason
        assert pv.cases[0].kind == "timing-size" and pv.cases[0].sizes == {"n": h.spec.timing["n"]}
    timings = h.bench(["serial"], repeats=1)
    assert [t.variant for t in timings] == ["fortran-serial"]  # the port is not timed
    assert any(n.startswith("kokkos-serial: not timed: at the timing sizes") for n in h.bench_notes)
    monkeypatch.delenv("PF_TEST_INT32")
    # the correct port, same build: proven (a fresh proof, not the failed one), then timed
    pv = h.prove_timing("serial", cached=False)
    assert pv.passed and pv.cases[0].outputs and all(not o.sampled for o in pv.cases[0].outputs)
    timings = h.bench(["serial"], repeats=1)
    ks = [t for t in timings if t.variant == "kokkos-serial"]
    assert ks and all(t.proven_sizes == t.sizes == {"n": h.spec.timing["n"]} for t in ks)
    assert "verified at the timing sizes on serial" in ks[0].proof
