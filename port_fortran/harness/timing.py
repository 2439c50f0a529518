"""Timing the original and the port the way users run them: same inputs (the spec's timing
sizes, about 64 MB of array data), warm-up, then the median and the spread of repeated
calls, at the same thread count; GB/s from the bytes the kernel must move, GFLOP/s where
the loop nest can be counted, and the fraction of the machine's measured memory bandwidth
(a STREAM-triad probe, run once per host and thread count and cached).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import time
from pathlib import Path
from typing import Optional

from ..build_runner.sandbox import Limits, run_limited
from ..cache import cache_root
from ..records import Timing
from . import ir_facts
from .inputs import Case, Layout, make_inputs, write_records

WARMUP = 2
REPEATS = 10
TIMING_LIMITS = Limits(wall_s=300.0, cpu_s=None, mem_mb=None)
PROBE_SOURCE = Path(__file__).parent / "fortran_support" / "stream_probe.cpp"
PROBE_SOURCE_CUDA = Path(__file__).parent / "fortran_support" / "stream_probe_cuda.cu"


def moved_bytes(kernel, spec, lay: Layout) -> int:
    """Bytes the kernel must move: each array argument read once (in), written once (out),
    or both (inout), at the size allocated for the case."""
    total = 0
    for a in kernel.args:
        if not a.rank:
            continue
        nb = lay.arrays[a.name].nbytes
        intent = spec.args[a.name].intent
        total += 2 * nb if intent == "inout" else nb
    return total


def parse_times(text: str) -> list[float]:
    out = []
    for line in text.splitlines():
        if line.strip().startswith("PF_TIME"):
            try:
                out.append(float(line.split()[1].replace("D", "E")))
            except (IndexError, ValueError):
                pass
    return out


TIMING_SEED = 20240607


def timing_case(spec) -> Case:
    """The inputs a timing runs on (and the timing-size proof checks): the spec's timing
    sizes, the first value of each flag and stride, a fixed seed."""
    choices = {n: a.values[0] for n, a in spec.args.items() if a.role in ("flag", "stride")}
    return Case(seed=TIMING_SEED, sizes=dict(spec.timing), choices=choices, kind="timing-size")


def proof_text(v) -> str:
    """A timing-size verdict (records.Verdict) in words, for Timing.proof and bench notes."""
    if not v.cases:
        return f"not verified at the timing sizes: {v.reason}"
    c = v.cases[0]
    sampled = [o for o in c.outputs if o.sampled]
    compared = sum(o.elements for o in c.outputs)
    how = (f"{compared} elements compared, {', '.join(o.name for o in sampled)} sampled" if sampled
           else f"all {compared} elements compared")
    state = "verified" if v.passed else "NOT verified"
    return f"{state} at the timing sizes on {v.backend} (seed {c.seed}, {how})"


def _timing(variant, threads, sizes, times, kernel_only, nbytes, flops, bw) -> Optional[Timing]:
    if not times:
        return None
    med = statistics.median(times)
    spread = max(times) - min(times)
    gbs = nbytes / med / 1e9 if med > 0 and nbytes else None
    gfl = flops / med / 1e9 if med > 0 and flops else None
    roof = gbs / bw if gbs and bw else None
    return Timing(variant=variant, threads=threads, sizes=dict(sizes), median_s=med, spread_s=spread,
                  repeats=len(times), kernel_only=kernel_only, gbytes_per_s=gbs, gflops=gfl,
                  roofline_fraction=roof)


def bench(h, backends: list[str], threads: int, repeats: Optional[int] = None,
          warmup: int = WARMUP) -> list[Timing]:
    """Fortran serial (and OpenMP if the source has directives) and each Kokkos backend.
    A backend's build is timed only once it is verified at these very inputs
    (``h.prove_timing``, once per build); each Kokkos timing records the sizes proven, a
    backend that fails there is not timed and the note says why."""
    repeats = repeats or REPEATS
    spec = h.spec
    kernel = h.kernel
    h.bench_notes = []
    proofs = {}  # first: a proof may settle the timing sizes (Harness.prove_timing's second choice)
    for b in backends:
        build = h._builds.get(b) or h.build(b)
        if not build.ok:
            h.bench_notes.append(f"kokkos-{b}: build failed: {build.condensed}")
            continue
        proofs[b] = h.prove_timing(b)
    case = timing_case(spec)
    choices = case.choices
    recs, lay = make_inputs(kernel, spec, case)
    work = h.port_dir / "build" / "bench"
    work.mkdir(parents=True, exist_ok=True)
    fin = work / "in.bin"
    write_records(fin, recs)
    nbytes = moved_bytes(kernel, spec, lay)
    env = {k: v for k, v in lay.scalars.items() if isinstance(v, int)}
    flops = ir_facts.count_flops(kernel, env)
    sizes = {**spec.timing, **{k: v for k, v in choices.items() if isinstance(v, int)}}
    out: list[Timing] = []

    def run(exe, mode, backend, t, variant, kernel_only, proof=None):
        res = run_limited([str(exe), mode, str(fin), str(warmup), str(repeats)], work,
                          TIMING_LIMITS.for_backend(backend), env_extra=h.run_env(backend, t, timing=True))
        times = parse_times(res.stdout)
        if not res.ok or not times:
            h.bench_notes.append(f"{variant}: " + h._describe_failure(variant, res))
            return
        tm = _timing(variant, t, sizes, times, kernel_only, nbytes, flops, bandwidth_for(backend, t))
        if tm:
            if proof is not None:
                tm.proven_sizes = dict(sizes)
                tm.proof = proof
            else:
                tm.proof = "the original (the reference)"
            out.append(tm)

    ref = h.build_reference(timing=True)
    run(ref, "time", "serial", 1, "fortran-serial", True)
    if kernel.has_openmp:
        ref_omp = h.build_reference(timing=True, openmp=True)
        run(ref_omp, "time", "openmp", threads, "fortran-openmp", True)
    for b, pv in proofs.items():
        build = h._builds.get(b) or h.build(b)
        if pv.cases and pv.cases[0].sizes != sizes:  # settled by a later backend's proof: again there
            pv = h.prove_timing(b)
        if not pv.passed:
            h.bench_notes.append(f"kokkos-{b}: not timed: {pv.reason}")
            continue
        if pv.cases and pv.cases[0].sizes != sizes:  # the proof and the timing share timing_case
            raise RuntimeError(f"timing-size proof at {pv.cases[0].sizes}, timing at {sizes}")
        proof = proof_text(pv)
        t = 1 if b == "serial" else threads
        exe = build.artifacts["pf_driver"]
        if (Path(build.build_dir) / "pf_driver").exists() and _has_views(build):
            run(exe, "time-views", b, t, f"kokkos-{b}", True, proof)
        run(exe, "time", b, t, f"kokkos-{b}", False, proof)
    _save(h, out)
    return out


def _has_views(build) -> bool:
    return (Path(build.build_dir).parent / "harness_src" / "views_timer.cpp").exists()


def _save(h, timings: list[Timing]) -> None:
    from ..fortran.ir import to_dict
    (h.port_dir / "timings.json").write_text(json.dumps(
        {"at": time.time(), "host": socket.gethostname(), "timings": [to_dict(t) for t in timings],
         "notes": getattr(h, "bench_notes", [])}, indent=1) + "\n")


# --------------------------------------------------------------------------- bandwidth probe


def bandwidth(threads: int, refresh: bool = False) -> Optional[float]:
    """Measured memory bandwidth (GB/s, STREAM triad) of this host at ``threads`` OpenMP
    threads; cached in ``<cache>/bandwidth.json`` by host name. None if the probe fails."""
    path = cache_root() / "bandwidth.json"
    host = socket.gethostname()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (json.JSONDecodeError, OSError):
        data = {}
    key = str(threads)
    if not refresh and key in data.get(host, {}):
        return data[host][key]
    gbs = _run_probe(threads)
    if gbs is None:
        return None
    data.setdefault(host, {})[key] = gbs
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)
    return gbs


def bandwidth_for(backend: str, threads: int) -> Optional[float]:
    """The bandwidth a run on ``backend`` is measured against: the GPU's own memory for
    ``cuda`` (a device triad), the host's at ``threads`` threads otherwise."""
    if backend == "cuda":
        return gpu_bandwidth()
    return bandwidth(threads)


