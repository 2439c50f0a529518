"""Proving a modernised *program* by its own output: build the original and the modern
program, run both the same way, compare every number they print.

A main program cannot be driven with random inputs like a routine; what it computes is what
it prints. The proof (:func:`prove_program`): both programs build (gfortran for the
original; the hybrid source with the ports' Kokkos library for the modern one), both run in
fresh working directories holding the same input files, both exit with the same status,
and their outputs agree line by line: the same text, and every number within a tolerance
set by its magnitude (``rtol`` times the larger of the two values, plus one unit of the
last digit printed, since a value printed with 6 digits can differ by one in the last when
a parallel sum rounds the other way). Lines matching an ``ignore`` pattern (timings) are
left out of both before comparing.

:func:`compare_output` is pure and reusable (the application issue builds on it).
"""
from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional, Sequence

from ..build_runner.sandbox import Limits, run_limited
from ..build_runner.toolchain import gfortran_path, host_openmp, strip_offload, uses_openmp
from ..errors import ToolMissing, UserError
from .csources import compile_c, is_c

# re-exported: the program proof's comparison is importable from here as before
from .textcompare import DEFAULT_RTOL, OutputComparison, compare_output, timing_mask, tokens  # noqa: F401


# lines of standard error that are not the program's output: gfortran's note at STOP on the
# floating-point flags raised (C++ code raises others), the Kokkos run-time's own notices
_ERR_NOISE = re.compile(r"^\s*Note: The following floating-point exceptions are signalling|^\s*(?:\[?Kokkos|KOKKOS)")


def _err_text(text: str) -> str:
    return "\n".join(ln for ln in (text or "").splitlines() if not _ERR_NOISE.search(ln))


def compare_runs(ref: "ProgramRun", new: "ProgramRun", ignore: Sequence[str] = (), rtol: float = DEFAULT_RTOL,
                 atol: float = 0.0, masks: tuple = (frozenset(), frozenset())) -> OutputComparison:
    """:func:`compare_output` over standard output, then standard error (where benchmark
    suites print their arrays); the counts of both, the first difference found."""
    out = compare_output(ref.stdout, new.stdout, ignore, rtol, atol, masks[0])
    if not out.matched:
        return out
    err = compare_output(_err_text(ref.stderr), _err_text(new.stderr), ignore, rtol, atol, masks[1])
    if not err.matched:
        err.first_difference["why"] += ", on standard error"
        return err
    out.lines_compared += err.lines_compared
    out.numbers_compared += err.numbers_compared
    out.max_rel_err = max(out.max_rel_err, err.max_rel_err)
    out.ignored += err.ignored
    out.masked += err.masked
    return out


# ------------------------------------------------------------------ building and running


@dataclass
class ProgramRun:
    returncode: Optional[int]
    stdout: str
    stderr: str
    seconds: float


@dataclass
class ProgramVerdict:
    backend: str
    passed: bool
    reason: str = ""
    comparison: Optional[OutputComparison] = None
    original_seconds: float = 0.0
    modern_seconds: float = 0.0
    files: dict = field(default_factory=dict)  # executables and outputs
    calls: dict = field(default_factory=dict)  # extern "C" entry -> calls in the modern run (PF_CALL_COUNTS)
    code: str = ""  # 'original-nondeterministic': the original's own runs differ (no proof possible)


def fortran_flags(include_dirs: Sequence[str] = (), defines: Optional[dict] = None, cpp: bool = False,
                  opt: Sequence[str] = ("-O2",)) -> list[str]:
    flags = list(opt)
    if cpp or defines:
        flags.append("-cpp")
    from ..fortran.cpp import define_flags

    flags += define_flags(defines)
    flags += [f"-I{d}" for d in include_dirs]
    return flags


