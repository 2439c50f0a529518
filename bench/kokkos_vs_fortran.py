#!/usr/bin/env python3
"""Kokkos ports (rules model) against the original Fortran on the sample kernels.

For every kernel the rules model ports: verify the port (serial and openmp), then time the
original (gfortran -O3 -march=native, serial; and with -fopenmp at the same thread count
when the source has OpenMP directives) beside Kokkos Serial and Kokkos OpenMP at the same
thread count, with the spec's timing sizes (about 64 MB of array data, O(n^3) nests capped
at ~0.2 GFLOP). Writes bench/results/cpu_<date>.md with the machine, the compiler and Kokkos
versions, and the command.

    .venv/bin/python bench/kokkos_vs_fortran.py [SRC...] [--threads 2] [--repeats 7]

Ratios are time over time (below 1: Kokkos faster). "Fortran at T threads" is the OpenMP
build of the original when it has directives, else the serial original (legacy code without
directives runs on one core whatever the machine has).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from port_fortran.agents.optimizer import variants  # noqa: E402
from port_fortran.build_runner.kokkos import find_install  # noqa: E402
from port_fortran.fortran import discover, parse_file  # noqa: E402
from port_fortran.harness import Harness  # noqa: E402
from port_fortran.harness.timing import bandwidth  # noqa: E402
from port_fortran.records import TranslationRefused  # noqa: E402
from port_fortran.translate import translate_kernel, write_port  # noqa: E402


def first_line(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def fmt(x, unit="") -> str:
    if x is None:
        return "–"
    if unit == "s":
        return f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"
    return f"{x:.2f}"


#: flops per byte above which a kernel is reported by its GFLOP/s, not as a share of the
#: memory bandwidth (dgemm at n = 460 does 38, nbody_forces thousands, daxpy 0.08)
COMPUTE_BOUND = 4.0


def of_bandwidth(t) -> str:
    """The kernel's share of the measured triad, or '–' when it is compute-bound."""
    if not t or t.roofline_fraction is None:
        return "–"
    if t.gflops and t.gbytes_per_s and t.gflops / t.gbytes_per_s > COMPUTE_BOUND:
        return "–"
    return f"{100 * t.roofline_fraction:.0f}%"


def pick(timings, variant, kernel_only=True):
    for t in timings:
        if t.variant == variant and t.kernel_only == kernel_only:
            return t
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=[str(ROOT / "fortran_kernels")])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--kernel", action="append", default=[], help="only these kernels")
    ap.add_argument("--variant", default=None,
                    help="translate with this optimizer variant (e.g. regblock-4x4) where the kernel has it "
                         "(the pattern column names it); default: the default translation")
    ap.add_argument("-I", dest="include", action="append", default=[str(ROOT / "fortran_kernels" / "include")],
                    help="include directory for the sources (repeatable)")
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "port-fortran-bench"),
                    help="where the ports are written (reused: builds are incremental)")
    ap.add_argument("--results", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--kokkos-root", default=None,
                    help="prefix of a host Kokkos install (Serial and OpenMP, no device backend) to build the ports "
                         "with; default: Kokkos_ROOT, CMAKE_PREFIX_PATH, then port-fortran's cache")
    args = ap.parse_args(argv)
    if args.kokkos_root:
        os.environ["Kokkos_ROOT"] = args.kokkos_root  # find_install looks there first
        for b in ("serial", "openmp"):
            inst = find_install(b)
            if inst is None or os.path.realpath(inst.prefix) != os.path.realpath(args.kokkos_root):
                ap.error(f"--kokkos-root {args.kokkos_root}: not a Kokkos install with the {b} backend and no device "
                         f"backend (found: {inst.describe() if inst else 'none'}); build one with "
                         f"`port-fortran kokkos install --backends serial,openmp --prefix PREFIX`")
    command = "python bench/kokkos_vs_fortran.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    backends = ["serial", "openmp"]
    started = time.time()
    rows, skipped = [], []
    for path in discover(args.sources):
        sf = parse_file(str(path), include_dirs=args.include)
        for k in sf.kernels:
            if args.kernel and k.name not in args.kernel:
                continue
            try:
                opts = dict(variants(k, None, 50, backends)).get(args.variant) if args.variant else None
                port = translate_kernel(k, sf, opts)
            except TranslationRefused as exc:
                skipped.append((f"{path.name}:{k.name}", "not ported: " + "; ".join(d.message for d in exc.diagnostics)[:160]))
                continue
            except Exception as exc:  # a translator bug must not stop the benchmark
                skipped.append((f"{path.name}:{k.name}", f"translator error: {type(exc).__name__}: {exc}"[:160]))
                continue
            pdir = Path(args.out) / path.name / k.name
            write_port(port, pdir)
            try:
                h = Harness(k, sf, pdir, include_dirs=args.include, threads=args.threads)
                verdicts = {b: h.verify(b) for b in backends}
                bad = [f"{b}: {v.reason}" for b, v in verdicts.items() if not v.passed]
                if bad:
                    skipped.append((f"{path.name}:{k.name}", "not verified: " + bad[0][:160]))
                    continue
                # bench verifies each backend's build at the timing sizes first and times only
                # what passed there (Harness.prove_timing); its notes say what was not timed
                timings = h.bench(backends, threads=args.threads, repeats=args.repeats)
            except Exception as exc:
                skipped.append((f"{path.name}:{k.name}", f"harness: {type(exc).__name__}: {str(exc)[:160]}"))
                continue
            for note in getattr(h, "bench_notes", []):
                skipped.append((f"{path.name}:{k.name}", note[:200]))
            print(f"{k.name}: " + ", ".join(f"{t.variant}{'' if t.kernel_only else '+copies'}={t.median_s:.3g}s"
                                           for t in timings), flush=True)
            rows.append((path.name, k, port, timings, h.spec.timing))
            # written after every kernel, so an interrupted run still leaves its table
            write_report(args, command, rows, skipped, time.time() - started, quiet=True)
    write_report(args, command, rows, skipped, time.time() - started)
    return 0


