"""Put every routine of the real-code corpus through port-fortran and tabulate the outcome.

    PYTHONPATH=$PWD python bench/realcode/run_corpus.py -j 2                 # everything (resumes)
    PYTHONPATH=$PWD python bench/realcode/run_corpus.py --codes stream,livermore
    PYTHONPATH=$PWD python bench/realcode/run_corpus.py --units parres/dgemm --force
    PYTHONPATH=$PWD python bench/realcode/run_corpus.py --report-only      # tables from what ran
    PYTHONPATH=$PWD python bench/realcode/run_corpus.py --compile-check    # gfortran per unit file

One ``port-fortran run`` per unit (``corpus.yaml``) over the unit's files, its context files
and stubs (so cross-file work in the tool applies), backends serial+openmp, the rules model,
no timing and no optimizer, the code's ``-I``/``-D``. Each run has its own output
directory ``<out>/<code>/<unit>/`` (the tool's database, ports and reports, plus the
runner's ``unit.json``, ``scan.json`` and ``run.log``). A unit whose ``unit.json`` says
done is skipped unless ``--force``; a unit that was interrupted is resumed
(``--resume RUN_ID``). A watchdog ends a kernel that runs past ``--kernel-limit``
(the run is stopped, the kernel is recorded as ``error``/``kernel-timeout`` and the run
resumed without it) and a unit past ``--unit-limit``; a run that crashes is recorded and
the corpus goes on.

Routines are counted independently of the tool (``fscan.py``): every routine of every unit
file is a row, and one the tool never recorded is ``lost``, with the reason (the file's
parse error, a main program, an internal procedure). Results: ``results_<date>.md`` and
``results_<date>.json`` in ``--results-dir``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus as cp  # noqa: E402
import fscan  # noqa: E402
import speed  # noqa: E402

DEFAULT_OUT = cp.HERE / "out"
DEFAULT_SRC = cp.HERE / "src"
PARALLEL_PATTERNS = {"parallel_for", "mdrange", "reduce", "scan", "atomic", "team"}
STATUSES = ("verified", "refused", "failed", "error", "lost")
DB_NAME = "port-fortran.db"

# what the runner gives every port-fortran run (a YAML config file in the unit directory)
RUN_CONFIG = {"backends": ["serial", "openmp"], "models": ["rules"], "bench": False, "optimize": False}


class RunnerError(RuntimeError):
    pass


# ----------------------------------------------------------------------------- scanning


def scan_unit(code: cp.Code, unit: cp.Unit, src_root: Path) -> list[dict]:
    """Rows of the independent count for the unit's own files (no status yet)."""
    root = cp.code_root(src_root, code)
    incs = cp.include_dirs(code, src_root)
    defs = cp.unit_defines(code, unit)
    rows = []
    # the form gfortran reads the files in (the code's build may force it: -ffree-form)
    forms = [f for f in cp.unit_fflags(code, unit) if f in ("-ffree-form", "-ffixed-form")]
    fixed = (forms[-1] == "-ffixed-form") if forms else None
    for f in cp.unit_files(code, unit, src_root):
        rel = f.relative_to(root).as_posix()
        res = fscan.scan_file(f, name=rel, include_dirs=incs, defines=defs, cpp=code.cpp, fixed=fixed)
        for r in res.routines:
            d = r.to_dict()
            d["scan_notes"] = res.notes
            rows.append(d)
        if not res.routines and res.notes:
            rows.append({"file": rel, "name": None, "scan_notes": res.notes})
    return rows


# ----------------------------------------------------------------------------- running one unit


@dataclass
class UnitPlan:
    code: cp.Code
    unit: cp.Unit
    files: list[Path]  # own
    context: list[Path]  # context files and stubs
    out_dir: Path
    include_dirs: list[Path]
    defines: dict[str, Optional[str]]
    fflags: list[str]
    kernels: list[str] = field(default_factory=list)  # --kernel filter (only when there is context)
    src_root: Optional[Path] = None  # the materialised codes (inputs of `programs` are under them)
    bench_threads: Optional[int] = None  # --bench: time the verified ports at this many OpenMP threads

    @property
    def key(self) -> str:
        return f"{self.code.name}/{self.unit.name}"

    @property
    def sources(self) -> list[Path]:
        """What the tool is given: the unit's files and its context, except when the unit's
        own files hold no routine the tool could take as a kernel (a main program alone):
        then the context would only make the tool port other units' routines."""
        if self.context and not self.kernels:
            return list(self.files)
        return self.files + self.context

    def tool_root(self) -> Path:
        """The directory port-fortran makes its kernel ids relative to (plan_jobs)."""
        return Path(os.path.commonpath([str(p.resolve().parent) for p in self.sources]))


