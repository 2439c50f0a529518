"""Batch runs from a manifest, and the model comparison.

``port-fortran batch MANIFEST [--executor local|parsl] [--workers N] [--out DIR]``

The manifest (YAML) lists what to port and where to run it; relative paths are relative to
the manifest's directory::

    sources: [src/, "legacy/**/*.f"]        # files, directories, globs (required)
    include: [src/include]                  # include directories (-I)
    defines: {USE_MPI: "0"}                 # or ["USE_MPI=0"]           (-D)
    fflags: -fno-range-check                # extra gfortran flags for the originals (--fflags)
    kernels: [daxpy, dgemv]                 # only these (default: every kernel found)
    backends: [serial, openmp]
    models: [rules]                         # a fallback chain, e.g. [rules, openai:gpt-4o-mini]
    budget: {max_cost: 5.00}                # USD for the whole batch
    executor: parsl                         # local (default) | parsl
    workers: 8                              # kernels at once (default 1; per node for parsl)
    site:                                   # parsl settings, or the path of a YAML file holding them
      provider: slurm
      partition: cpu
      account: proj123
      walltime: "02:00:00"
      nodes_per_block: 1
      max_blocks: 4
      cores_per_worker: 4
      worker_init: module load gcc kokkos
    out: batch-out
    config: {debug_rounds: 1, threads: 8}   # any other run setting (see port_fortran.config)

Every kernel is one call of the pipeline's ``port_kernel(job)`` on the executor; a kernel
that fails, or whose worker dies, is recorded as such and never stops the others. The run
id is derived from the manifest's path, so running the same manifest again resumes: kernels
already verified (or refused, which is deterministic) are skipped, the others run again.

``port-fortran compare --models A,B,C SRC...`` runs the same kernels through each model
(one run per model in one database) and prints one table: success rate, median speedup per
backend, tokens and cost per model; also written to ``compare.md`` and ``compare.json``.
"""
from __future__ import annotations

import glob
import hashlib
import importlib
import json
import re
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ..config import Config, load_file, parse_defines, parse_fflags
from ..errors import UserError
from ..reports.db import RunDB
from .executors import KINDS, Failure, check_site, make_executor, run_all

MANIFEST_KEYS = ("sources", "include", "defines", "fflags", "kernels", "backends", "models", "budget", "executor",
                 "workers", "site", "out", "run_id", "config")
#: kernel statuses a re-run does not repeat
SKIP_ON_RERUN = ("verified", "refused")
KERNEL_FN = "port_fortran.pipeline.graph:port_kernel"


# --------------------------------------------------------------------------- manifest

@dataclass
class Manifest:
    path: Path
    sources: list[str]  # resolved files and directories
    config: Config
    executor: str = "local"
    workers: Optional[int] = None
    site: dict = field(default_factory=dict)
    out: Path = Path("batch-out")
    run_id: str = ""
    base_dir: Path = Path(".")


def _key_err(path: Path, key: str, msg: str) -> UserError:
    return UserError(f"{path}: key '{key}': {msg}")


def _str_list(path: Path, key: str, v: Any) -> list[str]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise _key_err(path, key, f"expected a list of strings, got {v!r}")
    return [x.strip() for x in v]


def _resolve_sources(path: Path, base: Path, items: list[str]) -> list[str]:
    out: list[str] = []
    for i, s in enumerate(items):
        p = Path(s).expanduser()
        full = p if p.is_absolute() else base / p
        if any(c in s for c in "*?["):
            hits = sorted(glob.glob(str(full), recursive=True))
            if not hits:
                raise _key_err(path, f"sources[{i}]", f"{s!r} matches no file")
            out.extend(hits)
        elif full.exists():
            out.append(str(full))
        else:
            raise _key_err(path, f"sources[{i}]", f"{s!r} does not exist (relative paths are relative to "
                                                  f"{base})")
    return out


def batch_run_id(manifest_path: Path) -> str:
    """A run id that stays the same for the same manifest file, so a re-run resumes."""
    p = Path(manifest_path).resolve()
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", p.stem)[:40]
    return f"batch-{stem}-{hashlib.sha1(str(p).encode()).hexdigest()[:8]}"