def compile_fortran(sources: Sequence[Path], bdir: Path, flags: Sequence[str], limits: Limits) -> list[Path]:
    """Objects of ``sources`` compiled in order (modules first is the caller's order),
    ``.mod`` files in ``bdir``; C sources with the C compiler. Raises UserError naming the file that does not compile."""
    fc = gfortran_path()
    if not fc:
        raise ToolMissing("gfortran not found: install it (e.g. apt-get install gfortran)")
    bdir.mkdir(parents=True, exist_ok=True)
    objs = []
    for i, src in enumerate(sources):
        obj = bdir / f"{i:02d}_{Path(src).stem}.o"
        if is_c(src):  # a C source of the tree (a timer)
            objs.append(compile_c(src, obj, flags, bdir, limits))
            continue
        cpp = ["-cpp"] if Path(src).suffix in (".F", ".F90", ".F95", ".F03", ".F08", ".FOR", ".FPP") else []
        cmd = [fc, *flags, *cpp, f"-J{bdir}", f"-I{bdir}", "-c", str(Path(src).resolve()), "-o", str(obj)]
        res = run_limited(cmd, bdir, limits)
        if not res.ok:
            tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-12:])
            raise UserError(f"{src}: does not compile ({' '.join(cmd[:2])} ...):\n{tail}")
        strip_offload(obj, flags)  # the modern program links with the C++ linker
        objs.append(obj)
    return objs


def run_program(exe: Path, workdir: Path, args: Sequence[str] = (), stdin: Optional[Path] = None,
                inputs: Sequence[Path] = (), limits: Optional[Limits] = None,
                env: Optional[dict] = None) -> ProgramRun:
    """Run ``exe`` in a fresh ``workdir`` holding copies of ``inputs`` (sandboxed)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    for f in inputs:
        shutil.copy2(f, workdir / Path(f).name)
    cmd = [str(exe), *args]
    if stdin is not None:
        cmd = ["sh", "-c", '"$0" "$@" < "$PF_STDIN"', str(exe), *args]
        env = {**(env or {}), "PF_STDIN": str(Path(stdin).resolve())}
    t0 = time.monotonic()
    lim = limits or Limits(wall_s=600.0, mem_mb=None)
    if lim.stack is None:  # a whole program runs as a job script runs it (Limits.stack)
        lim = replace(lim, stack="unlimited")
    res = run_limited(cmd, workdir, lim, env_extra=env or {})
    return ProgramRun(res.returncode, res.stdout, res.stderr, time.monotonic() - t0)


def read_call_counts(path: Path) -> dict[str, int]:
    """``<entry> <calls>`` lines written at exit by the ports' runtime (pf_runtime.hpp)."""
    out: dict[str, int] = {}
    try:
        text = Path(path).read_text()
    except OSError:
        return out
    for ln in text.splitlines():
        parts = ln.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = out.get(parts[0], 0) + int(parts[1])
    return out