def plan_unit(code: cp.Code, unit: cp.Unit, src_root: Path, out_root: Path) -> UnitPlan:
    return UnitPlan(code, unit, cp.unit_files(code, unit, src_root), cp.unit_context(code, unit, src_root),
                    Path(out_root) / code.name / unit.name, cp.include_dirs(code, src_root),
                    cp.unit_defines(code, unit), cp.unit_fflags(code, unit), src_root=Path(src_root))


def tool_supports(flag: str, tool: list[str]) -> bool:
    p = subprocess.run([*tool, "run", "--help"], capture_output=True, text=True)
    return flag in p.stdout


def run_command(plan: UnitPlan, tool: list[str], jobs: int, config_path: Path, fflags_ok: bool,
                resume: Optional[str] = None) -> list[str]:
    cmd = [*tool, "run", *[str(p) for p in plan.sources], "--out", str(plan.out_dir), "-j", str(jobs), "--quiet"]
    if resume:
        return cmd + ["--resume", resume]
    cmd += ["--config", str(config_path)]
    for d in plan.include_dirs:
        cmd += ["-I", str(d)]
    for k, v in plan.defines.items():
        cmd += ["-D", k if v is None else f"{k}={v}"]
    if fflags_ok and plan.fflags:
        cmd += [f"--fflags={' '.join(plan.fflags)}"]
    for k in plan.kernels:
        cmd += ["--kernel", k]
    return cmd


def _open_db(out_dir: Path):
    from port_fortran.reports.db import RunDB  # the tool's own access layer

    return RunDB.in_dir(out_dir)


def _latest_run(out_dir: Path) -> Optional[str]:
    if not (out_dir / DB_NAME).is_file():
        return None
    db = _open_db(out_dir)
    try:
        return db.latest_run()
    finally:
        db.close()


def _overdue(out_dir: Path, run_id: str, limit_s: float) -> list[str]:
    """Kernels of the run marked running for longer than ``limit_s`` (wall)."""
    if not (out_dir / DB_NAME).is_file():
        return []
    db = _open_db(out_dir)
    try:
        now = time.time()
        return [k["kernel_id"] for k in db.kernels(run_id)
                if k["status"] == "running" and k["started"] and now - k["started"] > limit_s]
    finally:
        db.close()


def _mark(out_dir: Path, run_id: str, kernel_ids: list[str], reason: str, code: str) -> None:
    """Record kernels the runner stopped. The status is ``failed`` in the tool's database (a
    status a resumed run does not repeat); unit.json lists them and the results show them as
    ``error`` with ``code``."""
    db = _open_db(out_dir)
    try:
        for kid in kernel_ids:
            db.set_kernel(run_id, kid, status="failed", reason=reason[:1000], reason_code=code, finished=time.time())
    finally:
        db.close()


def _unfinished(out_dir: Path, run_id: str) -> list[str]:
    db = _open_db(out_dir)
    try:
        return [k["kernel_id"] for k in db.kernels(run_id) if k["status"] in ("pending", "running")]
    finally:
        db.close()


def _kill_group(proc: subprocess.Popen, grace_s: float = 20.0) -> None:
    """SIGTERM to the run's process group (the tool marks the run interrupted), SIGKILL if it
    does not end within ``grace_s``."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _tail(path: Path, n: int = 15) -> str:
    if not path.is_file():
        return ""
    box = set("│┃┏┗┡└┌┐┘├┤─━╇╈┳┻┯┷╞╡")
    lines = [ln for ln in path.read_text(errors="replace").strip().split("\n")
             if ln.strip() and not (set(ln.strip()[:1]) & box)]
    return "\n".join(lines[-n:])


PROOF_SHARE = 0.5  # of the kernel limit, the tool's own proof budget (the rest: translation and builds)


def unit_config(plan: UnitPlan, kernel_limit: Optional[float] = None) -> dict:
    """The unit's run configuration: the corpus defaults, how its programs run, what the
    corpus states about its routines; with ``kernel_limit`` the tool's proof budget
    (``limits.proof_s``) is a share of it, so that a slow proof ends as the tool's own
    refusal (``proof-over-budget``) rather than the watchdog's ``kernel-timeout``."""
    cfg = dict(RUN_CONFIG)
    if kernel_limit:
        cfg["limits"] = {"proof_s": round(kernel_limit * PROOF_SHARE)}
    if getattr(plan, "bench_threads", None):
        cfg.update(bench=True, threads=plan.bench_threads)
    programs = cp.unit_programs(plan.code, plan.unit, plan.src_root) if plan.src_root is not None else {}
    if programs:
        cfg["programs"] = programs
    if plan.unit.routines:
        cfg["routines"] = plan.unit.routines
    return cfg