def load_manifest(path: str | Path, *, executor: Optional[str] = None, workers: Optional[int] = None,
                  out: Optional[str] = None) -> Manifest:
    """Read and validate a manifest; flags given on the command line win over its keys."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such manifest file")
    data = load_file(path)
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping of keys (sources, backends, models, ...) at the top level")
    for key in data:
        if key not in MANIFEST_KEYS:
            raise _key_err(path, key, f"unknown key (known: {', '.join(MANIFEST_KEYS)})")
    base = path.resolve().parent
    if "sources" not in data:
        raise _key_err(path, "sources", "missing: list the Fortran files, directories or globs to port")
    sources = _resolve_sources(path, base, _str_list(path, "sources", data["sources"]))

    cfg_in: dict[str, Any] = {}
    extra = data.get("config") or {}
    if not isinstance(extra, dict):
        raise _key_err(path, "config", f"expected a mapping of run settings, got {extra!r}")
    for k in ("executor", "jobs", "include_dirs", "defines", "fflags", "kernels", "backends", "models", "max_cost"):
        if k in extra:
            raise _key_err(path, f"config.{k}", "set this at the top level of the manifest")
    try:  # the run settings alone first, so an error names them as config.<key>
        Config.from_dict(dict(extra))
    except UserError as exc:
        raise UserError(f"{path}: {exc}".replace("configuration: ", "").replace("key '", "key 'config.", 1))
    cfg_in.update(extra)
    if "include" in data:
        cfg_in["include_dirs"] = [str(base / d) if not Path(d).is_absolute() else d
                                  for d in _str_list(path, "include", data["include"])]
    if "defines" in data:
        d = data["defines"]
        if isinstance(d, list):
            try:
                cfg_in["defines"] = parse_defines([str(x) for x in d])
            except UserError as exc:
                raise _key_err(path, "defines", str(exc))
        elif isinstance(d, dict):
            cfg_in["defines"] = {str(k): "" if v is None else str(v) for k, v in d.items()}
        else:
            raise _key_err(path, "defines", "expected a mapping NAME: VALUE or a list of 'NAME=VALUE'")
    if "fflags" in data:
        cfg_in["fflags"] = parse_fflags(data["fflags"], "fflags", str(path))
    for k in ("kernels", "backends", "models"):
        if k in data:
            cfg_in[k] = _str_list(path, k, data[k])
    if "budget" in data:
        b = data["budget"]
        if isinstance(b, (int, float)) and not isinstance(b, bool):
            b = {"max_cost": b}
        if not isinstance(b, dict) or set(b) - {"max_cost"}:
            raise _key_err(path, "budget", f"expected {{max_cost: USD}}, got {b!r}")
        cfg_in["max_cost"] = b.get("max_cost")
    try:
        config = Config.from_dict(cfg_in)
    except UserError as exc:
        raise UserError(f"{path}: {exc}".replace("configuration: ", ""))

    ex = executor or data.get("executor", "local")
    if ex not in KINDS:
        raise _key_err(path, "executor", f"expected one of {', '.join(KINDS)}, got {ex!r}")
    w = workers if workers is not None else data.get("workers")
    if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
        raise _key_err(path, "workers", f"expected a whole number >= 1, got {w!r}")
    site = data.get("site") or {}
    if isinstance(site, str):
        site_path = Path(site) if Path(site).is_absolute() else base / site
        if not site_path.is_file():
            raise _key_err(path, "site", f"site file {site_path} does not exist")
        site = load_file(site_path)
        check_site(site, prefix="", file=str(site_path))
    else:
        check_site(site, prefix="site", file=str(path))
    if site and ex != "parsl":
        if executor:  # --executor local on the command line: run here, the site does not apply
            site = {}
        else:
            raise _key_err(path, "site", "site settings apply to 'executor: parsl' only")
    out_dir = Path(out) if out else (base / str(data.get("out", "batch-out")))
    run_id = data.get("run_id") or batch_run_id(path)
    if not isinstance(run_id, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]+", run_id):
        raise _key_err(path, "run_id", f"expected letters, digits and _.:- only, got {run_id!r}")
    config.executor = ex
    config.jobs = w or config.jobs
    return Manifest(path=path, sources=sources, config=config, executor=ex, workers=w, site=dict(site),
                    out=out_dir, run_id=run_id, base_dir=base)


# --------------------------------------------------------------------------- planning

def plan_jobs(db: RunDB, run_id: str, sources: list[str], config: Config, out_dir: Path,
              port_root: Optional[Path] = None) -> tuple[list, list[str]]:
    """The pipeline's own planning (``pipeline.commands.plan_jobs``: discover, parse, one
    job per kernel, files that do not parse recorded with file:line), then what a re-run
    needs: kernels already verified or refused in this run are skipped (returned as the
    second item), the others are reset to pending and run again. ``port_root`` puts the
    port directories somewhere else than ``out_dir`` (one tree per model in compare)."""
    from .commands import plan_jobs as pipeline_plan
    from .graph import port_dir_for
    from .stages import make_stages

    jobs, errors = pipeline_plan(list(sources), config, run_id, Path(out_dir), db, make_stages(config))
    for e in errors:
        print(f"port-fortran: {e}", file=sys.stderr)
    todo, skipped = [], []
    for job in jobs:
        if port_root is not None:
            job.port_dir = str(port_dir_for(port_root, job.rel_file, job.kernel))
        row = db.kernel(run_id, job.kernel_id)
        if row and row["status"] in SKIP_ON_RERUN:
            skipped.append(job.kernel_id)
            continue
        if row and row["status"] not in ("pending", "running"):
            # failed, error or budget-reached before: try it again
            db.set_kernel(run_id, job.kernel_id, status="pending", reason="", reason_code="")
        todo.append(job)
    return todo, skipped


def load_kernel_fn(spec: str = KERNEL_FN) -> Callable:
    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn)


# --------------------------------------------------------------------------- running

def _record_failure(db: RunDB, job, fail: Failure) -> None:
    """A call that raised or whose worker died: the kernel's error, with the reason."""
    row = db.kernel(job.run_id, job.kernel_id)
    if row and row["status"] in ("verified", "failed", "refused", "budget-reached", "error"):
        return  # the pipeline recorded its own outcome before the worker went away
    db.set_kernel(job.run_id, job.kernel_id, status="error", reason_code="executor-error",
                  reason=f"{job.rel_file}: kernel {job.kernel}: the worker failed: {fail}"[:1000],
                  finished=time.time())
    db.add_attempt(job.run_id, job.kernel_id, "finalize", False, detail=str(fail)[:2000])


