"""``port-fortran SRC...``: port every kernel found, one graph per kernel, fanned out.

Discover files, parse them (files with syntax errors are recorded with file:line; the
others go on), make one job per kernel, run :func:`graph.port_kernel` over the executor
(``-j``), record everything in ``<out>/port-fortran.db``, print a summary, render the
reports. Exit 0 only if every attempted kernel verified; 1 otherwise; 4 on interrupt (the
run can be continued with ``--resume RUN_ID``).
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, Optional

from ..config import Config, from_args
from ..errors import UserError
from ..fortran.parse import discover_c
from .graph import port_dir_for, port_kernel
from .program_job import has_loops, program_covers
from .progress import Progress, table
from .stages import make_stages
from .state import FINISHED, KernelJob, KernelOutcome


def plan_jobs(sources: list[str], config: Config, run_id: str, out_dir: Path, db: Any,
              stages: Any) -> tuple[list[KernelJob], list[str]]:
    """Jobs for every kernel in ``sources``; file errors recorded in the DB (and returned)."""
    files = [Path(p) for p in stages.discover(sources)]
    if not files:
        raise UserError(f"no Fortran files found in {', '.join(sources)} "
                        "(looked for .f .for .f77 .F .f90 .F90 ...); give files or directories that hold them")
    root = Path(os.path.commonpath([str(f.resolve().parent) for f in files]))
    # include/ directories of the trees go after the user's -I (as `port-fortran list` does),
    # and the harness compiles the originals with the same list
    from ..fortran import default_include_dirs

    given = {os.path.abspath(d) for d in config.include_dirs}
    extra = [os.path.abspath(d) for d in default_include_dirs(sources) if os.path.abspath(d) not in given]
    if extra:
        config.include_dirs = list(config.include_dirs) + extra
    # modules USEd in one file and defined in another are looked for in everything given
    if not config.module_search:
        from ..fortran.commands import module_search_paths
        config.module_search = module_search_paths(sources, config.include_dirs)
    jobs: list[KernelJob] = []
    errors: list[str] = []
    wanted = set(config.kernels)
    found: set[str] = set()
    cfg_dict = config.to_dict()
    # every file as one program (calls across files and trees, module order, extents from
    # call sites): saved once for the workers, summarised in the run database
    from .stages import Stages

    # stages written before the program model (a parse method only) get the interface's own
    build = getattr(stages, "build_program", None) or (lambda *a, **kw: Stages.build_program(stages, *a, **kw))
    program = build(files, config.include_dirs, config.defines, routines=config.routines, fflags=config.fflags)
    lifted = lift_programs(program, files, root, out_dir, config)
    if lifted:  # the copies are files of the program too (the harness compiles and links them)
        program = build(files + [Path(p) for p, _names in lifted.values()], config.include_dirs,
                        config.defines, routines=config.routines, fflags=config.fflags)
        cfg_dict = config.to_dict()  # with the originals' directories on the include path
        for orig, (copy_path, names) in list(lifted.items()):
            made = {k.name: k for k in program.file(Path(copy_path)).kernels}
            inner = {k.name: k for k in program.file(Path(orig)).kernels if getattr(k, "host", None)}
            if program.file(Path(copy_path)).errors or any(
                    n not in made or _signature(made[n]) != _signature(inner[n]) for n in names):
                del lifted[orig]  # a copy not read as the original (a name typed otherwise): not used
    program.objects_dir = str((out_dir / "program" / "objects").resolve())
    c_files = discover_c(sources)
    if c_files:
        # C sources of the tree: what they define is linked where Fortran calls it
        from ..fortran.cpp import define_flags
        from ..harness.linking import c_symbols

        program.c_sources = [str(p.resolve()) for p in c_files]
        cflags = ["-O2", *define_flags(config.defines), *[f"-I{d}" for d in config.include_dirs], *config.fflags]
        program.c_defined, problems, program.c_needs = c_symbols(c_files, out_dir / "program" / "c-objects", cflags)
        errors.extend(problems)
    program_path = str(program.save(out_dir / "program" / "program.pickle").resolve())
    if hasattr(stages, "use_program"):
        stages.use_program(program)
    rel_of = {os.path.abspath(f): os.path.relpath(f.resolve(), root) for f in files}
    set_program = getattr(db, "set_program", None)
    if set_program is not None:
        set_program(run_id, program_report(program, rel_of))
    for f in files:
        rel = os.path.relpath(f.resolve(), root)
        sf = program.file(f)
        for e in sf.errors:
            msg = f"{f}:{e.line}: [{e.code}] {e.message}"
            errors.append(msg)
        if sf.errors:
            kid = f"{rel}:*"
            db.upsert_kernel(run_id, kid, rel, "(file)", sf.errors[0].line, None)
            first = sf.errors[0]
            db.set_kernel(run_id, kid, status="error", reason=f"{f}:{first.line}: {first.message}"[:1000],
                          reason_code=first.code or "syntax-error", finished=time.time())

        def add_job(k, kind: str = "routine", file: Optional[str] = None, alone=()) -> None:
            found.add(k.name)
            job = KernelJob(run_id=run_id, out_dir=str(out_dir), file=file or str(f), rel_file=rel, kernel=k.name,
                            config=cfg_dict, port_dir=str(port_dir_for(out_dir, rel, k.name)), program=program_path,
                            kind=kind, alone=list(alone), source=str(f) if file else "")
            db.upsert_kernel(run_id, job.kernel_id, rel, k.name, k.line_start, k.line_end)
            jobs.append(job)

        # main programs with loops (a main program can only be a hybrid port); their internal
        # procedures are ported and proven with them (nests outlined in place, the program's
        # run their proof), not as kernels of their own -- except those that use none of the
        # program's variables: proven alone, as procedures of the program made a module
        programs = [] if config.mode == "full" else getattr(sf, "program_units", [])
        covered = {u.name for u in programs if program_covers(u, sf)}
        copy_path, alone = lifted.get(os.path.abspath(f), (None, set()))
        for k in sf.kernels:
            if getattr(k, "host", None) and k.name in alone:  # lifted: asked for, or its program was
                add_job(k, file=copy_path)
                continue
            if wanted and k.name not in wanted:
                continue
            if getattr(k, "host", None) in covered:
                continue
            add_job(k)
        for k in programs:
            if wanted and k.name not in wanted:
                continue
            if k.name not in covered:
                if k.name in wanted:  # asked for by name: say why there is nothing to port
                    found.add(k.name)
                    kid = f"{rel}:{k.name}"
                    db.upsert_kernel(run_id, kid, rel, k.name, k.line_start, k.line_end)
                    u = next(iter(k.unsupported), None)
                    why = f"; the front end did not model line {u.line}: [{u.construct}] {u.reason}" if u else ""
                    db.set_kernel(run_id, kid, status="refused", reason_code="no-parallel-nest", mode="hybrid",
                                  reason=f"{f}:{k.line_start}: [no-parallel-nest] main program {k.name} has no loop "
                                         f"the IR models{why}"[:1000], finished=time.time())
                continue
            add_job(k, "program", alone=sorted(n for n in alone if any(
                q.name == n and q.host == k.name for q in sf.kernels)))
    if config.mode != "full":
        # a `programs:` entry naming no main program would be ignored in silence, and the
        # program then run without its arguments: say so
        mains = {u.name.lower() for f in files for u in getattr(program.file(f), "program_units", [])}
        for name in sorted(set(config.programs) - mains):
            errors.append(f"programs.{name}: no main program of that name in {', '.join(sources)} (main "
                          f"programs: {', '.join(sorted(mains)) or 'none'}); its settings are not used")
    missing = wanted - found
    if missing and not jobs and not errors:  # with unreadable files the names may be in them: recorded
        raise UserError(f"--kernel {', '.join(sorted(missing))}: not found in {', '.join(sources)}; "
                        "`port-fortran list SRC` shows the kernels")
    if missing:
        errors.append(f"--kernel {', '.join(sorted(missing))}: not found (the others go on)")
    return jobs, errors


def lift_programs(program: Any, files: list[Path], root: Path, out_dir: Path, config: Config) -> dict:
    """{original file: (its copy, names)}: for each file whose main program contains
    procedures with loops that use none of its variables, the copy of the file with the program made a
    module (``fortran/lift.py``), written under ``OUT/lifted/`` with the file's relative
    path, and the procedures it makes callable. The originals' directories go after the
    include path, so that the copy finds the headers its original includes by quotes."""
    from ..fortran import lift

    out: dict = {}
    for f in files:
        sf = program.file(f)
        for unit in getattr(sf, "program_units", []):
            asked = not config.kernels or unit.name in config.kernels  # a program asked for brings them
            names = [k for k in lift.liftable(sf, unit) if has_loops(k) and (asked or k.name in config.kernels)]
            if not names:
                continue
            try:
                text = lift.lifted_text(Path(f).read_text(errors="replace"), sf.form, unit, names)
            except OSError:
                text = None
            if text is None:
                continue
            dest = out_dir / "lifted" / os.path.relpath(f.resolve(), root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            out[os.path.abspath(f)] = (str(dest.resolve()), {k.name for k in names})
            break  # one main program per file
    dirs = [str(Path(p).parent) for p in out]
    config.include_dirs = list(config.include_dirs) + [d for d in dict.fromkeys(dirs) if d not in config.include_dirs]
    return out


def _signature(k) -> list:
    """What a procedure's names mean: each argument's and local's type, rank and constant
    value -- the same in a lifted copy as in the original, or the copy is not used."""
    def one(v):
        return (v.name, str(v.ftype), len(v.dims or []), repr(getattr(v, "parameter", None)))
    return sorted(one(v) for v in list(k.args) + list(k.locals.values()))


def program_report(program: Any, rel_of: dict[str, str]) -> dict:
    """The program for the run database and report.json: the whole program's summary and,
    per kernel id, its callers, callees and the externals it reaches."""
    rel = lambda p: rel_of.get(os.path.abspath(p), p)  # noqa: E731
    data = program.summary(rel)
    data["routines_by_kernel"] = {}
    for r in program.all_routines():
        info = program.routine_json(r)
        for c in info["callees"]:
            if "file" in c:
                c["file"] = rel(c["file"])
        for c in info["callers"]:
            c["file"] = rel(c["file"])
        data["routines_by_kernel"][f"{rel(r.file)}:{r.name}"] = info
    return data


def _executor(config: Config, workers: int, out_dir: Path):
    try:
        from .executors import make_executor  # helper module for local pools and Parsl

        return make_executor(config.executor, workers, run_dir=out_dir / "parsl-runinfo")
    except ImportError:
        if config.executor == "parsl":
            raise UserError("--executor parsl: Parsl support is not available in this installation")
        return cf.ProcessPoolExecutor(max_workers=workers)


def run_jobs(jobs: list[KernelJob], config: Config, db: Any, run_id: str, quiet: bool) -> list[KernelOutcome]:
    """Every job through port_kernel; in this process for -j 1, else over the executor."""
    outcomes: list[KernelOutcome] = []
    with Progress(db, run_id, quiet=quiet) as prog:
        if config.jobs <= 1 and config.executor == "local":
            for job in jobs:
                outcomes.append(port_kernel(job, on_stage=lambda st, b, kid=job.kernel_id: prog.mark(kid, st, b)))
                prog.update(force=True)
            return outcomes
        ex = _executor(config, config.jobs, Path(jobs[0].out_dir) if jobs else Path('.'))
        try:
            futs = {ex.submit(port_kernel, job): job for job in jobs}
            pending = set(futs)
            while pending:
                done, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fu in done:
                    job = futs[fu]
                    try:
                        outcomes.append(fu.result())
                    except Exception as exc:  # a worker died: recorded, the batch goes on
                        reason = f"worker failed: {type(exc).__name__}: {exc}"
                        db.set_kernel(run_id, job.kernel_id, status="error", reason=reason[:1000],
                                      reason_code="worker-error", finished=time.time())
                        outcomes.append(KernelOutcome(job.kernel_id, "error", reason, "worker-error"))
                prog.update()
        finally:
            shutdown = getattr(ex, "shutdown", None)
            if shutdown:
                shutdown(wait=True, cancel_futures=True) if isinstance(ex, cf.Executor) else shutdown()
    return outcomes


def _resume_config(db: Any, run_id: str, args: Any, out: Path) -> Config:
    run = db.run(run_id)
    if run is None:
        known = [r["run_id"] for r in db.conn.execute("SELECT run_id FROM runs ORDER BY started DESC LIMIT 5")]
        raise UserError(f"--resume {run_id}: no such run in {out / 'port-fortran.db'}"
                        f"{' (recent runs: ' + ', '.join(known) + ')' if known else ''}; "
                        "give the same --out as the interrupted run")
    import json

    cfg = Config.from_dict(json.loads(run["config"] or "{}"))
    if getattr(args, "jobs", None):
        cfg.jobs = args.jobs
    if getattr(args, "max_cost", None) is not None:
        cfg.max_cost = args.max_cost
    if getattr(args, "quiet", False):
        cfg.quiet = True
    if getattr(args, "executor", None):
        cfg.executor = args.executor
    return cfg


def _term_as_interrupt():
    """SIGTERM (batch schedulers, `kill`) ends the run like Ctrl-C: marked interrupted, resumable."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise KeyboardInterrupt()

    return signal.signal(signal.SIGTERM, handler)