def prove_program(original: Path, port_dir: Path, backend: str, *, other_sources: Sequence[Path] = (),
                  include_dirs: Sequence[str] = (), defines: Optional[dict] = None, args: Sequence[str] = (),
                  stdin: Optional[Path] = None, inputs: Sequence[Path] = (), ignore: Sequence[str] = (),
                  rtol: float = DEFAULT_RTOL, threads: int = 2, limits: Optional[Limits] = None, atol: float = 0.0,
                  fflags: Sequence[str] = ()) -> ProgramVerdict:
    """Build the original program (``original`` with ``other_sources``, which come first:
    modules it uses) and its hybrid port in ``port_dir`` for ``backend``, run both, compare."""
    from ..build_runner.cmake import configure_and_build
    from ..build_runner.kokkos import find_install
    from .hybrid import hybrid_cmake, load_info

    info = load_info(port_dir)
    port_dir = Path(port_dir).resolve()
    hybrid_src = port_dir / info["source"]
    k = info["routine"]
    lim = limits or Limits(wall_s=600.0, mem_mb=None)
    build = port_dir / "build" / "program"
    flags = host_openmp(fortran_flags(include_dirs, defines) + list(fflags))
    fflags = host_openmp(fflags)
    ref_objs = compile_fortran([*other_sources, original], build / "original", flags, lim)
    fc = gfortran_path()
    ref_exe = build / "original" / "program"
    res = run_limited([fc, *list(fflags), *[str(o) for o in ref_objs], "-o", str(ref_exe)], build / "original", lim)
    if not res.ok:
        raise UserError(f"{original}: the original program does not link:\n{(res.stderr or res.stdout)[-1500:]}")
    mod_flags = flags + [f"-I{d}" for d in info.get("include_dirs_first", [])]
    mdir = build / "modern-fortran"
    objs = compile_fortran([*other_sources, port_dir / f"{k}_kokkos_mod.f90", hybrid_src], mdir, mod_flags, lim)
    kokkos = find_install(backend)
    if kokkos is None:
        raise ToolMissing(f"no Kokkos install with the {backend} backend: run "
                          f"`port-fortran kokkos install --backends {backend}`")
    src = build / "cmake-src"
    src.mkdir(parents=True, exist_ok=True)
    # Fortran compiled with OpenMP calls its run-time (omp_get_num_threads) whatever the
    # Kokkos backend links: a CUDA build links no OpenMP of its own
    omp = ["gomp"] if uses_openmp(mod_flags) else []
    (src / "CMakeLists.txt").write_text(hybrid_cmake(k, str(port_dir), [str(o) for o in objs], exe="program",
                                                     libs=omp))
    bdir = build / backend
    from .core import HOST_BACKENDS, HOST_CXXFLAGS
    cmake_args = [f"-DCMAKE_Fortran_COMPILER={fc}"]
    if backend in HOST_BACKENDS:
        cmake_args.append("-DCMAKE_CXX_FLAGS=" + " ".join(x for x in (kokkos.cxx_flags, *HOST_CXXFLAGS) if x))
    b = configure_and_build(src, bdir, backend, kokkos, cmake_args=cmake_args, jobs=2)
    verdict = ProgramVerdict(backend, False)
    if not b.ok:
        verdict.reason = f"the modern program does not build: {b.condensed}"
        return verdict
    exe = bdir / "program"
    t = 1 if backend == "serial" else threads
    # OMP_PROC_BIND set: Kokkos warns on stdout when it is not, which would be a line of output
    env = {"OMP_NUM_THREADS": str(t), "KOKKOS_NUM_THREADS": str(t), "OMP_DYNAMIC": "false", "OMP_PROC_BIND": "false"}
    ref = run_program(ref_exe, build / "run-original", args, stdin, inputs, lim, env)
    # the original again, its fresh heap memory filled with another byte (glibc's
    # MALLOC_PERTURB_): a program whose output changes reads memory it never set, and its
    # output can then prove nothing about a port
    # (again without it: garbage that depends on where ASLR put things shows up in some runs
    # only; a quick program gets three more runs, a slow one one)
    timed: list = []  # the timing masks, made once, the first time two outputs differ

    def masks_of(other: ProgramRun) -> tuple:
        if other.returncode != ref.returncode:
            return (frozenset(), frozenset())
        return (timing_mask(ref.stdout, other.stdout, ignore, rtol, atol),
                timing_mask(_err_text(ref.stderr), _err_text(other.stderr), ignore, rtol, atol))

    def slow_masks() -> tuple:
        """Masks of the numbers the original prints differently when its clocks run a
        thousand times faster (harness/dilate.py), or else when built at -O0: its timings
        (:func:`timing_mask`), for standard output and standard error."""
        from .dilate import dilation_library

        lib = dilation_library(build / "dilate")
        if lib is not None:
            got = masks_of(run_program(ref_exe, build / "run-original-dilated", args, stdin, inputs, lim,
                                       {**env, "LD_PRELOAD": str(lib)}))
            if any(got):
                return got
        none = (frozenset(), frozenset())
        if ref.seconds > 60:  # a slow build of a long run would take too long
            return none
        sdir = build / "original-O0"
        try:
            slow_objs = compile_fortran([*other_sources, original], sdir, flags + ["-O0"], lim)
        except UserError:
            return none
        slow_exe = sdir / "program"
        if not run_limited([fc, *list(fflags), *[str(o) for o in slow_objs], "-o", str(slow_exe)], sdir, lim).ok:
            return none
        return masks_of(run_program(slow_exe, build / "run-original-O0", args, stdin, inputs, lim, env))

    def compared(run: ProgramRun) -> OutputComparison:
        """``run``'s outputs against the original's first run; when they differ, again with
        the numbers that change with the original's speed left out."""
        cmp = compare_runs(ref, run, ignore, rtol, atol, timed[0] if timed else (frozenset(), frozenset()))
        if cmp.matched or timed:
            return cmp
        timed.append(slow_masks())
        return compare_runs(ref, run, ignore, rtol, atol, timed[0]) if any(timed[0]) else cmp

    def original_again(perturbs: list[dict], tag: str):
        """The original run again with each of ``perturbs`` until its output or status
        differs from the first run's: (run, comparison) of the last run made."""
        for k, extra in enumerate(perturbs):
            again = run_program(ref_exe, build / f"run-original-{tag}{k + 2}", args, stdin, inputs, lim,
                                {**env, **extra})
            same = compared(again)
            if ref.returncode != again.returncode or not same.matched:
                break
        return again, same

    again, same = original_again([{"MALLOC_PERTURB_": "165"}, {}, {"MALLOC_PERTURB_": "90"}][:3 if ref.seconds < 5 else 1], "")
    if ref.returncode is not None and ref.returncode < 0 and ref.returncode == again.returncode:
        verdict = ProgramVerdict(backend, False, code="original-failed", original_seconds=ref.seconds)
        tail = " | ".join((ref.stderr or "").strip().splitlines()[-2:])
        verdict.reason = (f"the original program dies of signal {-ref.returncode} on every run{': ' + tail if tail else ''}"
                          "; its output proves nothing")
        return verdict
    if ref.returncode != again.returncode or not same.matched:
        verdict = ProgramVerdict(backend, False, code="original-nondeterministic", original_seconds=ref.seconds)
        why = (f"exit status {ref.returncode} then {again.returncode}" if ref.returncode != again.returncode
               else same.describe().replace("the original / ", "the first run / ").replace(
                   "of the modern program", "of the second run"))
        verdict.reason = (f"the original program's own output changes from run to run ({why}): it reads memory it "
                          "never set (uninitialised data) or depends on timing, so comparing outputs proves nothing")
        return verdict
    counts = build / f"calls-{backend}.txt"
    if counts.exists():
        counts.unlink()
    new = run_program(exe, build / f"run-{backend}", args, stdin, inputs, lim, {**env, "PF_CALL_COUNTS": str(counts)})
    verdict.calls = read_call_counts(counts)
    verdict.original_seconds, verdict.modern_seconds = ref.seconds, new.seconds
    verdict.files = {"original": str(ref_exe), "modern": str(exe)}
    (build / "original.out").write_text(ref.stdout)
    (build / f"{backend}.out").write_text(new.stdout)
    if ref.returncode != new.returncode:
        verdict.reason = (f"exit status {new.returncode} of the modern program, {ref.returncode} of the original"
                          + (f": {new.stderr.strip().splitlines()[-1]}" if new.stderr.strip() else ""))
        return verdict
    (build / "original.err").write_text(ref.stderr)
    (build / f"{backend}.err").write_text(new.stderr)
    cmp = compared(new)
    if not cmp.matched:
        # before the port is blamed, the original a few more times with other heap fillings:
        # ParRes' stencil-stdpar printed the same wrong norm in its first four runs and
        # 'Solution validates' in the next one (it reads memory it never set)
        again, same = original_again([{"MALLOC_PERTURB_": v} for v in ("1", "255", "42")][:3 if ref.seconds < 5 else 1]
                                     + [{}], "check-")
        if ref.returncode != again.returncode or not same.matched:
            verdict = ProgramVerdict(backend, False, code="original-nondeterministic", original_seconds=ref.seconds)
            verdict.reason = ("the original program's own output changes from run to run (seen when the modern "
                              f"program's differed: {same.describe()}): it reads memory it never set, so comparing "
                              "outputs proves nothing")
            return verdict
    verdict.comparison = cmp
    verdict.passed = cmp.matched and (cmp.numbers_compared > 0 or not cmp.masked)
    verdict.reason = "" if verdict.passed else cmp.describe()
    if cmp.matched and not verdict.passed:  # a clock, a rate: the original's output proves nothing
        verdict.code = "original-nondeterministic"
        verdict.reason = (f"every number the program prints ({cmp.masked}) changes from run to run and with the "
                          "original's speed (timings, clocks): nothing is left to compare")
    return verdict


