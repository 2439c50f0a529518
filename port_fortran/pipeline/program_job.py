"""A main program of the run: a hybrid port proven by running the program.

A main program cannot be driven with random inputs as a routine is: what it computes is
what it prints. ``port-fortran SRC`` takes each main program that has loops as one more
kernel of the run (kind ``program``) and, instead of the per-kernel graph:

1. writes its hybrid port (``translate.hybrid``): the program stays Fortran, each loop nest
   that can run in parallel becomes a Kokkos kernel it calls;
2. builds the original program from the files of the tree it needs (the modules it uses
   and the routines it calls, transitively, found by the program model) and the modern one,
   runs both the same way (the configuration's ``programs.<name>``: arguments, input files,
   standard input, lines to ignore, tolerance) and compares every number printed
   (``harness.program_proof``), on every backend of the run;
3. counts the calls of each kernel in the modern run (``PF_CALL_COUNTS``): a nest the run
   never reached is not proven by it, so it goes back to Fortran and the port is made and
   proven again without it (reported as kept, code ``not-exercised``); a run that reaches
   none is refused ``program-not-exercised``, naming the configuration key to set.

The kernel's row in the run database gets the status, the hybrid summary, the patterns of
the kernels kept and one verdict per backend, as any kernel's.
"""
from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path
from typing import Any, Optional

from ..config import Config
from ..errors import ToolMissing, UserError
from .state import KernelJob, KernelOutcome

MAX_ROUNDS = 4  # hybrid ports made for one program, each without the nests the last run missed


def has_loops(k) -> bool:
    from ..fortran import ir

    return any(isinstance(s, (ir.Do, ir.DoWhile)) for s in ir.walk(k.body))


def program_covers(k, sf) -> bool:
    """Is the main program ``k`` a program job: it, or an internal procedure of it, has loops."""
    return has_loops(k) or any(has_loops(r) for r in getattr(sf, "kernels", []) if r.host == k.name)


def record_internals(db, job: KernelJob, sf, k, info: Optional[dict], outcome: KernelOutcome,
                     calls: Optional[dict] = None) -> None:
    """One row per internal procedure of the program: verified when a nest of it runs as a
    kernel the program's proven run called, else the reason it is not."""
    from ..translate.hybrid import summary

    status, why = outcome.status, outcome.reason
    for r in [x for x in getattr(sf, "kernels", []) if x.host == k.name and x.name not in job.alone]:
        kid = f"{job.rel_file}:{r.name}"
        db.upsert_kernel(job.run_id, kid, job.rel_file, r.name, r.line_start, r.line_end)
        mine = [o for o in (info or {}).get("outlined", []) if o.get("routine") == r.name]
        ran = [o for o in mine if (calls or {}).get(o["entry"], 0) > 0]
        if status == "verified" and ran:
            patterns = sorted({p for o in ran for p in o.get("patterns", [])})
            sub = summary({**info, "outlined": ran, "kept": [x for x in info.get("kept", [])
                                                              if x.get("message", "").startswith(f"in {r.name}:")]})
            db.set_kernel(job.run_id, kid, status="verified", reason="", reason_code="", mode="hybrid", model="rules",
                          patterns=patterns, hybrid=sub, port_dir=job.port_dir, finished=time.time())
            db.add_attempt(job.run_id, kid, "finalize", True,
                           f"internal procedure of program {k.name}: {len(ran)} nest(s) run as Kokkos kernels in the "
                           f"program's hybrid port, proven by its run ({', '.join(o['entry'] for o in ran)})")
            continue
        if not has_loops(r):
            code, reason = "no-parallel-nest", f"{sf.path}:{r.line_start}: [no-parallel-nest] internal procedure " \
                                               f"{r.name} of program {k.name} has no loop"
        elif status == "verified":
            code = "not-exercised" if mine else "no-parallel-nest"
            why_kept = [x for x in (info or {}).get("kept", []) if x.get("message", "").startswith(f"in {r.name}:")]
            first = f" (line {why_kept[0]['line']}: [{why_kept[0]['code']}] " \
                    f"{why_kept[0]['message'][len(r.name) + 4:][:300]})" if why_kept else ""
            reason = (f"{sf.path}:{r.line_start}: [{code}] internal procedure {r.name} of program {k.name}: "
                      + ("the program's run never called its kernels" if mine else
                         "none of its loop nests runs as a Kokkos kernel in the program's hybrid port") + first)
        else:
            code = outcome.reason_code or "program-not-proven"
            reason = f"{sf.path}:{r.line_start}: internal procedure {r.name} of program {k.name}, ported and proven " \
                     f"with it: {why}"
        db.set_kernel(job.run_id, kid, status="refused" if status != "failed" else "failed", reason=reason[:1000],
                      reason_code=code, mode="hybrid", port_dir=job.port_dir, finished=time.time())