def _variant(port) -> str:
    v = port.options.variant if port.options is not None else "default"
    return "" if v == "default" else f" ({v})"


def write_report(args, command, rows, skipped, seconds, quiet: bool = False) -> Path:
    T = args.threads
    inst = find_install("openmp") or find_install("serial")
    today = dt.date.today().isoformat()
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"cpu_{today}.md"
    bw1, bwT = bandwidth(1), bandwidth(T)
    lines = [
        f"# Kokkos vs Fortran on the sample kernels ({today})",
        "",
        f"- machine: {socket.gethostname()}, {cpu_model()}, {os.cpu_count()} logical CPUs "
        f"(shared with other jobs while this ran: treat small differences as noise)",
        f"- measured memory bandwidth (STREAM triad): {fmt(bw1)} GB/s at 1 thread, {fmt(bwT)} GB/s at {T} threads",
        f"- Fortran: {first_line(['gfortran', '--version'])}, flags -O3 -march=native (+ -fopenmp when the source has directives)",
        f"- C++: {first_line(['g++', '--version'])}; Kokkos {inst.version if inst else '?'} "
        f"({inst.describe() if inst else 'not found'}), CMake Release",
        f"- command: `{command}` (took {seconds / 60:.1f} min)",
        f"- timing: median of {args.repeats} calls after 2 warm-ups, inputs of the spec's timing sizes; "
        f"Kokkos times are kernel-only (views already in place) unless marked 'with copies'",
        "- proof: every Kokkos time comes from a build verified on that backend at the sizes it was timed at "
        "(the same inputs, against the original; column 'proven'), besides the correctness sizes and the "
        "boundary-crossing case of `verify`",
        "",
        f"Ratios are Kokkos time / Fortran time (below 1: the port is faster). "
        f"'F@{T}' is the original at {T} threads: its OpenMP build when the source has directives, "
        f"else the serial original. GB/s and GFLOP/s count the bytes the kernel must move and the "
        f"floating-point operations of its loops (`harness.ir_facts`); 'of bandwidth' is left out "
        f"(–) for a compute-bound kernel, above {COMPUTE_BOUND} flops per byte, whose speed is its GFLOP/s.",
        "",
        f"| kernel | pattern | sizes | proven | Fortran serial | Kokkos Serial | Serial/F | F@{T} | Kokkos OpenMP ({T}) | "
        f"OpenMP/F@{T} | OpenMP with copies | GB/s OpenMP | GFLOP/s OpenMP | of bandwidth |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fname, k, port, timings, sizes in rows:
        fs = pick(timings, "fortran-serial")
        fo = pick(timings, "fortran-openmp")
        ks = pick(timings, "kokkos-serial") or pick(timings, "kokkos-serial", False)
        ko = pick(timings, "kokkos-openmp") or pick(timings, "kokkos-openmp", False)
        koc = pick(timings, "kokkos-openmp", False)
        fT = fo or fs
        r_s = ks.median_s / fs.median_s if ks and fs else None
        r_o = ko.median_s / fT.median_s if ko and fT else None
        size = ", ".join(f"{n}={v}" for n, v in sizes.items())
        kk = [t for t in timings if t.variant.startswith("kokkos-")]
        proven = ", ".join(sorted({t.variant[len("kokkos-"):] for t in kk if t.proven_sizes == t.sizes})) or "–"
        lines.append(
            f"| {k.name} ({fname}) | {', '.join(port.patterns)}{_variant(port)} | {size} | {proven} | {fmt(fs and fs.median_s, 's')} | "
            f"{fmt(ks and ks.median_s, 's')} | {fmt(r_s)} | {fmt(fT and fT.median_s, 's')}{'' if fo else ' (serial)'} | "
            f"{fmt(ko and ko.median_s, 's')} | {fmt(r_o)} | {fmt(koc and koc.median_s, 's')} | "
            f"{fmt(ko and ko.gbytes_per_s)} | {fmt(ko and ko.gflops)} | {of_bandwidth(ko)} |")
    if skipped:
        lines += ["", "Not timed:", ""]
        lines += [f"- {name}: {why}" for name, why in skipped]
    path.write_text("\n".join(lines) + "\n")
    if not quiet:
        print(f"wrote {path}")
    return path


if __name__ == "__main__":
    sys.exit(main())