def execute(db: RunDB, jobs: list, *, kind: str, workers: int, out_dir: Path, site: Optional[dict] = None,
            kernel_fn: Optional[Callable] = None, quiet: bool = False) -> list[tuple[Any, Any, Optional[Failure]]]:
    """Fan ``jobs`` out through the executor; every job ends recorded in the database."""
    fn = kernel_fn or load_kernel_fn()
    total = len(jobs)
    done = [0]

    def on_done(job, outcome, fail: Optional[Failure]) -> None:
        done[0] += 1
        if fail is not None:
            _record_failure(db, job, fail)
            status, why = "error", str(fail)
        else:
            status, why = getattr(outcome, "status", "?"), getattr(outcome, "reason", "")
        if not quiet:
            tail = f"  {why}" if why and status != "verified" else ""
            print(f"[{done[0]}/{total}] {job.kernel_id}: {status}{tail}"[:300], flush=True)

    if not jobs:
        return []
    with make_executor(kind, workers, run_dir=Path(out_dir) / "parsl-runinfo", **(site or {})) as ex:
        return run_all(ex, fn, jobs, on_done)


def summary_counts(db: RunDB, run_id: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for k in db.kernels(run_id):
        counts[k["status"]] = counts.get(k["status"], 0) + 1
    return counts


def run_batch(manifest: Manifest, *, kernel_fn: Optional[Callable] = None, quiet: bool = False,
              render: bool = True) -> tuple[str, dict[str, int]]:
    """Run (or resume) a manifest; returns (run_id, kernel counts by status)."""
    out = Path(manifest.out)
    out.mkdir(parents=True, exist_ok=True)
    db = RunDB.in_dir(out)
    try:
        run_id = db.start_run(manifest.run_id, command=f"port-fortran batch {manifest.path}",
                              config={"manifest": str(manifest.path.resolve()), "executor": manifest.executor,
                                      "workers": manifest.workers, "site": manifest.site,
                                      **manifest.config.to_dict()},
                              host=socket.gethostname())
        jobs, skipped = plan_jobs(db, run_id, manifest.sources, manifest.config, out)
        if not quiet:
            print(f"run {run_id}: {len(jobs)} kernel(s) to port through {manifest.executor}"
                  + (f", {len(skipped)} already verified or refused (skipped)" if skipped else ""), flush=True)
        status = "interrupted"
        try:
            execute(db, jobs, kind=manifest.executor, workers=manifest.workers or manifest.config.jobs or 1,
                    out_dir=out, site=manifest.site, kernel_fn=kernel_fn, quiet=quiet)
            if manifest.config.python:  # `python: true` in the manifest's config: one module of the run
                from ..bindings.commands import build_run_module

                build_run_module(db, run_id, out, manifest.config.python_module, manifest.config.backends)
            status = "finished"
        finally:
            db.finish_run(run_id, status)
        if render:
            from ..reports.render import render_reports
            paths = render_reports(db, run_id, out)
            if not quiet:
                print(f"report: {paths['html']}")
        return run_id, summary_counts(db, run_id)
    finally:
        db.close()


def _exit_code(counts: dict[str, int]) -> int:
    attempted = {s: n for s, n in counts.items() if s != "pending"}
    return 0 if attempted and set(attempted) == {"verified"} else 1


def _console():
    """A terminal's own width; 160 columns in logs (rich would assume 80)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=160)


def _print_counts(run_id: str, counts: dict[str, int]) -> None:
    from rich.table import Table

    t = Table(title=f"run {run_id}")
    t.add_column("status")
    t.add_column("kernels", justify="right")
    for s, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        t.add_row(s, str(n))
    _console().print(t)


def cmd_batch(args) -> int:
    from .commands import check_models

    manifest = load_manifest(args.manifest, executor=args.executor, workers=args.workers, out=args.out)
    check_models(manifest.config)  # a missing API key stops the batch before any work
    run_id, counts = run_batch(manifest, quiet=bool(getattr(args, "quiet", False)))
    _print_counts(run_id, counts)
    return _exit_code(counts)


# --------------------------------------------------------------------------- compare

def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def compare_table(db: RunDB, runs: dict[str, str]) -> list[dict]:
    """One row per model from its run in the database: kernels, verified, success rate,
    median speedup per backend (verified and timed kernels, kokkos-<backend> against the
    original Fortran serial), tokens and cost."""
    from ..reports.collect import collect_report

    rows = []
    for model, run_id in runs.items():
        rep = collect_report(db, run_id)
        s = rep["summary"]
        attempted = s["attempted"]
        rows.append({
            "model": model,
            "run_id": run_id,
            "kernels": s["kernels"],
            "attempted": attempted,
            "verified": s["verified"],
            "failed": s["failed"] + s["error"],
            "refused": s["refused"],
            "budget_reached": s["budget_reached"],
            "success_rate": (s["verified"] / attempted) if attempted else None,
            "median_speedup": {b["backend"]: b["median_speedup"] for b in rep["backends"]},
            "llm_calls": s["llm_calls"],
            "input_tokens": s["input_tokens"],
            "cached_tokens": s["cached_tokens"],
            "output_tokens": s["output_tokens"],
            "cost_usd": s["total_cost_usd"],
            "seconds": s["kernel_seconds_total"],
        })
    return rows


def _backends_of(rows: list[dict]) -> list[str]:
    out: list[str] = []
    for r in rows:
        for b in r["median_speedup"]:
            if b not in out:
                out.append(b)
    return out


def _cells(r: dict, backends: list[str]) -> list[str]:
    from ..reports.render import fmt_speedup, fmt_usd

    rate = "—" if r["success_rate"] is None else f"{100 * r['success_rate']:.0f}% ({r['verified']}/{r['attempted']})"
    return ([r["model"], rate, str(r["refused"]), str(r["failed"])]
            + [fmt_speedup(r["median_speedup"].get(b)) for b in backends]
            + [f"{r['input_tokens']:,}", f"{r['cached_tokens']:,}", f"{r['output_tokens']:,}", fmt_usd(r["cost_usd"])])


def _headers(backends: list[str]) -> list[str]:
    return (["model", "success", "refused", "failed"] + [f"speedup {b}" for b in backends]
            + ["input tokens", "cached tokens", "output tokens", "cost"])


def compare_markdown(rows: list[dict]) -> str:
    from ..reports.render import md_cell

    backends = _backends_of(rows)
    heads = _headers(backends)
    lines = ["# port-fortran model comparison", "",
             "Success: kernels verified on every requested backend / kernels attempted. Speedup: median over "
             "verified kernels of the original Fortran (serial) time divided by the port's time.", "",
             "| " + " | ".join(heads) + " |", "|" + "|".join(["---"] + ["---:"] * (len(heads) - 1)) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(md_cell(c) for c in _cells(r, backends)) + " |")
    return "\n".join(lines) + "\n"


def print_compare(rows: list[dict]) -> None:
    from rich.table import Table

    backends = _backends_of(rows)
    t = Table(title="model comparison")
    for i, h in enumerate(_headers(backends)):
        t.add_column(h, justify="left" if i == 0 else "right", no_wrap=(i == 0))
    for r in rows:
        t.add_row(*_cells(r, backends))
    _console().print(t)


def write_compare(db: RunDB, runs: dict[str, str], out_dir: Path) -> list[dict]:
    rows = compare_table(db, runs)
    out_dir = Path(out_dir)
    (out_dir / "compare.json").write_text(json.dumps({"models": rows}, indent=2, allow_nan=False) + "\n")
    (out_dir / "compare.md").write_text(compare_markdown(rows))
    return rows


def compare_run_id(model: str, sources: list[str]) -> str:
    key = "\n".join(sorted(str(Path(s).resolve()) for s in sources))
    return f"compare-{_safe(model)[:40]}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def run_compare(models: list[str], sources: list[str], base: Config, out_dir: Path, *,
                kind: str = "local", workers: int = 1, site: Optional[dict] = None,
                kernel_fn: Optional[Callable] = None, quiet: bool = False) -> tuple[dict[str, str], list[dict]]:
    """The same kernels through each model: one run per model (run id derived from the
    model and the sources, so re-running resumes), all jobs through one executor, then the
    comparison table. Each model gets the whole budget (``max_cost``) for itself."""
    import dataclasses

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    db = RunDB.in_dir(out_dir)
    try:
        runs: dict[str, str] = {}
        all_jobs = []
        for m in models:
            cfg = dataclasses.replace(base, models=[m])
            run_id = db.start_run(compare_run_id(m, sources), command=f"port-fortran compare --models {m}",
                                  config={"compare": models, **cfg.to_dict()}, host=socket.gethostname())
            runs[m] = run_id
            jobs, _ = plan_jobs(db, run_id, sources, cfg, out_dir, port_root=out_dir / _safe(m))
            all_jobs.extend(jobs)
        status = "interrupted"
        try:
            execute(db, all_jobs, kind=kind, workers=workers, out_dir=out_dir, site=site, kernel_fn=kernel_fn,
                    quiet=quiet)
            status = "finished"
        finally:
            for r in runs.values():
                db.finish_run(r, status)
        from ..reports.render import render_reports
        for m, r in runs.items():
            render_reports(db, r, out_dir / "reports" / _safe(m))
        return runs, write_compare(db, runs, out_dir)
    finally:
        db.close()


def cmd_compare(args) -> int:
    import dataclasses

    from ..config import from_args
    from .commands import check_models

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if len(models) < 1:
        raise UserError("--models: give at least one model, e.g. --models rules,openai:gpt-4o-mini")
    base = from_args(args)
    for m in models:  # each one must be usable on its own (checked before anything runs)
        check_models(dataclasses.replace(base, models=[m]))
    runs, rows = run_compare(models, list(args.sources), base, Path(args.out), kind=base.executor,
                             workers=base.jobs or 1, quiet=bool(args.quiet))
    print_compare(rows)
    print(f"table: {Path(args.out) / 'compare.md'} and compare.json; reports per model under "
          f"{Path(args.out) / 'reports'}/")
    return 0 if all(r["success_rate"] == 1.0 for r in rows) else 1