def run_unit(plan: UnitPlan, *, tool: list[str], jobs: int, kernel_limit: float, unit_limit: float,
             fflags_ok: bool, force: bool = False, log=print) -> dict:
    """Run (or resume) one unit; returns its unit.json record."""
    out = plan.out_dir
    meta_path = out / "unit.json"
    if meta_path.is_file() and not force:
        meta = json.loads(meta_path.read_text())
        if meta.get("status") == "done":
            return meta
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.yaml"
    cfg_path.write_text(yaml.safe_dump(unit_config(plan, kernel_limit), sort_keys=False))
    prev = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    meta: dict[str, Any] = {
        "code": plan.code.name, "unit": plan.unit.name, "status": "running",
        "files": [str(p) for p in plan.files], "context": [str(p) for p in plan.context],
        "tool_root": str(plan.tool_root()), "commands": prev.get("commands", []),
        "timeouts": prev.get("timeouts", []), "unit_timeout": [], "exit_codes": prev.get("exit_codes", []),
        "fflags": plan.fflags, "fflags_passed": bool(fflags_ok and plan.fflags),
        "started": prev.get("started") or time.time(), "run_id": prev.get("run_id"),
        "seconds": prev.get("seconds", 0.0),
    }
    t_unit = time.monotonic()
    resume = _latest_run(out)
    log_path = out / "run.log"
    while True:
        cmd = run_command(plan, tool, jobs, cfg_path, fflags_ok, resume=resume)
        meta["commands"].append(" ".join(cmd))
        meta_path.write_text(json.dumps(meta, indent=1))
        with open(log_path, "a") as logf:
            logf.write(f"\n$ {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=str(cp.HERE.parent.parent))
            stopped_for: list[str] = []
            unit_over = False
            try:
                while proc.poll() is None:
                    time.sleep(3)
                    run_id = meta["run_id"] or _latest_run(out)
                    meta["run_id"] = run_id
                    if run_id:
                        stopped_for = _overdue(out, run_id, kernel_limit)
                    if time.monotonic() - t_unit > unit_limit:
                        unit_over = True
                    if stopped_for or unit_over:
                        _kill_group(proc)
                        break
            except KeyboardInterrupt:
                _kill_group(proc)
                meta["status"] = "interrupted"
                meta_path.write_text(json.dumps(meta, indent=1))
                raise
        rc = proc.wait()
        meta["exit_codes"].append(rc)
        meta["run_id"] = meta["run_id"] or _latest_run(out)
        run_id = meta["run_id"]
        if stopped_for and run_id:
            reason = f"the kernel ran longer than the corpus limit of {kernel_limit:.0f} s (wall) and was stopped"
            _mark(out, run_id, stopped_for, reason, "kernel-timeout")
            meta["timeouts"] += stopped_for
            log(f"  {plan.key}: stopped {', '.join(stopped_for)} after {kernel_limit:.0f} s; resuming the rest")
            if not unit_over:
                resume = run_id
                continue
        if unit_over and run_id:
            left = _unfinished(out, run_id)
            _mark(out, run_id, left, f"the unit ran longer than the corpus limit of {unit_limit:.0f} s", "unit-timeout")
            meta["unit_timeout"] = left
        break
    meta["seconds"] = meta.get("seconds", 0.0) + (time.monotonic() - t_unit)
    meta["finished"] = time.time()
    last = meta["exit_codes"][-1]
    meta["log_tail"] = _tail(log_path)
    if last == 3:
        meta["status"] = "error"
        meta_path.write_text(json.dumps(meta, indent=1))
        raise RunnerError(f"{plan.key}: port-fortran says a required tool is missing:\n{meta['log_tail']}")
    meta["status"] = "done" if last in (0, 1) or unit_over else "error"
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


# ----------------------------------------------------------------------------- collecting rows


def db_kernels(out_dir: Path, run_id: Optional[str]) -> list[dict]:
    if not run_id or not (out_dir / DB_NAME).is_file():
        return []
    db = _open_db(out_dir)
    try:
        return db.kernels(run_id)
    finally:
        db.close()


def db_timings(out_dir: Path, run_id: Optional[str]) -> dict[str, list[dict]]:
    """The run's timings (``--bench``) by kernel id."""
    if not run_id or not (out_dir / DB_NAME).is_file():
        return {}
    db = _open_db(out_dir)
    try:
        return speed.by_kernel(db.timings(run_id))
    finally:
        db.close()


def is_parallel(patterns: list[str]) -> bool:
    return bool(set(patterns) & PARALLEL_PATTERNS)


def collect_unit(code_name: str, unit_name: str, scan: list[dict], kernels: list[dict], meta: dict,
                 code_root: Path, timings: Optional[dict[str, list[dict]]] = None) -> list[dict]:
    """One row per routine of the unit's own files: the scan joined with the tool's kernels.

    ``scan``: fscan rows (file relative to the code root); ``kernels``: the run's kernel rows
    (file relative to ``meta['tool_root']``); ``meta``: unit.json. Pure: no I/O."""
    tool_root = Path(meta["tool_root"])

    def tool_rel(code_rel: str) -> str:
        return os.path.relpath(str(code_root / code_rel), str(tool_root))

    own = {tool_rel(s["file"]): s["file"] for s in scan}
    file_errors: dict[str, dict] = {}
    by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for k in kernels:
        if k["file"] not in own:
            continue  # a context file's kernel (counted in its own unit) or a stub
        if k["name"] == "(file)" or k["kernel_id"].endswith(":*"):
            file_errors[own[k["file"]]] = k
            continue
        by_key[(own[k["file"]], k["name"].lower())].append(k)
    timeouts = set(meta.get("timeouts", [])) | set(meta.get("unit_timeout", []))
    crashed = meta.get("status") == "error"
    rows: list[dict] = []
    for s in scan:
        if s.get("name") is None:
            continue
        row = {"code": code_name, "unit": unit_name, "file": s["file"], "routine": s["name"], "kind": s["kind"],
               "line": s["line"], "end_line": s.get("end_line"), "host": s.get("host"),
               "internal": bool(s.get("internal")), "has_loops": bool(s.get("has_loops")),
               "loops": s.get("loops", 0), "calls": s.get("calls", []), "status": "lost", "reason_code": "", "reason": "", "parallel": False,
               "patterns": [], "tool_line": None, "seconds": None}
        cands = by_key.get((s["file"], s["name"]), [])
        k = min(cands, key=lambda c: abs((c["line_start"] or 0) - s["line"])) if cands else None
        if k is not None:
            cands.remove(k)
            _apply_kernel(row, k, timeouts, timings)
        elif s["file"] in file_errors:
            e = file_errors[s["file"]]
            row.update(reason_code=e["reason_code"] or "parse-error",
                       reason=f"the file was not read: {e['reason']}")
        elif crashed:
            row.update(status="error", reason_code="unit-run-failed",
                       reason=f"the unit's port-fortran run ended with exit code {meta['exit_codes'][-1]}: "
                              f"{_last_line(meta.get('log_tail', ''))}")
        elif s["kind"] == "program":
            code = "unnamed-main-program" if s["name"] == "(main)" else "main-program"
            row.update(reason_code=code, reason="a main program port-fortran did not record (it takes a main program "
                                                "that has loops as a hybrid port proven by running it)"
                       + (" (this one has no PROGRAM statement)" if s["name"] == "(main)" else ""))
        elif s.get("internal"):
            row.update(reason_code="internal-procedure",
                       reason=f"an internal procedure of {s.get('host')}: port-fortran does not take internal "
                              "procedures as kernels")
        else:
            row.update(reason_code="not-seen", reason="port-fortran recorded no kernel of this name in this file")
        rows.append(row)
    # kernels the tool recorded that the scan did not find (a scanner gap: kept, and shown)
    for (f, name), left in by_key.items():
        for k in left:
            row = {"code": code_name, "unit": unit_name, "file": f, "routine": name, "kind": "?",
                   "line": k["line_start"], "end_line": k["line_end"], "host": None, "internal": False,
                   "has_loops": None, "loops": None, "status": "lost", "reason_code": "", "reason": "",
                   "parallel": False, "patterns": [], "tool_line": None, "seconds": None, "scan_missed": True}
            _apply_kernel(row, k, timeouts, timings)
            rows.append(row)
    return rows


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().split("\n") if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _apply_kernel(row: dict, k: dict, timeouts: set[str], timings: Optional[dict[str, list[dict]]] = None) -> None:
    pats = json.loads(k["patterns"] or "[]") if isinstance(k["patterns"], str) else list(k["patterns"] or [])
    status = k["status"]
    code = k["reason_code"] or ""
    if k["kernel_id"] in timeouts or code in ("kernel-timeout", "unit-timeout"):
        status = "error"
    elif status in ("pending", "running"):
        status, code = "error", code or "not-finished"
    elif status == "budget-reached":
        status = "error"
    elif status not in STATUSES:
        status = "error"
    row.update(status=status, reason_code=code if status != "verified" else "", reason=k["reason"] or "",
               patterns=pats, parallel=status == "verified" and is_parallel(pats), tool_line=k["line_start"],
               port_dir=k.get("port_dir") or "",
               seconds=(k["finished"] - k["started"]) if k.get("finished") and k.get("started") else None)
    if status == "verified" and timings and timings.get(k["kernel_id"]):
        t = speed.summarise(timings[k["kernel_id"]])
        if t is not None:
            row["timing"] = t


# ----------------------------------------------------------------------------- aggregation


def aggregate(rows: list[dict]) -> dict:
    """Counts for a list of rows (one code, or all)."""
    loops = [r for r in rows if r["has_loops"]]
    agg = {
        "routines": len(rows),
        "with_loops": len(loops),
        "verified": sum(r["status"] == "verified" for r in rows),
        "verified_with_loops": sum(r["status"] == "verified" for r in loops),
        "verified_parallel": sum(r["status"] == "verified" and r["parallel"] for r in rows),
        "verified_parallel_with_loops": sum(r["status"] == "verified" and r["parallel"] for r in loops),
    }
    for s in STATUSES[1:]:
        agg[s] = sum(r["status"] == s for r in rows)
    agg["refused_by_code"] = dict(Counter(r["reason_code"] or "?" for r in rows if r["status"] == "refused")
                                  .most_common())
    agg["by_status_code"] = dict(Counter(f"{r['status']}:{r['reason_code'] or '-'}" for r in rows).most_common())
    n = agg["with_loops"]
    agg["pct_loops_verified"] = round(100.0 * agg["verified_with_loops"] / n, 1) if n else None
    agg["pct_loops_verified_parallel"] = round(100.0 * agg["verified_parallel_with_loops"] / n, 1) if n else None
    return agg


def aggregate_by_code(rows: list[dict], codes: list[str]) -> dict[str, dict]:
    out = {c: aggregate([r for r in rows if r["code"] == c]) for c in codes}
    out["total"] = aggregate(rows)
    return out


# ----------------------------------------------------------------------------- environment


def tool_commit() -> str:
    try:
        import port_fortran

        pkg = Path(port_fortran.__file__).resolve().parent
        sha = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        last = subprocess.run(["git", "-C", str(pkg), "log", "-1", "--format=%h %cs %s", "--", "."],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(pkg), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True).stdout.strip()
        return (f"{sha[:12]} at {pkg.parent}{' (port_fortran/ modified)' if dirty else ''}; last change to "
                f"port_fortran/: {last[:100]}")
    except (ImportError, OSError) as exc:
        return f"unknown ({exc})"


def machine() -> str:
    cpu = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().split("\n"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().split("\n") if ln.startswith("MemTotal")))
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    from port_fortran.build_runner.toolchain import gfortran_path

    fc = gfortran_path() or "gfortran"  # FC, or a gfortran-NN where no plain gfortran is installed
    gf = subprocess.run([fc, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return f"{socket.gethostname()}: {os.cpu_count()} cores ({cpu}), {mem}, {platform.system()} {platform.release()}, {gf}"


# ----------------------------------------------------------------------------- reports


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f} %" if b else "n/a"


def render_markdown(results: dict) -> str:
    agg = results["aggregate"]
    codes = [c for c in agg if c != "total"]
    out = [f"# Real-code corpus: results of {results['date']}", ""]
    out += ["Every routine of every unit of `bench/realcode/corpus.yaml` through `port-fortran` "
            f"(backends serial+openmp, rules model, {'verified ports timed (--bench)' if results.get('bench_threads') else 'no timing'}, no optimizer). Routines are counted "
            "independently of the tool (`bench/realcode/fscan.py`): `lost` are routines the tool never "
            "recorded (a file it could not read, a main program, an internal procedure). "
            "Percentages are of the routines that contain a DO loop.", ""]
    out += [f"- command: `{results['command']}`", f"- tool: {results['tool_commit']}",
            f"- machine: {results['machine']}", f"- wall time of the units run: {results['seconds'] / 60:.1f} min "
            f"(sum over units; -j {results['jobs']}, kernel limit {results['kernel_limit']:.0f} s)",
            f"- units: {results['units_done']} done, {results['units_error']} with a failed run, "
            f"{results['units_missing']} not run"]
    if results.get("fflags_note"):
        out.append(f"- Fortran flags: {results['fflags_note']}")
    out += ["", "## Per code", "",
            "| code | routines | with loops | verified | verified ∥ | refused | failed | error | lost "
            "| loops verified | loops verified ∥ |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in codes + ["total"]:
        a = agg[c]
        name = f"**{c}**" if c == "total" else c
        out.append(f"| {name} | {a['routines']} | {a['with_loops']} | {a['verified']} | {a['verified_parallel']} "
                   f"| {a['refused']} | {a['failed']} | {a['error']} | {a['lost']} "
                   f"| {a['verified_with_loops']} ({_pct(a['verified_with_loops'], a['with_loops'])}) "
                   f"| {a['verified_parallel_with_loops']} ({_pct(a['verified_parallel_with_loops'], a['with_loops'])}) |")
    out += ["", "`verified ∥`: verified, and the kept port has at least one parallel pattern (parallel_for, "
            "mdrange, reduce, atomic, team). The Done-when of issue 12 asks >= 80 % (loops verified) and "
            ">= 60 % (loops verified ∥), zero `error`.", ""]
    out += ["## Not verified, by status and reason code (all routines)", "",
            "| status:reason code | " + " | ".join(codes) + " | total |", "|---|" + "---:|" * (len(codes) + 1)]
    keys = list(agg["total"]["by_status_code"])
    for k in keys:
        if k.startswith("verified:"):
            continue
        out.append(f"| {k} | " + " | ".join(str(agg[c]["by_status_code"].get(k, "")) for c in codes)
                   + f" | {agg['total']['by_status_code'][k]} |")
    loops_only = aggregate([r for r in results["rows"] if r["has_loops"]])
    out += ["", "## Routines with loops: status and reason code", "", "| status:reason code | routines |", "|---|---:|"]
    for k, n in loops_only["by_status_code"].items():
        out.append(f"| {k} | {n} |")
    out += speed.speed_section(results["rows"], codes)
    out += ["", "## Units", "", "| unit | files | routines | verified | minutes | runs (exit codes) | timeouts |",
            "|---|---:|---:|---:|---:|---|---|"]
    for u in results["units"]:
        ur = [r for r in results["rows"] if r["code"] == u["code"] and r["unit"] == u["unit"]]
        out.append(f"| {u['code']}/{u['unit']} | {len(u.get('files', []))} | {len(ur)} "
                   f"| {sum(r['status'] == 'verified' for r in ur)} | {u.get('seconds', 0) / 60:.1f} "
                   f"| {u.get('status')} ({', '.join(map(str, u.get('exit_codes', [])))}) "
                   f"| {len(u.get('timeouts', [])) + len(u.get('unit_timeout', []))} |")
    if results.get("scan_missed"):
        out += ["", f"Kernels the tool recorded that the independent count missed: {results['scan_missed']} "
                "(rows with `scan_missed` in the JSON)."]
    out += ["", "## Corpus", "", "| code | repository | commit | units | excluded files |", "|---|---|---|---:|---|"]
    for c in results["corpus"]:
        out.append(f"| {c['name']} | {c['repository']} | `{c['commit'][:12]}` | {c['units']} | {c['excluded']} |")
    out.append("")
    return "\n".join(out)


def write_results(results: dict, results_dir: Path) -> tuple[Path, Optional[Path]]:
    results_dir.mkdir(parents=True, exist_ok=True)
    md = results_dir / f"results_{results['date']}.md"
    md.write_text(render_markdown(results))
    js = results_dir / f"results_{results['date']}.json"
    js.write_text(json.dumps({k: v for k, v in results.items()}, indent=1, default=str))
    return md, js


# ----------------------------------------------------------------------------- main


def _select_units(codes: list[cp.Code], units_arg: str) -> list[tuple[cp.Code, cp.Unit]]:
    pairs = [(c, u) for c in codes for u in c.units]
    if not units_arg:
        return pairs
    want = [w.strip() for w in units_arg.split(",") if w.strip()]
    out = []
    for w in want:
        hits = [(c, u) for c, u in pairs if w == f"{c.name}/{u.name}" or w == u.name]
        if not hits:
            raise cp.CorpusError(f"--units {w}: no such unit (give code/unit, e.g. parres/dgemm)")
        out += [h for h in hits if h not in out]
    return out


def check_materialised(code: cp.Code, src_root: Path) -> None:
    stamp = cp.code_root(src_root, code) / ".corpus-commit"
    have = stamp.read_text().split("\n")[0].strip() if stamp.is_file() else None  # the commit, then the fetch globs
    if have != code.commit:
        raise RunnerError(f"{code.name}: not materialised at {code.commit[:12]} under {src_root} "
                          f"(found {have or 'nothing'}); run: python bench/realcode/get.py --mirror-root /work/.mirror "
                          f"--codes {code.name}")


def _term_as_interrupt(signum, frame):
    raise KeyboardInterrupt()


def main(argv: Optional[list[str]] = None) -> int:
    signal.signal(signal.SIGTERM, _term_as_interrupt)  # a killed runner stops its unit's run too
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=cp.CORPUS_YAML)
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help="materialised codes (get.py --dest)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run directories")
    ap.add_argument("--results-dir", type=Path, default=cp.HERE, help="where results_<date>.md/.json go")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--codes", default="", help="comma-separated code names")
    ap.add_argument("--units", default="", help="comma-separated code/unit (or unit) names")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="kernels at once inside each port-fortran run")
    ap.add_argument("--kernel-limit", type=float, default=900.0, help="wall seconds one kernel may take")
    ap.add_argument("--unit-limit", type=float, default=4 * 3600.0, help="wall seconds one unit may take")
    ap.add_argument("--force", action="store_true", help="run units again even if done")
    ap.add_argument("--routines", default="",
                    help="comma-separated: only these routines of the units (port-fortran --kernel); "
                         "the table then counts the others as lost: merge it with merge_results --routines")
    ap.add_argument("--report-only", action="store_true", help="only tabulate what has run")
    ap.add_argument("--bench", type=int, default=0, metavar="THREADS",
                    help="also time every verified port against its original (Kokkos Serial, and OpenMP at THREADS "
                         "threads against the original at THREADS); the results get a speed section (issue #15). "
                         "Run with -j 1: ports timed side by side disturb each other")
    ap.add_argument("--compile-check", action="store_true",
                    help="compile every unit's files with gfortran (module order) and report failures")
    ap.add_argument("--port-fortran", default=f"{sys.executable} -m port_fortran.cli",
                    help="how to start the tool (default: this python -m port_fortran.cli)")
    args = ap.parse_args(argv)
    try:
        codes = cp.select(cp.load(args.corpus), [c for c in args.codes.split(",") if c])
        pairs = _select_units(codes, args.units)
        for c in {c.name: c for c, _ in pairs}.values():
            check_materialised(c, args.src)
        if args.compile_check:
            return _compile_check(pairs, args.src)
        tool = args.port_fortran.split()
        fflags_ok = tool_supports("--fflags", tool)
        only = {r.strip().lower() for r in args.routines.split(",") if r.strip()}
        if not args.report_only:
            for i, (code, unit) in enumerate(pairs, 1):
                plan = plan_unit(code, unit, args.src, args.out)
                plan.bench_threads = args.bench or None
                if args.force and plan.out_dir.exists():
                    shutil.rmtree(plan.out_dir)
                scan = scan_unit(code, unit, args.src)
                plan.out_dir.mkdir(parents=True, exist_ok=True)
                (plan.out_dir / "scan.json").write_text(json.dumps(scan, indent=1))
                if plan.context:
                    # main programs too: the tool takes those with loops as hybrid ports proven by a run
                    plan.kernels = sorted({s["name"] for s in scan if s.get("name") and s["name"] != "(main)"
                                           and not s.get("internal")})
                if only:  # a few routines of a long unit, for merge_results --routines
                    plan.kernels = sorted({s["name"] for s in scan if s.get("name") in only})
                    if not plan.kernels:
                        continue
                t0 = time.monotonic()
                print(f"[{i}/{len(pairs)}] {plan.key}: {len(plan.files)} file(s), {len(scan)} routine(s)", flush=True)
                meta = run_unit(plan, tool=tool, jobs=args.jobs, kernel_limit=args.kernel_limit,
                                unit_limit=args.unit_limit, fflags_ok=fflags_ok, force=args.force)
                print(f"    {meta['status']} in {time.monotonic() - t0:.0f} s (exit {meta['exit_codes']})", flush=True)
        results = gather(pairs, codes, args, fflags_ok)
        md, js = write_results(results, args.results_dir)
        t = results["aggregate"]["total"]
        print(f"{t['routines']} routines, {t['with_loops']} with loops; verified {t['verified']} "
              f"({t['verified_parallel']} with a parallel loop); refused {t['refused']}, failed {t['failed']}, "
              f"error {t['error']}, lost {t['lost']}")
        print(f"wrote {md} and {js}")
    except (cp.CorpusError, RunnerError) as exc:
        print(f"run_corpus.py: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("run_corpus.py: interrupted; run the same command again to resume", file=sys.stderr)
        return 4
    return 0


def gather(pairs, codes, args, fflags_ok: bool) -> dict:
    rows: list[dict] = []
    units = []
    done = err = missing = 0
    seconds = 0.0
    for code, unit in pairs:
        d = args.out / code.name / unit.name
        mp = d / "unit.json"
        if not mp.is_file():
            missing += 1
            continue
        meta = json.loads(mp.read_text())
        if meta.get("status") not in ("done", "error"):
            missing += 1
            continue
        done += meta["status"] == "done"
        err += meta["status"] == "error"
        seconds += meta.get("seconds", 0.0)
        # the count is redone here (fast, and independent of the run), so a better scanner
        # improves the tables without running the tool again; scan.json is what the run used
        scan = scan_unit(code, unit, args.src)
        rows += collect_unit(code.name, unit.name, scan, db_kernels(d, meta.get("run_id")), meta,
                             cp.code_root(args.src, code), db_timings(d, meta.get("run_id")))
        units.append({k: meta.get(k) for k in ("code", "unit", "status", "exit_codes", "seconds", "timeouts",
                                                "unit_timeout", "files", "run_id", "fflags", "fflags_passed")})
    prefixes = [str(Path(args.src).resolve()) + "/", str(Path(args.out).resolve()) + "/"]
    for r in rows:  # paths in reasons relative to the corpus (src: <code>/..., out: <code>/<unit>/...)
        for p in prefixes:
            r["reason"] = r["reason"].replace(p, "")
            if r.get("port_dir", "").startswith(p):
                r["port_dir"] = r["port_dir"][len(p):]
    names = list(dict.fromkeys(c.name for c, _ in pairs))
    note = ("passed to port-fortran with --fflags" if fflags_ok else
            "corpus.yaml lists them per code, but this port-fortran has no --fflags option, so they were not passed")
    return {
        "date": args.date, "command": command_line(),
        "tool_commit": tool_commit(), "machine": machine(), "jobs": args.jobs, "kernel_limit": args.kernel_limit,
        "bench_threads": getattr(args, "bench", 0) or max(
            (r["timing"].get("threads") or 0 for r in rows if r.get("timing")), default=0) or None,
        "seconds": seconds, "units_done": done, "units_error": err, "units_missing": missing,
        "fflags_note": note, "scan_missed": sum(1 for r in rows if r.get("scan_missed")),
        "aggregate": aggregate_by_code(rows, names), "units": units,
        "corpus": [{"name": c.name, "repository": c.repository, "commit": c.commit, "units": len(c.units),
                    "excluded": "; ".join(f"{e.files}" for e in c.exclude) or "-"} for c in codes],
        "rows": rows,
    }


def command_line() -> str:
    here = Path(sys.argv[0])
    try:
        script = here.resolve().relative_to(cp.HERE.parent.parent).as_posix()
    except ValueError:
        script = here.as_posix()
    return " ".join(["PYTHONPATH=$PWD python", script] + sys.argv[1:])


def _compile_check(pairs, src_root: Path) -> int:
    """Every unit file through gfortran; and the routine count checked against the objects:
    the external and module procedures fscan finds must be those ``nm`` lists."""
    bad = 0
    for code, unit in pairs:
        symbols: dict[str, set[str]] = {}
        res = cp.compile_check(code, unit, src_root, symbols=symbols)
        fails = {k: v for k, v in res.items() if v}
        scan = [r for r in scan_unit(code, unit, src_root) if r.get("name")]
        diffs = []
        root = cp.code_root(src_root, code)
        for f in sorted(p.relative_to(root).as_posix() for p in cp.unit_files(code, unit, src_root)):
            if f not in symbols:
                continue  # did not compile: reported above
            mine = {r["name"] for r in scan if r["file"] == f and not r["internal"] and r["kind"] != "program"}
            if mine != symbols[f]:
                diffs.append(f"{f}: count only {sorted(mine - symbols[f])}, object only {sorted(symbols[f] - mine)}")
        print(f"{code.name}/{unit.name}: {len(res) - len(fails)}/{len(res)} compile; "
              f"{'count matches the objects' if not diffs else 'COUNT DIFFERS'}")
        for k, v in fails.items():
            print(f"  {k}: {v}")
        for d in diffs:
            print(f"  {d}")
        bad += bool(fails or diffs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