def program_sources(program, k) -> list[str]:
    """The files the original program is built from besides its own, modules first: files
    defining the modules it uses and the routines it calls, transitively; files holding
    another main program are left out (their routines then come up undefined at link); C
    sources of the tree defining routines that no Fortran file does come last, with the C
    sources defining what those leave undefined."""
    own = os.path.abspath(k.file)
    files: list[str] = []
    # the program is no routine of the program model: its own calls are resolved here, the
    # rest of the call graph is the model's (Program.reaches)
    externals: list[str] = []
    for name in dict.fromkeys(getattr(k, "calls", []) or []):
        c = program.resolve_from(k, name)
        if c.routine is None:
            externals.append(name)
            continue
        for x in [c] + program.reaches(c.routine):
            if x.routine is None:
                externals.append(x.name)
            elif x.routine.file not in files:
                files.append(x.routine.file)
    # what no Fortran file defines, a C source of the tree may (a timer)
    c_files = program.c_closure([f for f in dict.fromkeys(program.c_file_of(n) for n in externals) if f])
    order = program.compile_order([own] + files)
    out = []
    for f in order:
        if os.path.abspath(f) == own:
            continue
        sf = program.files.get(f)
        if sf is not None and getattr(sf, "program_units", None):
            continue
        out.append(program.given.get(f, f))
    return out + c_files


def _refuse(db, job: KernelJob, code: str, reason: str, t0: float, hybrid: Optional[dict] = None,
            status: str = "refused") -> KernelOutcome:
    db.set_kernel(job.run_id, job.kernel_id, status=status, reason=reason[:1000], reason_code=code, mode="hybrid",
                  hybrid=hybrid or {}, port_dir=job.port_dir, finished=time.time())
    db.add_attempt(job.run_id, job.kernel_id, "finalize", False, reason[:2000])
    return KernelOutcome(job.kernel_id, status, reason, code, "rules", job.port_dir, seconds=time.monotonic() - t0)


def port_program(job: KernelJob, config: Config, db, program) -> KernelOutcome:
    """The hybrid port of the main program ``job.kernel``, proven by running it (module doc);
    its internal procedures get their rows from the same proof."""
    sf = program.file(job.file)
    units = [u for u in getattr(sf, "program_units", []) if u.name == job.kernel]
    if not units:
        raise UserError(f"{job.file}: main program '{job.kernel}' not found")
    seen: dict = {"info": None, "calls": {}}
    outcome = _prove(job, config, db, program, sf, copy.deepcopy(units[0]), seen)
    record_internals(db, job, sf, units[0], seen["info"], outcome, seen["calls"])
    return outcome


