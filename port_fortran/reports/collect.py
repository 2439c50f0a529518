"""Gather one run from the run database into the report document (``report.json``).

Pure reads: :func:`collect_report` touches only the database given to it and returns plain
JSON-ready data that follows ``report.schema.json`` (documented in docs/report-schema.md).
The Markdown and HTML reports are drawn from this document, never from anything else.
"""
from __future__ import annotations

import json
import math
import statistics
import time
from collections import defaultdict
from typing import Any, Iterable, Optional

from ..reasons import meaning
from .db import RunDB

SCHEMA_VERSION = "1.0"

#: kernel statuses, in the order the summary lists them
STATUSES = ("verified", "failed", "refused", "budget-reached", "error", "running", "pending")
#: statuses that count as "attempted" (the pipeline got to work on the kernel)
ATTEMPTED = ("verified", "failed", "refused", "budget-reached", "error", "running")
#: stages in pipeline order, for tables and plots
STAGES = ("translate", "validate", "compile", "run", "debug", "optimize", "finalize")
BASELINE = "fortran-serial"


# --------------------------------------------------------------------------- small helpers

def num(x: Any) -> Any:
    """A JSON-safe number: finite floats as they are, NaN/inf as the strings 'nan', 'inf',
    '-inf' (JSON has no spelling for them and a NaN error is meaningful: unwritten output)."""
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def _as_float(x: Any) -> Optional[float]:
    """Inverse of :func:`num` for comparisons: strings back to floats."""
    if x is None:
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _worse(a: Any, b: Any) -> Any:
    """The larger error of two (NaN counts as the worst: it means unwritten or garbage)."""
    fa, fb = _as_float(a), _as_float(b)
    if fa is None:
        return b
    if fb is None:
        return a
    if math.isnan(fa):
        return a
    if math.isnan(fb):
        return b
    return a if fa >= fb else b


def _loads(text: Any, default: Any) -> Any:
    if not isinstance(text, str) or not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _iso(t: Optional[float]) -> Optional[str]:
    if t is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _line(x: Any) -> Optional[int]:
    """A 1-based line number, or None (0 means 'no particular line' for file-level errors)."""
    try:
        n = int(x)
    except (TypeError, ValueError):
        return None
    return n if n >= 1 else None


def _duration(start: Optional[float], end: Optional[float]) -> Optional[float]:
    if start is None or end is None:
        return None
    return max(0.0, float(end) - float(start))


def median(xs: Iterable[float]) -> Optional[float]:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.median(xs) if xs else None