def check_tools(config: Config) -> None:
    """Fail before any work (exit 3) when a tool every kernel needs is missing."""
    from ..build_runner.cmake import cmake_info
    from ..build_runner.kokkos import find_install
    from ..build_runner.toolchain import gfortran_path
    from ..errors import ToolMissing

    if gfortran_path() is None:
        raise ToolMissing("gfortran not found on PATH (or in FC); `port-fortran doctor` says how to get it")
    cmake_info()  # raises ToolMissing naming the fix
    missing = [b for b in config.backends if find_install(b) is None]
    if missing:
        raise ToolMissing(f"no Kokkos install with the {', '.join(missing)} backend(s): run `port-fortran kokkos "
                          f"install --backends {','.join(missing)}` or set Kokkos_ROOT (see `port-fortran doctor`)")


def check_models(config: Config) -> None:
    """Fail before any work when an LLM of the chain cannot be reached at all (no API key)."""
    from ..agents.llm import make_chat_model, parse_chain

    for spec in parse_chain(config.models, config.base_url):
        if spec.is_llm:
            make_chat_model(spec, config.llm)  # raises UserError naming the missing key


def summary(db: Any, run_id: str, stream=None) -> None:
    from rich.console import Console

    from ..agents.ledger import totals

    con = Console(file=stream or sys.stdout, width=160)
    con.print(table(db, run_id, title=f"port-fortran run {run_id}"))
    t = totals(db, run_id)["total"]
    if t["calls"]:
        con.print(f"LLM: {t['calls']} calls, {t['input_tokens']} input ({t['cached_tokens']} cached) / "
                  f"{t['output_tokens']} output tokens, ${t['cost_usd']:.4f}")