def _prove(job: KernelJob, config: Config, db, program, sf, k, seen: dict) -> KernelOutcome:
    """The program's port and proof (``seen`` gets the hybrid info and the call counts)."""
    from ..build_runner.sandbox import Limits
    from ..harness.program_proof import DEFAULT_RTOL, prove_program
    from ..records import TranslateOptions, TranslationRefused
    from ..translate import write_port
    from ..translate.hybrid import hybrid_port, summary

    t0 = time.monotonic()
    settings = config.programs.get(k.name.lower(), {})
    where = f"{job.file}:{k.line_start}"
    if k.unsupported and not k.body:
        u = k.unsupported[0]
        return _refuse(db, job, u.construct or "unsupported-construct",
                       f"{job.file}:{u.line or k.line_start}: [{u.construct}] {u.reason}", t0)
    text = Path(job.file).read_text(errors="replace")
    port_dir = Path(job.port_dir)
    inputs = [Path(x) for x in settings.get("inputs", [])]
    missing = [str(p) for p in inputs if not p.is_file()]
    stdin = Path(settings["stdin"]) if settings.get("stdin") else None
    if stdin is not None and not stdin.is_file():
        missing.append(str(stdin))
    if missing:
        return _refuse(db, job, "config-error", f"{where}: programs.{k.name}: no such file: {', '.join(missing)}", t0,
                       status="error")
    others = [Path(f) for f in program_sources(program, k)]
    limits = Limits(wall_s=config.limits.run_s, mem_mb=config.limits.memory_mb)
    run_kw = dict(other_sources=others, include_dirs=list(config.include_dirs), defines=dict(config.defines),
                  args=list(settings.get("args", [])), stdin=stdin, inputs=inputs,
                  ignore=list(settings.get("ignore", [])), rtol=settings.get("rtol", DEFAULT_RTOL),
                  atol=settings.get("atol", 0.0),
                  threads=config.threads or 2, limits=limits, fflags=list(config.fflags))
    how = (f"arguments {' '.join(run_kw['args'])!r}" if run_kw["args"] else "no arguments") + \
        (f", inputs {', '.join(p.name for p in inputs)}" if inputs else "")
    serial: set[int] = set()
    unexercised: list[dict] = []
    # until the run reaches every outlined nest: a nest taken back to Fortran can let the
    # loop around it become the nest (at most MAX_ROUNDS ports; coverage is read on the first
    # backend, the others run once it holds)
    for attempt in range(MAX_ROUNDS):
        options = TranslateOptions(serial_loops=set(serial))
        db.set_kernel(job.run_id, job.kernel_id, status="running")
        try:
            port = hybrid_port(k, sf, options, text=text, program=program)
        except TranslationRefused as exc:
            d = exc.diagnostics[0]
            if attempt and unexercised:
                return _refuse(db, job, "program-not-exercised", _not_exercised(job, k, unexercised, how, True), t0)
            return _refuse(db, job, d.code, f"{d.file or job.file}:{d.line}: [{d.code}] {d.message}", t0)
        info = port.hybrid
        seen["info"] = info
        for kept in info.get("kept", []):  # nests taken back to Fortran because the run never reached them
            if kept.get("line") in serial:
                kept["code"] = "not-exercised"
                kept["message"] = (f"the loop nest of line {kept['line']} stays Fortran: the program's run ({how}) "
                                   "never reached it, so the run could not prove a port of it")
        port.hybrid = info
        port_dir.mkdir(parents=True, exist_ok=True)
        write_port(port, port_dir)
        (port_dir / "hybrid.json").write_text(json.dumps(info, indent=1) + "\n")
        hsum = summary(info)
        db.set_kernel(job.run_id, job.kernel_id, mode="hybrid", hybrid=hsum, model="rules")
        db.add_attempt(job.run_id, job.kernel_id, "translate", True,
                       f"hybrid port of program {k.name}: {len(info['outlined'])} of {info['nests']} loop nests as "
                       "Kokkos kernels")
        verdicts = []
        for bi, b in enumerate(config.backends):
            if bi == 1 and attempt + 1 < MAX_ROUNDS and _unreached(verdicts[0], info):
                break  # port again first
            tb = time.monotonic()
            try:
                v = prove_program(Path(job.file), port_dir, b, **run_kw)
            except ToolMissing:
                raise
            except UserError as exc:
                msg = str(exc)
                head = msg.split("\n", 1)[0]
                # compile_fortran names the file that failed: the hybrid copy and its module
                # live in the port directory; the original's files and its link do not
                modern = head.startswith((str(port_dir.resolve()), str(port_dir))) or "modern program" in head
                code = "modern-build-failed" if modern else "original-build-failed"
                db.add_attempt(job.run_id, job.kernel_id, "run", False, msg[:2000], backend=b,
                               seconds=time.monotonic() - tb)
                return _refuse(db, job, code, f"{where}: {msg}", t0, hsum, status="failed" if modern else "refused")
            verdicts.append(v)
            db.add_attempt(job.run_id, job.kernel_id, "run", v.passed, v.reason or "outputs agree", backend=b,
                           seconds=time.monotonic() - tb)
            if not v.passed:
                break
        first = verdicts[0]
        seen["calls"] = first.calls
        entries = {o["entry"]: o for o in info["outlined"]}
        missed = _unreached(first, info)
        if attempt + 1 < MAX_ROUNDS and first.passed and missed:
            unexercised = missed
            if len(missed) == len(entries):
                return _refuse(db, job, "program-not-exercised", _not_exercised(job, k, unexercised, how, True), t0,
                               hsum)
            serial |= {o["line"] for o in missed}
            continue
        break
    if verdicts and verdicts[0].passed and _unreached(verdicts[0], info):
        return _refuse(db, job, "program-not-exercised",
                       _not_exercised(job, k, _unreached(verdicts[0], info), how, False) + f" (after {MAX_ROUNDS} ports)",
                       t0,
                       summary(info))
    for v in verdicts:
        db.add_verdict(job.run_id, job.kernel_id, v.backend, v.passed, v.reason, _verdict_data(v))
    failed = [v for v in verdicts if not v.passed]
    if failed and failed[0].code in ("original-nondeterministic", "original-failed"):
        return _refuse(db, job, failed[0].code, f"{where}: {failed[0].reason}", t0, summary(info))
    patterns = sorted({p for o in info["outlined"] for p in o.get("patterns", [])})
    if failed or len(verdicts) < len(config.backends):
        v = failed[0] if failed else verdicts[-1]
        code = ("wrong-result" if v.comparison is not None and not v.comparison.matched else
                "modern-build-failed" if v.reason.startswith("the modern program does not build") else "run-error")
        reason = f"{where}: the modern program on {v.backend}: {v.reason}"
        db.set_kernel(job.run_id, job.kernel_id, patterns=patterns)
        return _refuse(db, job, code, reason, t0, hsum, status="failed")
    counts = ", ".join(f"{e} x{verdicts[0].calls.get(e, 0)}" for e in entries)
    note = (f"program {k.name} proven by its run ({how}) on {', '.join(v.backend for v in verdicts)}: "
            f"{verdicts[0].comparison.describe() if verdicts[0].comparison else ''}; kernels called: {counts}")
    db.set_kernel(job.run_id, job.kernel_id, status="verified", reason="", reason_code="", patterns=patterns,
                  mode="hybrid", hybrid=hsum, port_dir=job.port_dir, finished=time.time())
    db.add_attempt(job.run_id, job.kernel_id, "finalize", True, note[:2000])
    (port_dir / "outcome.json").write_text(json.dumps(
        {"kernel_id": job.kernel_id, "status": "verified", "mode": "hybrid", "kind": "program", "note": note,
         "verdicts": [_verdict_data(v) for v in verdicts]}, indent=2, default=str))
    return KernelOutcome(job.kernel_id, "verified", "", "", "rules", job.port_dir, seconds=time.monotonic() - t0)


