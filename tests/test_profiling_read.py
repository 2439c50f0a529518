"""read_profile / summarize / merge / kernel_times on hand-written profiles (no compiler)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.profiling import (
    KernelProfile,
    ProfileMissing,
    ProfilingError,
    kernel_times,
    load_profile,
    merge,
    profiling_env,
    read_profile,
    summarize,
)

DOC = {
    "tool": "pf_kokkosp",
    "format": 1,
    "interface_version": 20210225,
    "finalized": True,
    "pid": 1,
    "wall_s": 0.5,
    "open_at_end": 0,
    "unmatched_ends": 0,
    "kernels": [
        {"kind": "parallel_for", "name": "saxpy:L12", "count": 4, "total_s": 0.004, "min_s": 0.0009, "max_s": 0.0012},
        {"kind": "parallel_reduce", "name": "dot:L30", "count": 2, "total_s": 0.010, "min_s": 0.004, "max_s": 0.006},
        {"kind": "parallel_for", "name": "Kokkos::View::initialization [x]", "count": 1,
         "total_s": 0.0001, "min_s": 0.0001, "max_s": 0.0001},
    ],
    "fences": [{"name": "Kokkos::fence: Unnamed", "count": 3, "total_s": 3e-6, "min_s": 1e-6, "max_s": 1e-6}],
    "deep_copies": [
        {"dst_space": "Cuda", "src_space": "Host", "bytes": 8_000_000, "count": 2, "total_s": 0.002,
         "min_s": 0.001, "max_s": 0.001},
    ],
    "regions": [{"name": "pf:kernel_only", "count": 1, "total_s": 0.02, "min_s": 0.02, "max_s": 0.02}],
    "metadata": {"Kokkos Version": "4.2.0"},
}


def write(tmp_path: Path, doc, name="kokkosp.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return p


def test_read_profile_entries_and_stats(tmp_path):
    prof = load_profile(write(tmp_path, DOC))
    assert prof.kokkos_version == "4.2.0" and prof.finalized and prof.wall_s == 0.5
    by = {(e.kind, e.name): e for e in prof.entries}
    assert set(by) == {("parallel_for", "saxpy:L12"), ("parallel_reduce", "dot:L30"),
                       ("parallel_for", "Kokkos::View::initialization [x]"),
                       ("deep_copy", "deep_copy Host->Cuda"), ("region", "pf:kernel_only")}
    sax = by[("parallel_for", "saxpy:L12")]
    assert sax.count == 4 and sax.mean_s == pytest.approx(0.001) and sax.line == 12
    assert sax.is_kernel and not sax.internal
    assert by[("parallel_for", "Kokkos::View::initialization [x]")].internal
    assert by[("parallel_for", "Kokkos::View::initialization [x]")].line is None
    dc = by[("deep_copy", "deep_copy Host->Cuda")]
    assert dc.bytes == 8_000_000 and not dc.is_kernel
    # largest total first
    totals = [e.total_s for e in prof.entries]
    assert totals == sorted(totals, reverse=True)
    # fences only on request
    assert all(e.kind != "fence" for e in prof.entries)
    fences = [e for e in read_profile(write(tmp_path, DOC), include_fences=True) if e.kind == "fence"]
    assert len(fences) == 1 and fences[0].count == 3
    assert sax.as_dict()["line"] == 12


def test_summarize_lines(tmp_path):
    entries = read_profile(write(tmp_path, DOC))
    text = summarize(entries, top=10)
    lines = text.splitlines()
    assert lines[0].startswith("Kokkos profile: 3 kernels, 7 launches")
    assert "2 deep copies, 8 MB" in lines[0]
    # kernels by total time: dot (10 ms) then saxpy (4 ms) then the View initialisation
    assert lines[1].lstrip().startswith("dot:L30 (Fortran line 30) [parallel_reduce]")
    assert "70.9% of kernel time" in lines[1] and "2x" in lines[1] and "mean 5 ms" in lines[1]
    assert lines[2].lstrip().startswith("saxpy:L12 (Fortran line 12) [parallel_for]")
    assert "mean 1 ms" in lines[2] and "min 900 us" in lines[2] and "max 1.2 ms" in lines[2]
    assert any(l.strip().startswith("deep_copy Host->Cuda: 2x, 8 MB") for l in lines)
    assert any("region pf:kernel_only" in l for l in lines)

    short = summarize(entries, top=1).splitlines()
    assert short[1].lstrip().startswith("dot:L30")
    assert "... 2 more kernels" in short[2]

    assert summarize([]) == "Kokkos profile: no kernels were recorded."


def test_kernel_times_and_merge(tmp_path):
    entries = read_profile(write(tmp_path, DOC))
    assert kernel_times(entries, top=2) == {"dot:L30": pytest.approx(0.005), "saxpy:L12": pytest.approx(0.001)}
    assert kernel_times(entries, top=1, stat="total_s") == {"dot:L30": pytest.approx(0.010)}
    with pytest.raises(ValueError):
        kernel_times(entries, stat="median")

    other = [KernelProfile("saxpy:L12", "parallel_for", 6, 0.012, 0.002, 0.0005, 0.003)]
    m = {(e.kind, e.name): e for e in merge([entries, other])}
    s = m[("parallel_for", "saxpy:L12")]
    assert s.count == 10 and s.total_s == pytest.approx(0.016) and s.mean_s == pytest.approx(0.0016)
    assert s.min_s == pytest.approx(0.0005) and s.max_s == pytest.approx(0.003)
    assert m[("parallel_reduce", "dot:L30")].count == 2


def test_missing_and_bad_files(tmp_path):
    with pytest.raises(ProfileMissing):
        read_profile(tmp_path / "absent.json")
    with pytest.raises(ProfilingError, match="not a readable profile"):
        read_profile(write(tmp_path, '{"tool": "pf_kokkosp", "kernels": ['))
    with pytest.raises(ProfilingError, match="not a profile written"):
        read_profile(write(tmp_path, {"kernels": []}))
    with pytest.raises(ProfilingError, match="malformed"):
        read_profile(write(tmp_path, {"tool": "pf_kokkosp", "kernels": [{"count": 1}]}))


def test_not_finalized_and_odd_bytes(tmp_path):
    p = tmp_path / "k.json"
    doc = dict(DOC, finalized=False, kernels=[{"kind": "parallel_for", "name": "x", "count": 1,
                                               "total_s": 1e-3, "min_s": 1e-3, "max_s": 1e-3}])
    # a label with a byte that is not UTF-8 (the hooks pass bytes through) still reads
    p.write_bytes(json.dumps(doc).replace('"name": "x"', '"name": "x\xff"').encode("latin-1"))
    prof = load_profile(p)
    assert not prof.finalized
    assert [e.name for e in prof.entries if e.is_kernel] == ["x\ufffd"]


def test_profiling_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = profiling_env("lib/libpf_kokkosp.so", "out/kokkosp.json")
    assert env["KOKKOS_TOOLS_LIBS"] == env["KOKKOS_PROFILE_LIBRARY"] == str(tmp_path / "lib/libpf_kokkosp.so")
    assert env["PF_KOKKOSP_OUTPUT"] == str(tmp_path / "out/kokkosp.json")
    assert env["PF_KOKKOSP_WARMUP"] == "0"
    assert profiling_env("l.so", "o.json", warmup=3)["PF_KOKKOSP_WARMUP"] == "3"
    with pytest.raises(ValueError):
        profiling_env("l.so", "o.json", warmup=-1)


def test_warmup_in_summary(tmp_path):
    doc = dict(DOC, warmup=2, kernels=[
        {"kind": "parallel_for", "name": "saxpy:L12", "count": 2, "skipped": 2, "total_s": 0.002,
         "min_s": 0.001, "max_s": 0.001},
        {"kind": "parallel_for", "name": "init:L3", "count": 0, "skipped": 1, "total_s": 0.0,
         "min_s": 0.0, "max_s": 0.0}], deep_copies=[], regions=[])
    prof = load_profile(write(tmp_path, doc))
    assert prof.warmup == 2
    init = next(e for e in prof.entries if e.name == "init:L3")
    assert (init.count, init.skipped, init.mean_s) == (0, 1, 0.0)
    lines = summarize(prof).splitlines()
    assert lines[0] == ("Kokkos profile: 1 kernel, 2 launches, 2 ms in kernels "
                        "(after warm-up: 3 launches not timed)")
    assert lines[1].lstrip().startswith("saxpy:L12 (Fortran line 12) [parallel_for]: 100.0%")
    assert lines[2].strip() == "launched only during warm-up: init:L3"
    assert kernel_times(prof.entries) == {"saxpy:L12": pytest.approx(0.001)}
    only_warm = dict(doc, kernels=[doc["kernels"][1]])
    assert summarize(load_profile(write(tmp_path, only_warm, "w.json"))) == \
        "Kokkos profile: no kernels were recorded after warm-up (warm-up only: init:L3)."
    # merging a warm-up-only entry keeps the other run's minimum
    m = merge([prof.entries, [KernelProfile("saxpy:L12", "parallel_for", 0, 0.0, 0.0, 0.0, 0.0, 0, 2)]])
    sax = next(e for e in m if e.name == "saxpy:L12")
    assert (sax.count, sax.skipped, sax.min_s) == (2, 4, pytest.approx(0.001))