def cmd_run(args: Any) -> int:
    from ..reports.db import RunDB

    out = Path(getattr(args, "out", None) or "port-fortran-out")
    out.mkdir(parents=True, exist_ok=True)
    db = RunDB.in_dir(out)
    try:
        if getattr(args, "resume", None):
            config = _resume_config(db, args.resume, args, out)
            run_id = db.start_run(args.resume)
        else:
            config = from_args(args)
            run_id = db.start_run(command=" ".join(sys.argv), config=config.to_dict(), host=socket.gethostname())
        check_models(config)
        if not config.stages_factory:
            check_tools(config)
        stages = make_stages(config)
        jobs, errors = plan_jobs(list(args.sources), config, run_id, out, db, stages)
        for e in errors:
            print(f"port-fortran: {e}", file=sys.stderr)
        todo = []
        more_budget = bool(getattr(args, "resume", None)) and getattr(args, "max_cost", None) is not None
        for j in jobs:
            row = db.kernel(run_id, j.kernel_id)
            if row and row["status"] == "budget-reached" and more_budget:
                # resumed with a new --max-cost: kernels stopped by the old budget get another go
                db.set_kernel(run_id, j.kernel_id, status="pending", reason="", reason_code="")
            elif row and row["status"] in FINISHED:
                continue
            todo.append(j)
        if not config.quiet:
            print(f"run {run_id}: {len(jobs)} kernel(s), {len(todo)} to do, backends {','.join(config.backends)}, "
                  f"model {','.join(config.models)}", file=sys.stderr)
        old_term = _term_as_interrupt()
        try:
            run_jobs(todo, config, db, run_id, config.quiet)
        except KeyboardInterrupt:
            db.finish_run(run_id, "interrupted")
            print(f"port-fortran: interrupted; continue with: port-fortran {' '.join(args.sources)} "
                  f"--out {out} --resume {run_id}", file=sys.stderr)
            return 4
        finally:
            if old_term is not None:
                signal.signal(signal.SIGTERM, old_term)
        if config.python:
            from ..bindings.commands import build_run_module

            build_run_module(db, run_id, out, config.python_module, config.backends)
        db.finish_run(run_id, "finished")
        summary(db, run_id)
        _render(db, run_id, out)
        ks = db.kernels(run_id)
        attempted = [k for k in ks]
        return 0 if attempted and all(k["status"] == "verified" for k in attempted) else 1
    finally:
        db.close()


def _render(db: Any, run_id: str, out: Path) -> Optional[dict]:
    try:
        from ..reports.render import render_reports
    except ImportError:
        return None
    try:
        paths = render_reports(db, run_id, out)
        for p in (paths or {}).values():
            print(f"report: {p}")
        return paths
    except Exception as exc:  # the run's results are in the DB; `port-fortran report` can retry
        print(f"port-fortran: warning: report rendering failed ({type(exc).__name__}: {exc}); "
              f"retry with `port-fortran report {out}`", file=sys.stderr)
        return None
