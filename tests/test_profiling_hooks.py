"""The profiling hooks against a real Kokkos program: build the library, load it through the
environment, and check the kernels, counts and times it records."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from port_fortran.profiling import (
    OUTPUT_ENV,
    ProfileMissing,
    build_hooks,
    load_profile,
    profiling_env,
    read_profile,
    summarize,
)

PROGRAM = r"""
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  const int n_axpy = std::atoi(argv[1]), n_scale = std::atoi(argv[2]), n_dot = std::atoi(argv[3]);
  const bool finalize = std::strcmp(argv[4], "finalize") == 0;
  const int n = 20000;
  Kokkos::initialize();
  {
    Kokkos::View<double*> x("x", n), y("y", n);
    Kokkos::deep_copy(x, 1.0);
    for (int r = 0; r < n_axpy; ++r)
      Kokkos::parallel_for("pf_axpy", n, KOKKOS_LAMBDA(int i) { y(i) += 2.0 * x(i); });
    for (int r = 0; r < n_scale; ++r)
      Kokkos::parallel_for("pf_scale", n, KOKKOS_LAMBDA(int i) { x(i) *= 0.5; });
    double s = 0.0;
    for (int r = 0; r < n_dot; ++r)
      Kokkos::parallel_reduce("pf_dot:L42", n, KOKKOS_LAMBDA(int i, double& a) { a += x(i) * y(i); }, s);
    Kokkos::parallel_for("pf \"odd\" \\ label", 4, KOKKOS_LAMBDA(int) {});
    auto h = Kokkos::create_mirror_view(y);
    Kokkos::deep_copy(h, y);
    std::printf("%g %g\n", s, h(0));
  }
  if (finalize) Kokkos::finalize();
  return 0;
}
"""


def _kokkos_prefix() -> Path | None:
    for cand in (os.environ.get("Kokkos_ROOT"), "/tmp/kokkos-dev"):
        if not cand:
            continue
        p = Path(cand)
        cfg = p / "include" / "KokkosCore_config.h"
        if not cfg.is_file():
            continue
        text = cfg.read_text()
        # host-only installs with tool loading compiled in
        if "#define KOKKOS_ENABLE_LIBDL" in text and "#define KOKKOS_ENABLE_CUDA" not in text \
                and "#define KOKKOS_ENABLE_HIP" not in text:
            return p
    return None


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(hooks library, Kokkos test program), compiled side by side to keep the test short."""
    prefix = _kokkos_prefix()
    if prefix is None:
        pytest.skip("no host-only Kokkos install with libdl (set Kokkos_ROOT)")
    libdir = next((prefix / d for d in ("lib", "lib64") if (prefix / d).is_dir()), prefix / "lib")
    openmp = "#define KOKKOS_ENABLE_OPENMP" in (prefix / "include" / "KokkosCore_config.h").read_text()
    d = tmp_path_factory.mktemp("kprog")
    (d / "prog.cpp").write_text(PROGRAM)
    cmd = ["g++", "-std=c++17", "-O1", *(["-fopenmp"] if openmp else []), f"-I{prefix}/include",
           "prog.cpp", "-o", "prog", f"-L{libdir}", "-lkokkoscore", "-ldl", "-lpthread"]
    proc = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lib = build_hooks(d / "cache")
    finally:
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    return lib, d / "prog"


def _run(prog: Path, env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY", OUTPUT_ENV)}
    env.update({"OMP_NUM_THREADS": "1", "OMP_PROC_BIND": "false"}, **env_extra)
    res = subprocess.run([str(prog), *args], cwd=prog.parent, env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


@pytest.mark.integration
def test_build_is_cached_by_source_hash(built):
    lib = built[0]
    assert lib.name == "libpf_kokkosp.so" and lib.is_file()
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    for fn in ("kokkosp_init_library", "kokkosp_finalize_library", "kokkosp_begin_parallel_for",
               "kokkosp_end_parallel_reduce", "kokkosp_begin_deep_copy", "kokkosp_end_fence"):
        assert fn in syms
    mtime = lib.stat().st_mtime_ns
    t0 = time.perf_counter()
    again = build_hooks(lib.parent.parent)
    assert again == lib and lib.stat().st_mtime_ns == mtime
    assert time.perf_counter() - t0 < 0.5
    assert not [p for p in lib.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.integration
def test_kernel_counts_and_times(built, tmp_path):
    lib, kokkos_program = built
    out = tmp_path / "run1" / "kokkosp.json"
    out.parent.mkdir()
    _run(kokkos_program, profiling_env(lib, out), "3", "5", "2", "finalize")
    prof = load_profile(out)
    assert prof.finalized and prof.open_at_end == 0
    assert prof.kokkos_version and prof.kokkos_version[0].isdigit()
    by = {(e.kind, e.name): e for e in prof.entries}
    assert by[("parallel_for", "pf_axpy")].count == 3
    assert by[("parallel_for", "pf_scale")].count == 5
    dot = by[("parallel_reduce", "pf_dot:L42")]
    assert dot.count == 2 and dot.line == 42
    assert by[("parallel_for", 'pf "odd" \\ label')].count == 1
    for key in [("parallel_for", "pf_axpy"), ("parallel_for", "pf_scale"), ("parallel_reduce", "pf_dot:L42")]:
        e = by[key]
        assert 0 < e.min_s <= e.mean_s <= e.max_s and e.total_s == pytest.approx(e.mean_s * e.count)
        assert e.max_s < prof.wall_s
    copies = [e for e in prof.entries if e.kind == "deep_copy"]
    assert copies and sum(c.bytes for c in copies) >= 20000 * 8
    text = summarize(prof)
    assert "pf_axpy [parallel_for]" in text and "pf_dot:L42 (Fortran line 42)" in text

    # a program that exits without Kokkos::finalize() still leaves its profile
    out2 = tmp_path / "run2.json"
    _run(kokkos_program, profiling_env(lib, out2), "1", "0", "0", "exit")
    prof2 = load_profile(out2)
    assert not prof2.finalized
    names = {e.name: e.count for e in prof2.entries if e.is_kernel}
    assert names.get("pf_axpy") == 1 and "pf_scale" not in names

    # warm-up launches are left out of the times, and counted
    out4 = tmp_path / "run4.json"
    _run(kokkos_program, profiling_env(lib, out4, warmup=2), "3", "5", "2", "finalize")
    prof4 = load_profile(out4)
    assert prof4.warmup == 2
    by4 = {e.name: e for e in prof4.entries if e.is_kernel}
    assert (by4["pf_axpy"].count, by4["pf_axpy"].skipped) == (1, 2)
    assert (by4["pf_scale"].count, by4["pf_scale"].skipped) == (3, 2)
    assert (by4["pf_dot:L42"].count, by4["pf_dot:L42"].skipped, by4["pf_dot:L42"].total_s) == (0, 2, 0.0)
    assert "launched only during warm-up:" in summarize(prof4) and "pf_dot:L42" in summarize(prof4)

    # without the environment nothing is loaded and nothing is written
    out3 = tmp_path / "run3.json"
    _run(kokkos_program, {}, "1", "1", "1", "finalize")
    with pytest.raises(ProfileMissing):
        read_profile(out3)