def gpu_bandwidth(refresh: bool = False) -> Optional[float]:
    """Measured device memory bandwidth (GB/s, median of a CUDA STREAM triad over 3 GiB) of
    this host's first NVIDIA GPU; cached in ``<cache>/bandwidth.json`` under the key 'cuda'.
    None without nvcc or a GPU."""
    path = cache_root() / "bandwidth.json"
    host = socket.gethostname()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (json.JSONDecodeError, OSError):
        data = {}
    if not refresh and "cuda" in data.get(host, {}):
        return data[host]["cuda"]
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if not nvcc:
        return None
    exe = _probe_exe("stream_probe_cuda", [nvcc, "-O3", "-arch=native", str(PROBE_SOURCE_CUDA)])
    if exe is None:
        return None
    res = run_limited([str(exe)], exe.parent, Limits(wall_s=120, mem_mb=None))
    gbs = next((float(ln.split()[1]) for ln in res.stdout.splitlines()
                if ln.startswith("PF_TRIAD_GBS") and len(ln.split()) > 1), None)
    if not res.ok or gbs is None:
        return None
    data.setdefault(host, {})["cuda"] = gbs
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)
    return gbs


def _probe_exe(name: str, compile_cmd: list[str]) -> Optional[Path]:
    """A bandwidth probe compiled once into the cache (``compile_cmd`` without ``-o``);
    None when it does not compile."""
    pdir = cache_root() / "probe"
    pdir.mkdir(parents=True, exist_ok=True)
    exe = pdir / name
    if not exe.exists():
        tmp = pdir / f"{name}.{os.getpid()}"
        res = run_limited([*compile_cmd, "-o", str(tmp)], pdir, Limits(wall_s=300, mem_mb=None))
        if not res.ok:
            return None
        os.replace(tmp, exe)
    return exe


def _run_probe(threads: int) -> Optional[float]:
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return None
    exe = _probe_exe("stream_probe", [cxx, "-O3", "-march=native", "-fopenmp", str(PROBE_SOURCE)])
    if exe is None:
        return None
    res = run_limited([str(exe)], exe.parent, Limits(wall_s=300, mem_mb=None),
                      env_extra={"OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "spread",
                                 "OMP_PLACES": "threads"})
    for line in res.stdout.splitlines():
        if line.startswith("PF_TRIAD_GBS"):
            try:
                return float(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None