def geomean(xs: Iterable[float]) -> Optional[float]:
    xs = [x for x in xs if x is not None and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# --------------------------------------------------------------------------- per-kernel parts

def verdict_entry(row: dict) -> dict:
    """One backend's verdict: pass/fail, reason, worst errors and elements compared over
    every case and output of the stored :class:`records.Verdict`."""
    data = _loads(row.get("data"), {})
    cases = data.get("cases") or []
    max_abs: Any = None
    max_rel: Any = None
    elements = 0
    outputs: dict[str, dict] = {}
    size_sets: list[dict] = []
    for case in cases:
        entry = {"kind": str(case.get("kind") or "correctness"), "sizes": dict(case.get("sizes") or {})}
        if entry not in size_sets:
            size_sets.append(entry)
        for out in case.get("outputs") or []:
            elements += int(out.get("elements") or 0)
            max_abs = _worse(max_abs, num(out.get("max_abs_err")))
            max_rel = _worse(max_rel, num(out.get("max_rel_err")))
            name = str(out.get("name", "?"))
            o = outputs.setdefault(name, {"name": name, "passed": True, "elements": 0, "max_abs_err": None,
                                          "max_rel_err": None, "tolerance": num(out.get("tolerance")),
                                          "sampled": False})
            o["passed"] = o["passed"] and bool(out.get("passed", False))
            o["elements"] += int(out.get("elements") or 0)
            o["max_abs_err"] = _worse(o["max_abs_err"], num(out.get("max_abs_err")))
            o["max_rel_err"] = _worse(o["max_rel_err"], num(out.get("max_rel_err")))
            o["sampled"] = o["sampled"] or bool(out.get("sampled", False))
    cross = data.get("cross_tiles")
    return {
        "backend": row["backend"],
        "passed": bool(row["passed"]),
        "reason": row.get("reason") or data.get("reason") or "",
        "cases": len(cases),
        "cases_passed": sum(1 for c in cases if c.get("passed")),
        "elements_compared": elements,
        "max_abs_err": max_abs,
        "max_rel_err": max_rel,
        "outputs": list(outputs.values()),
        "cross_tiles": cross if isinstance(cross, bool) else None,
        "timing_size": any(c["kind"] == "timing-size" for c in size_sets),
        "size_sets": size_sets,
        "notes": [str(n) for n in data.get("notes") or []],
        "at": _iso(row.get("at")),
    }


def hybrid_entry(row: dict) -> Optional[dict]:
    """A hybrid port's part of a kernel entry (None for a full port): the Fortran file that
    stays, how many of the routine's loop nests run as Kokkos kernels (which, at which
    lines), and what stays Fortran and why (reason codes with lines)."""
    if (row.get("mode") or "") != "hybrid":
        return None
    h = _loads(row.get("hybrid"), {}) or {}
    outlined = [{"entry": str(o.get("entry", "")), "line": _line(o.get("line")), "end_line": _line(o.get("end_line")),
                 "patterns": [str(p) for p in o.get("patterns") or []], "routine": str(o.get("routine") or "")}
                for o in h.get("outlined") or []]
    kept = [{"code": str(x.get("code", "")), "line": _line(x.get("line")), "message": str(x.get("message", ""))}
            for x in h.get("kept") or []]
    return {"source": str(h.get("source", "")), "nests": int(h.get("nests") or 0), "nests_outlined": len(outlined),
            "outlined": outlined, "kept": kept, "why": [str(w) for w in h.get("why") or []]}


def latest_verdicts(rows: list[dict]) -> list[dict]:
    """The last verdict recorded per backend (a debugger round re-verifies; the last one
    is the one the kernel's status rests on), in first-seen backend order."""
    last: dict[str, dict] = {}
    for r in rows:
        last[r["backend"]] = r
    return [verdict_entry(r) for r in last.values()]


def is_proven(row: dict) -> bool:
    """Whether a timing may be reported: the original Fortran (the reference), or a Kokkos
    build verified on that backend at exactly the sizes it was timed at."""
    if not str(row.get("variant", "")).startswith("kokkos-"):
        return True
    proven = _loads(row.get("proven_sizes"), None)
    return isinstance(proven, dict) and proven == _loads(row.get("sizes"), {})


def timing_entries(rows: list[dict]) -> list[dict]:
    """Timings per (variant, threads), the last one recorded winning (the optimizer keeps a
    faster variant by recording it later), each with its speedup against the original
    Fortran run serially (``fortran-serial``)."""
    # kernel-only and with-copies runs of one variant are different measurements (on a GPU
    # they differ by the host-device copies): both are kept
    last: dict[tuple[str, int, bool], dict] = {}
    for r in rows:
        last[(r["variant"], int(r.get("threads") or 1), bool(r.get("kernel_only", 1)))] = r
    base_rows = [r for (v, _, ko), r in last.items() if v == BASELINE and ko]
    base = min((r["median_s"] for r in base_rows), default=None)
    out = []
    for (variant, threads, _), r in last.items():
        med = float(r["median_s"])
        speedup = (base / med) if (base and med > 0) else None
        out.append({
            "variant": variant,
            "threads": threads,
            "median_s": num(med),
            "spread_s": num(r.get("spread_s") or 0.0),
            "repeats": int(r.get("repeats") or 0),
            "kernel_only": bool(r.get("kernel_only", 1)),
            "gbytes_per_s": num(r.get("gbytes_per_s")),
            "gflops": num(r.get("gflops")),
            "roofline_fraction": num(r.get("roofline_fraction")),
            "sizes": _loads(r.get("sizes"), {}),
            "proven_sizes": _loads(r.get("proven_sizes"), None),
            "speedup_vs_fortran_serial": num(speedup),
        })
    return out


def attempts_by_stage(rows: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in rows:
        s = out.setdefault(r["stage"], {"count": 0, "ok": 0, "failed": 0, "seconds": 0.0})
        s["count"] += 1
        s["ok" if r["ok"] else "failed"] += 1
        s["seconds"] += float(r.get("seconds") or 0.0)
    return dict(sorted(out.items(), key=lambda kv: _stage_order(kv[0])))


def optimizer_variants(rows: list[dict]) -> list[dict]:
    """The optimizer's variants of one kernel, in the order tried: name, kept, and the
    measured reason (the pipeline records ``variant <name>: <why>``)."""
    out = []
    for r in rows:
        detail = str(r.get("detail") or "")
        if r.get("stage") == "optimize" and detail.startswith("variant "):
            name, _, why = detail[len("variant "):].partition(": ")
            out.append({"variant": name, "kept": bool(r["ok"]), "detail": why})
    return out


def _stage_order(stage: str) -> tuple[int, str]:
    return (STAGES.index(stage) if stage in STAGES else len(STAGES), stage)


def _llm_zero() -> dict:
    return {"calls": 0, "failed_calls": 0, "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0,
            "cost_usd": 0.0, "seconds": 0.0}


def _llm_add(acc: dict, call: dict) -> None:
    acc["calls"] += 1
    acc["failed_calls"] += 0 if call.get("ok", 1) else 1
    for k in ("input_tokens", "cached_tokens", "output_tokens"):
        acc[k] += int(call.get(k) or 0)
    acc["cost_usd"] += float(call.get("cost_usd") or 0.0)
    acc["seconds"] += float(call.get("seconds") or 0.0)


def llm_summary(calls: list[dict]) -> dict:
    total = _llm_zero()
    by_model: dict[str, dict] = {}
    for c in calls:
        _llm_add(total, c)
        _llm_add(by_model.setdefault(c["model"], _llm_zero()), c)
    total["by_model"] = [{"model": m, **v} for m, v in sorted(by_model.items())]
    return total


def _backend_of(variant: str) -> Optional[str]:
    return variant[len("kokkos-"):] if variant.startswith("kokkos-") else None


# --------------------------------------------------------------------------- the document

def collect_report(db: RunDB, run_id: str) -> dict:
    """The whole report document of one run (see report.schema.json)."""
    run = db.run(run_id)
    if run is None:
        from ..errors import UserError
        known = [r["run_id"] for r in db.conn.execute("SELECT run_id FROM runs ORDER BY started DESC LIMIT 5")]
        raise UserError(f"{db.path}: no run '{run_id}' in the database"
                        + (f" (recent runs: {', '.join(known)})" if known else " (it holds no runs)"))

    kernels_rows = db.kernels(run_id)
    verdicts = _group(db.verdicts(run_id))
    timings = _group(db.timings(run_id))
    attempts = _group(db.attempts(run_id))
    calls_all = db.llm_calls(run_id)
    calls = _group(calls_all)
    sources = db.sources(run_id)
    modules = [python_module_entry(m) for m in db.python_modules(run_id)]
    in_module = {kid: m for m in modules for kid in m["kernels"]}
    python_attempts = {kid: [a for a in rows if a["stage"] == "python"] for kid, rows in attempts.items()}

    program = db.program(run_id) if hasattr(db, "program") else None
    by_kernel = (program or {}).pop("routines_by_kernel", {}) if program else {}
    kernels = []
    for k in kernels_rows:
        kid = k["kernel_id"]
        kernels.append({
            "kernel_id": kid,
            "file": k["file"],
            "name": k["name"],
            "line_start": _line(k.get("line_start")),
            "line_end": _line(k.get("line_end")),
            "status": k["status"],
            "reason": k.get("reason") or "",
            "reason_code": k.get("reason_code") or "",
            "reason_meaning": meaning(k.get("reason_code") or ""),  # what the code always stands for
            "model": k.get("model") or "",
            "patterns": [str(p) for p in _loads(k.get("patterns"), [])],
            "mode": k.get("mode") or "",
            "hybrid": hybrid_entry(k),
            "versions": [str(p) for p in _loads(k.get("versions"), [])],
            "port_dir": k.get("port_dir") or "",
            "started": _iso(k.get("started")),
            "finished": _iso(k.get("finished")),
            "duration_s": num(_duration(k.get("started"), k.get("finished"))),
            "verdicts": latest_verdicts(verdicts.get(kid, [])),
            # no number from a size that was not proven on that backend: such rows are counted, not shown
            "timings": timing_entries([r for r in timings.get(kid, []) if is_proven(r)]),
            "unproven_timings": sum(1 for r in timings.get(kid, []) if not is_proven(r)),
            "attempts": attempts_by_stage(attempts.get(kid, [])),
            "optimizer": optimizer_variants(attempts.get(kid, [])),
            "llm": llm_summary(calls.get(kid, [])),
            "cmake": k.get("cmake") or "",
            "python": kernel_python(k["name"], in_module.get(kid), python_attempts.get(kid, [])),
            "sources": source_entry(sources.get(kid)),
        })
        if kid in by_kernel:  # where its callees are, who calls it, what it needs from outside the tree
            kernels[-1]["calls"] = by_kernel[kid]

    doc = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _iso(time.time()),
        "run": _run_meta(run),
        "summary": _summary(run, kernels, calls_all),
        "backends": _backends(kernels),
        "stages": _stages(kernels),
        "models": _models(kernels, calls_all),
        "kernels": kernels,
        "python_modules": modules,
    }
    if program is not None:
        doc["program"] = program
    application = db.application(run_id) if hasattr(db, "application") else None
    if application is not None:
        doc["application"] = application
    return doc


def source_entry(row: Optional[dict]) -> Optional[dict]:
    """The routine's original lines and the kept port, for the side-by-side view."""
    if not row or not (row.get("fortran") or row.get("kokkos")):
        return None
    return {"fortran": {"file": row.get("fortran_file") or "", "first_line": int(row.get("fortran_first_line") or 1),
                        "text": row.get("fortran") or ""},
            "kokkos": {"file": row.get("kokkos_file") or "", "text": row.get("kokkos") or ""}}


def python_module_entry(row: dict) -> dict:
    return {"module": row["module"], "backend": row["backend"], "ok": bool(row["ok"]), "path": row.get("path") or "",
            "kernels": [str(k) for k in _loads(row.get("kernels"), [])], "cmake": row.get("cmake") or "",
            "message": row.get("message") or "", "seconds": num(float(row.get("seconds") or 0.0))}


def kernel_python(name: str, module: Optional[dict], attempts: list[dict]) -> Optional[dict]:
    """How Python reaches the kernel (``module.name``), or why it does not; None when the
    run built no Python module."""
    last = attempts[-1] if attempts else None
    if module is not None:
        return {"module": module["module"], "function": name, "backend": module["backend"], "ok": module["ok"],
                "path": module["path"], "detail": module["message"] if not module["ok"] else ""}
    if last is not None:
        return {"module": "", "function": name, "backend": last.get("backend") or "", "ok": False, "path": "",
                "detail": last.get("detail") or ""}
    return None


def _group(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out[r.get("kernel_id") or ""].append(r)
    return out


def _run_meta(run: dict) -> dict:
    return {
        "run_id": run["run_id"],
        "status": run["status"],
        "command": run.get("command") or "",
        "host": run.get("host") or "",
        "started": _iso(run.get("started")),
        "finished": _iso(run.get("finished")),
        "duration_s": num(_duration(run.get("started"), run.get("finished"))),
        "config": _loads(run.get("config"), {}),
    }


def _summary(run: dict, kernels: list[dict], calls: list[dict]) -> dict:
    counts = {s: 0 for s in STATUSES}
    for k in kernels:
        counts[k["status"]] = counts.get(k["status"], 0) + 1
    llm = llm_summary(calls)
    kernel_seconds = [_as_float(k["duration_s"]) for k in kernels if k["duration_s"] is not None]
    return {
        "kernels": len(kernels),
        "attempted": sum(counts.get(s, 0) for s in ATTEMPTED),
        "verified": counts.get("verified", 0),
        "failed": counts.get("failed", 0),
        "refused": counts.get("refused", 0),
        "budget_reached": counts.get("budget-reached", 0),
        "error": counts.get("error", 0),
        "pending": counts.get("pending", 0) + counts.get("running", 0),
        "by_status": {s: n for s, n in counts.items() if n},
        "by_mode": {m: sum(1 for k in kernels if k["status"] == "verified" and k["mode"] == m)
                    for m in ("full", "hybrid")},
        "duration_s": num(_duration(run.get("started"), run.get("finished"))),
        "kernel_seconds_total": num(sum(kernel_seconds)) if kernel_seconds else 0.0,
        "llm_calls": llm["calls"],
        "input_tokens": llm["input_tokens"],
        "cached_tokens": llm["cached_tokens"],
        "output_tokens": llm["output_tokens"],
        "total_cost_usd": llm["cost_usd"],
    }


def _backends(kernels: list[dict]) -> list[dict]:
    """Per Kokkos backend: kernels verified / failed there and speedups over the kernels
    whose port on that backend is verified and timed."""
    names: list[str] = []
    for k in kernels:
        for v in k["verdicts"]:
            if v["backend"] not in names:
                names.append(v["backend"])
        for t in k["timings"]:
            b = _backend_of(t["variant"])
            if b and b not in names:
                names.append(b)
    out = []
    for b in names:
        passed = failed = 0
        speedups: list[float] = []
        for k in kernels:
            v = next((v for v in k["verdicts"] if v["backend"] == b), None)
            if v is None:
                continue
            if v["passed"]:
                passed += 1
                sp = [_as_float(t["speedup_vs_fortran_serial"]) for t in k["timings"]
                      if _backend_of(t["variant"]) == b and t["speedup_vs_fortran_serial"] is not None]
                if sp:
                    speedups.append(max(s for s in sp if s is not None))
            else:
                failed += 1
        out.append({
            "backend": b,
            "verified": passed,
            "failed": failed,
            "timed": len(speedups),
            "median_speedup": num(median(speedups)),
            "geomean_speedup": num(geomean(speedups)),
        })
    return out


def _stages(kernels: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for k in kernels:
        for stage, a in k["attempts"].items():
            s = out.setdefault(stage, {"count": 0, "ok": 0, "failed": 0, "seconds": 0.0})
            for key in s:
                s[key] += a[key]
    return dict(sorted(out.items(), key=lambda kv: _stage_order(kv[0])))


def _models(kernels: list[dict], calls: list[dict]) -> list[dict]:
    """Per model: the LLM calls and their cost, and how many kernels kept its port
    (the rules model makes no calls but keeps ports)."""
    acc: dict[str, dict] = {}
    for c in calls:
        _llm_add(acc.setdefault(c["model"], _llm_zero()), c)
    kept: dict[str, int] = defaultdict(int)
    for k in kernels:
        if k["model"]:
            kept[k["model"]] += 1
            acc.setdefault(k["model"], _llm_zero())
    return [{"model": m, "kernels_kept": kept.get(m, 0), **v} for m, v in sorted(acc.items())]