def cmd_program(args) -> int:
    """``port-fortran program FILE``: write the hybrid port of the main program in FILE to
    OUT/<program>/, prove it on each backend, print one line per backend. Exit 0 when the
    outputs agree on every backend, 1 otherwise, 2 on bad input."""
    import json
    import shlex

    from ..fortran import parse_file
    from ..config import parse_defines
    from ..records import TranslationRefused
    from ..translate import write_port
    from ..translate.hybrid import hybrid_port
    from .commands import _backends

    src = Path(args.source)
    if not src.is_file():
        raise UserError(f"{src}: no such file (give the Fortran file holding the main program)")
    include, defines = list(args.include or []), parse_defines(args.define or [])
    fflags = shlex.split(getattr(args, "fflags", None) or "")
    sf = parse_file(str(src), include_dirs=tuple(include), defines=defines, fflags=fflags)
    if not sf.program_units:
        raise UserError(f"{src}: no main program found" + (f" ({sf.errors[0]})" if sf.errors else ""))
    prog = sf.program_units[0]
    try:
        port = hybrid_port(prog, sf, None, text=src.read_text(errors="replace"))
    except TranslationRefused as exc:
        d = exc.diagnostics[0]
        print(f"{prog.name}: not ported: {d.file or src}:{d.line} [{d.code}] {d.message}")
        return 1
    out = Path(args.out) / prog.name
    write_port(port, out)
    h = port.hybrid
    print(f"{prog.name}: hybrid port, {len(h['outlined'])} of {h['nests']} loop nests as Kokkos kernels -> {out}")
    ok = True
    verdicts = {}
    for b in _backends(args.backends):
        v = prove_program(src, out, b, other_sources=[Path(x) for x in args.with_sources], include_dirs=include,
                          defines=defines, args=shlex.split(args.args), stdin=Path(args.stdin) if args.stdin else None,
                          inputs=[Path(x) for x in args.input], ignore=args.ignore, rtol=args.rtol or DEFAULT_RTOL,
                          fflags=fflags)
        ok = ok and v.passed
        how = v.comparison.describe() if v.passed and v.comparison else v.reason
        ran = ", ".join(f"{o['entry']} x{v.calls.get(o['entry'], 0)}" for o in h["outlined"])
        print(f"{prog.name} [{b}] {'matched' if v.passed else 'NOT matched'}: {how}; "
              f"{v.original_seconds:.3g} s original, {v.modern_seconds:.3g} s modern; kernels called: {ran}")
        verdicts[b] = {"passed": v.passed, "reason": v.reason, "original_s": v.original_seconds, "calls": v.calls,
                       "modern_s": v.modern_seconds,
                       "comparison": None if v.comparison is None else {
                           k: getattr(v.comparison, k) for k in ("matched", "lines_compared", "numbers_compared",
                                                                 "max_rel_err", "first_difference", "ignored")}}
    (out / "verdict.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    return 0 if ok else 1


__all__ = ["cmd_program", "compare_output", "tokens", "OutputComparison", "prove_program", "ProgramVerdict", "run_program",
           "compile_fortran", "fortran_flags"]
