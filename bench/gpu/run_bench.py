"""Time ported sample kernels at sizes that show a GPU's memory bandwidth, through the
user-facing commands: each port's spec gets larger timing sizes (`sizes.timing`, the field
a user edits), then `port-fortran bench DIR --backends ... --threads N` runs the original
Fortran (serial, and OpenMP where the source has directives) and each Kokkos backend
(kernel-only and with copies). Prints one Markdown table and writes all rows as JSON.

    python3 bench/gpu/run_bench.py OUT_DIR --kernels waxpby,vdist --bytes-scale 16 \
        --keep dgemm,nbody_forces --backends openmp,cuda --threads 16 --repeats 10 --json rows.json

--bytes-scale S multiplies the array data of the spec's default timing case (about 64 MB)
by about S: each size in `sizes.timing` is multiplied by S**(1/d), d the largest rank of the
kernel's array arguments. Kernels in --keep stay at their default sizes (compute-bound
kernels whose serial Fortran would take minutes at larger sizes).

No number comes from a size that was not proven: `port-fortran bench` verifies each
backend's build at the timing sizes (the very inputs it then times, against the original)
before timing it, and times nothing that fails there (`timings.json` notes say why). With
--prebuild those proofs run first, in parallel (`port-fortran verify --timing-size`, kept per
build), after every spec has its timing sizes; the table's `proven` column shows the sizes
each row was proven at ('reference' for the original Fortran).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
import time
from pathlib import Path

import yaml


def port_dirs(out: Path, kernels: list[str]) -> dict[str, Path]:
    found = {}
    for meta in sorted(out.rglob("port.json")):  # <out>/<file>/<kernel>/, deeper for paths given as files
        name = json.loads(meta.read_text()).get("kernel")
        if name in kernels:
            found[name] = meta.parent
    return found


def scaled_sizes(spec: dict, scale: float) -> dict:
    ranks = [len(a.get("dims") or []) for a in spec.get("args", {}).values() if a.get("role") == "array"]
    d = max(ranks or [1])
    f = scale ** (1.0 / d)
    return {k: max(1, int(round(v * f))) if isinstance(v, int) else v for k, v in spec["sizes"]["timing"].items()}


def set_timing_sizes(spec_path: Path, sizes: dict, ranges: dict | None = None) -> None:
    """Write the timing sizes (and value ranges, ``{arg: (lo, hi)}`` where lo/hi are numbers
    or names of sizes) into the spec, as a user would edit it."""
    data = yaml.safe_load(spec_path.read_text())
    data["sizes"]["timing"] = sizes
    for arg, (lo, hi) in (ranges or {}).items():
        val = [float(sizes.get(x, x)) for x in (lo, hi)]
        data["args"][arg]["range"] = val
    spec_path.write_text(yaml.safe_dump(data, sort_keys=False, width=10_000))


def run_one(d: Path, backends: str, threads: int, repeats: int, timeout: float) -> tuple[list[dict], str]:
    cmd = [sys.executable, "-m", "port_fortran.cli", "bench", str(d), "--backends", backends,
           "--threads", str(threads), "--repeats", str(repeats)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        log = res.stdout + res.stderr
    except subprocess.TimeoutExpired as exc:
        return [], f"timed out after {timeout:.0f} s: {exc}"
    tj = d / "timings.json"
    data = json.loads(tj.read_text()) if tj.exists() else {}
    notes = data.get("notes", [])
    return data.get("timings", []), log + ("".join(f"\nnote: {n}" for n in notes))


def prebuild(dirs: dict[str, Path], backends: str, jobs: int, timeout: float) -> list[str]:
    """Build and prove every port for the backends in parallel with `port-fortran verify
    --timing-size` (the correctness cases, the boundary-crossing case and the timing sizes),
    so the timing runs that follow, one kernel at a time on an idle machine, find their
    builds done and proven."""
    def one(item):
        k, d = item
        cmd = [sys.executable, "-m", "port_fortran.cli", "verify", str(d), "--backends", backends, "--timing-size"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            return f"{k}: rc={res.returncode} {(res.stdout + res.stderr).strip()}"
        except subprocess.TimeoutExpired:
            return f"{k}: verify timed out after {timeout:.0f} s"
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, dirs.items()))


def table(results: dict[str, list[dict]]) -> str:
    head = ("| kernel | sizes | proven | variant | threads | kernel only | median | spread | GB/s | GFLOP/s "
            "| of bandwidth | vs Fortran serial |")
    out = [head, "|" + "---|" * 12]
    for k, rows in results.items():
        base = next((r["median_s"] for r in rows if r["variant"] == "fortran-serial"), None)
        for r in rows:
            sizes = ",".join(f"{a}={b}" for a, b in r["sizes"].items())
            if r["variant"].startswith("fortran-"):
                proven = "reference"
            elif r.get("proven_sizes") == r["sizes"]:
                proven = "yes"
            else:  # `bench` never times an unproven build: a row like this is from an old run
                continue
            gbs = r.get("gbytes_per_s")
            gfl = r.get("gflops")
            frac = r.get("roofline_fraction")
            sp = base / r["median_s"] if base and r["median_s"] > 0 else None
            out.append(f"| {k} | {sizes} | {proven} | {r['variant']} | {r['threads']} | "
                       f"{'yes' if r.get('kernel_only', True) else 'with copies'} | {_t(r['median_s'])} | "
                       f"{_t(r['spread_s'])} | {_n(gbs)} | {_n(gfl)} | "
                       f"{'' if frac is None else f'{100 * frac:.0f}%'} | {'' if sp is None else f'{sp:.3g}x'} |")
    return "\n".join(out)


def _t(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us"


def _n(x) -> str:
    return "" if x is None else f"{x:.4g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--keep", default="")
    ap.add_argument("--bytes-scale", type=float, default=16.0)
    ap.add_argument("--backends", default="openmp,cuda")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per kernel")
    ap.add_argument("--prebuild", type=int, default=0, metavar="J",
                    help="first build and verify all ports for the backends, J at a time")
    ap.add_argument("--range", action="append", default=[], metavar="KERNEL:ARG:LO:HI",
                    help="value range of an input array for timing (LO/HI: numbers or size names), "
                         "e.g. pic_scatter:xp:0:ng for particles spread over the grid")
    ap.add_argument("--deadline", type=float, default=None, metavar="S",
                    help="start no kernel after S seconds (the rows so far are still written)")
    ap.add_argument("--md", default=None, help="write the table here too (rewritten after each kernel)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--log", default=None)
    a = ap.parse_args(argv)
    kernels = [k for k in a.kernels.split(",") if k]
    keep = {k for k in a.keep.split(",") if k}
    dirs = port_dirs(Path(a.out_dir), kernels)
    ranges: dict[str, dict] = {}
    for r in a.range:
        kk, arg, lo, hi = r.split(":")
        ranges.setdefault(kk, {})[arg] = (lo, hi)
    results: dict[str, list[dict]] = {}
    logs = []
    # every spec gets its timing sizes first: the prebuild proves the ports at those sizes
    for k in kernels:
        d = dirs.get(k)
        if d is None:
            continue
        spec_path = d / f"{k}.spec.yaml"
        spec = yaml.safe_load(spec_path.read_text())
        sizes = spec["sizes"]["timing"] if k in keep else scaled_sizes(spec, a.bytes_scale)
        set_timing_sizes(spec_path, sizes, ranges.get(k))
    if a.prebuild:
        t0 = time.monotonic()
        logs += prebuild(dirs, a.backends, a.prebuild, 4 * a.timeout)
        print(f"[prebuild of {len(dirs)} ports: {time.monotonic() - t0:.1f} s]", file=sys.stderr, flush=True)
        print("\n".join(logs), file=sys.stderr, flush=True)
    start = time.monotonic()
    for k in kernels:
        if a.deadline is not None and time.monotonic() - start > a.deadline:
            print(f"[deadline: {k} and later kernels not timed]", file=sys.stderr, flush=True)
            break
        d = dirs.get(k)
        if d is None:
            print(f"{k}: no port directory under {a.out_dir} (not ported?)", file=sys.stderr)
            continue
        t0 = time.monotonic()
        rows, log = run_one(d, a.backends, a.threads, a.repeats, a.timeout)
        logs.append(f"=== {k} ({time.monotonic() - t0:.1f} s)\n{log}")
        print(f"[{k}: {len(rows)} rows in {time.monotonic() - t0:.1f} s]", file=sys.stderr, flush=True)
        results[k] = rows
        if a.md:
            Path(a.md).write_text(table(results) + "\n")
        if a.json:
            Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    if a.log:
        Path(a.log).write_text("\n".join(logs))
    print(table(results))
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