def _unreached(v, info: dict) -> list[dict]:
    """The outlined nests whose kernel the run never called."""
    return [o for o in info["outlined"] if v.calls.get(o["entry"], 0) == 0]


def _not_exercised(job: KernelJob, k, nests: list[dict], how: str, none: bool) -> str:
    """Why the run proves nothing about ``nests`` (``none``: they are all the ported nests)."""
    lines = ", ".join(str(o["line"]) for o in nests)
    return (f"{job.file}:{k.line_start}: [program-not-exercised] the run of program {k.name} ({how}) reached "
            f"{'none of its ported loop nests' if none else 'not all of its ported loop nests: not'} (lines {lines}), "
            f"so it proves nothing about them; say how to run it in the configuration: "
            f"programs: {{{k.name}: {{args: '...', inputs: [...]}}}}")


def _verdict_data(v: Any) -> dict:
    c = v.comparison
    return {"kind": "program", "backend": v.backend, "passed": v.passed, "reason": v.reason,
            "original_s": v.original_seconds, "modern_s": v.modern_seconds, "calls": v.calls,
            "comparison": None if c is None else {
                key: getattr(c, key) for key in ("matched", "lines_compared", "numbers_compared", "max_rel_err",
                                                 "first_difference", "ignored", "masked")}}


__all__ = ["port_program", "program_sources", "has_loops", "program_covers"]
