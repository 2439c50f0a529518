"""The nodes of the per-kernel graph (:mod:`.graph` wires them): top-level functions
``node(ctx, state) -> state update``, ``ctx`` the per-kernel, per-process
:class:`KernelContext` (not checkpointed), and the helpers they share (LLM calls, the
optimizer's variants, the timing-size proof)."""
from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import shutil
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Optional

from ..agents import debugger as dbg
from ..agents import optimizer as opt_agent
from ..agents.ledger import BudgetReached, Ledger
from ..agents.llm import LLMCallFailed, LLMClient, ModelSpec, TransientLLMError, make_chat_model, parse_chain
from ..agents.prompts import entry_signature, ir_summary, render
from ..config import Config
from ..reasons import is_interface
from ..records import TranslationRefused
from .stages import Stages, copy_spec
from .state import KernelJob, KernelState, options_from_dict, options_to_dict, to_jsonable

def _mode_update(port) -> dict:
    """State keys saying what a port is: full, or hybrid with its summary."""
    from ..translate.hybrid import summary

    return {"mode": port.mode, "hybrid": summary(port.hybrid) if port.mode == "hybrid" else {}}


class StageError(Exception):
    """A stage itself broke (not the port): reported as status 'error'."""


class KernelContext:
    """Per-kernel, per-process things the nodes need (not in the checkpointed state)."""

    def __init__(self, job: KernelJob, config: Config, stages: Stages, db: Any,
                 chat_factory: Optional[Callable[[ModelSpec], Any]] = None):
        self.job, self.config, self.stages, self.db = job, config, stages, db
        self.run_id, self.kernel_id = job.run_id, job.kernel_id
        self.chain = parse_chain(config.models, config.base_url)
        self.ledger = Ledger(db, job.run_id, job.kernel_id, max_cost=config.max_cost, overrides=config.prices)
        self.chat_factory = chat_factory or (lambda spec: make_chat_model(spec, config.llm))
        self._clients: dict[str, LLMClient] = {}
        self.port_dir = Path(job.port_dir)
        self.kernel = None
        self.source = None
        self.on_stage: Optional[Callable[[str, str], None]] = None

    # -- helpers
    @property
    def name(self) -> str:
        return self.job.kernel

    @property
    def cpp_path(self) -> Path:
        return self.port_dir / f"{self.name}.kokkos.cpp"

    def client(self, spec: ModelSpec) -> LLMClient:
        c = self._clients.get(spec.name)
        if c is None:
            c = LLMClient(spec, self.chat_factory(spec), self.ledger, timeout_s=self.config.llm.timeout_s)
            self._clients[spec.name] = c
        return c

    def attempt(self, stage: str, ok: bool, detail: str = "", *, model: str = "", backend: str = "",
                attempt: Optional[int] = None, seconds: float = 0.0) -> None:
        """One row in the attempts table; ``attempt`` defaults to the number of this
        kernel's attempts at that stage and backend so far, plus one."""
        if self.db is None:
            return
        if attempt is None:
            row = self.db.conn.execute(
                "SELECT COUNT(*) FROM attempts WHERE run_id=? AND kernel_id=? AND stage=? AND backend=?",
                (self.run_id, self.kernel_id, stage, backend)).fetchone()
            attempt = int(row[0]) + 1
        self.db.add_attempt(self.run_id, self.kernel_id, stage, ok, detail[:2000], model=model,
                            backend=backend, attempt=attempt, seconds=seconds)

    def mark(self, stage: str, backend: str = "") -> None:
        if self.on_stage is not None:
            self.on_stage(stage, backend)

    def save_answer(self, stage: str, answer: str) -> None:
        d = self.port_dir / "llm"
        d.mkdir(parents=True, exist_ok=True)
        n = len(list(d.glob(f"{stage}-*.txt"))) + 1
        (d / f"{stage}-{n}.txt").write_text(answer)

    def header_text(self) -> str:
        p = self.port_dir / f"{self.name}.kokkos.hpp"
        return p.read_text() if p.is_file() else ""

    def hybrid_info(self) -> dict:
        """The summary of the hybrid port in the port directory ({} for a full port)."""
        from ..translate.hybrid import load_info, summary

        return summary(load_info(self.port_dir))

    @property
    def entry(self) -> str:
        """An entry the port's C++ must define (a hybrid port's first outlined nest)."""
        outlined = self.hybrid_info().get("outlined") or []
        return outlined[0]["entry"] if outlined else f"{self.name}_kokkos"


def _timed(fn, *a, **kw):
    t0 = time.monotonic()
    out = fn(*a, **kw)
    return out, time.monotonic() - t0


def _guard(ctx: KernelContext, stage: str, fn, *a, **kw):
    """Run a stage function: LLM transients and budget pass through, anything else from
    the stage itself becomes StageError (reported, never debugged as if the port were wrong)."""
    try:
        return fn(*a, **kw)
    except (TransientLLMError, BudgetReached, LLMCallFailed, TranslationRefused):
        raise
    except Exception as exc:
        tb = traceback.format_exc(limit=3)
        ctx.attempt(stage, False, f"stage error: {type(exc).__name__}: {exc}\n{tb}")
        raise StageError(f"{stage} stage error: {type(exc).__name__}: {exc}") from exc


def _stop(status: str, reason: str, code: str = "") -> dict:
    return {"status": status, "reason": reason, "reason_code": code, "route": "finalize"}


def _next_model_or(ctx: KernelContext, state: KernelState, status: str, reason: str, code: str,
                   refusal: str = "") -> dict:
    """Hand the kernel to the next model of the chain, or stop with ``status``."""
    idx = state.get("model_index", 0)
    if idx + 1 < len(ctx.chain):
        return {"model_index": idx + 1, "debug_rounds": {}, "debug_tried": [], "failure": None,
                "refusal": refusal or reason, "route": "translate"}
    return _stop(status, reason, code)


# ----------------------------------------------------------------------------- nodes


def _ask_llm(ctx: KernelContext, state: KernelState, spec: ModelSpec, stage: str, messages,
             hist: list) -> tuple[Optional[str], Optional[dict]]:
    """One LLM call of a graph stage. Returns (code, None) with the answer saved and the code
    written as the port's source, or (None, the state update that stops the kernel or falls
    back to the next model). Transient failures are re-raised for the node's retry policy."""
    try:
        code, answer = ctx.client(spec).ask_code(messages, stage, entry=ctx.entry)
    except BudgetReached as exc:
        ctx.attempt(stage, False, str(exc), model=spec.name)
        return None, {**_stop("budget-reached", str(exc), "budget-reached"), "history": hist}
    except TransientLLMError:
        ctx.attempt(stage, False, "transient LLM failure", model=spec.name)
        raise
    except LLMCallFailed as exc:
        ctx.attempt(stage, False, str(exc), model=spec.name)
        return None, {**_next_model_or(ctx, state, "error", f"LLM call failed: {exc}", "llm-error"), "history": hist}
    ctx.save_answer(stage, answer)
    ctx.cpp_path.write_text(code)
    return code, None



def translate(ctx: KernelContext, state: KernelState) -> dict:
    idx = state.get("model_index", 0)
    spec = ctx.chain[idx]
    ctx.mark("translate")
    hist = [f"translate:{spec.name}"]
    t0 = time.monotonic()
    if not spec.is_llm:
        opts = options_from_dict(state.get("options"))
        try:
            port = _guard(ctx, "translate", ctx.stages.translate, ctx.kernel, ctx.source, opts)
        except TranslationRefused as exc:
            d = exc.diagnostics[0] if exc.diagnostics else None
            reason = (str(d) if d.file else f"{ctx.job.file}:{d.line}: [{d.code}] {d.message}") if d else str(exc)
            hybrid = next((x for x in exc.diagnostics[1:] if x.code == "no-parallel-nest"), None)
            if hybrid is not None:  # auto mode: why the full port and why the hybrid one were refused
                reason += f"; {hybrid.message}"
            ctx.attempt("translate", False, reason, model=spec.name, seconds=time.monotonic() - t0)
            codes = {x.code for x in exc.diagnostics}
            if is_interface(codes):  # no port can meet the contract: no LLM either (reasons.py)
                return {**_stop("refused", reason, d.code), "history": hist}
            return {**_next_model_or(ctx, state, "refused", reason, d.code if d else "refused"), "history": hist}
        _guard(ctx, "translate", ctx.stages.write_port, port, ctx.port_dir)
        ctx.attempt("translate", True, "; ".join(port.notes)[:500], model=spec.name,
                    seconds=time.monotonic() - t0)
        return {"model": spec.name, "options": options_to_dict(port.options or opts),
                "patterns": list(port.patterns), "versions": list(port.versions), "compiled": [],
                "verified": [], "failure": None, "route": "validate", "history": hist, **_mode_update(port)}
    # --- LLM translation: the rules' scaffold (header, module, CMake) is the contract
    draft, refusal = "", state.get("refusal", "")
    if ctx.cpp_path.is_file() and state.get("model") == "rules":
        draft = ctx.cpp_path.read_text()
    elif not (ctx.port_dir / f"{ctx.name}.kokkos.hpp").is_file():
        try:
            port = _guard(ctx, "translate", ctx.stages.translate, ctx.kernel, ctx.source, None)
            _guard(ctx, "translate", ctx.stages.write_port, port, ctx.port_dir)
            draft = port.files.get(f"{ctx.name}.kokkos.cpp", "")
        except TranslationRefused as exc:
            refusal = refusal or "; ".join(str(d) for d in exc.diagnostics)
            scaffold = ctx.stages.scaffold(ctx.kernel, ctx.source)
            if scaffold is None:
                reason = (f"the rules refused ({refusal}) and no scaffold (header, Fortran module, CMake) "
                          f"is available for an LLM port")
                ctx.attempt("translate", False, reason, model=spec.name)
                return {**_next_model_or(ctx, state, "refused", reason, "no-scaffold"), "history": hist}
            _guard(ctx, "translate", ctx.stages.write_port, scaffold, ctx.port_dir)
    header = ctx.header_text()
    hybrid = ctx.hybrid_info()
    messages = render("translate.j2", kernel=ctx.kernel, summary=ir_summary(ctx.kernel),
                      signature=entry_signature(ctx.kernel, header), header=header, draft=draft,
                      refusal=refusal, hybrid=hybrid)
    code, stop = _ask_llm(ctx, state, spec, "translate", messages, hist)
    if stop is not None:
        return stop
    ctx.attempt("translate", bool(code.strip()), f"{len(code)} characters of C++", model=spec.name,
                seconds=time.monotonic() - t0)
    return {"model": spec.name, "options": {}, "patterns": [], "versions": [], "compiled": [], "verified": [],
            "failure": None, "route": "validate", "history": hist,
            "mode": "hybrid" if hybrid else "full", "hybrid": hybrid or {}}

def validate(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    ctx.mark("validate")
    code = ctx.cpp_path.read_text() if ctx.cpp_path.is_file() else ""
    backend = (state.get("backends") or cfg.backends)[0]
    model = state.get("model", "")
    # the rules' own code is checked for forbidden patterns only: its syntax is the build's job
    (clean, diags), secs = _timed(_guard, ctx, "validate", ctx.stages.validate, code, ctx.kernel,
                                  ctx.port_dir, backend, compile_check=model != "rules")
    if clean and clean != code:
        ctx.cpp_path.write_text(clean)
    if diags:
        ctx.attempt("validate", False, "\n".join(str(d) for d in diags[:10]), model=model, seconds=secs)
        return {"failure": dbg.failure_from_diagnostics(diags, "validate"), "route": "debug",
                "history": ["validate"]}
    ctx.attempt("validate", True, model=model, seconds=secs)
    return {"route": "compile", "history": ["validate"]}

def compile_(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    backends = state.get("backends") or cfg.backends
    done = list(state.get("compiled") or [])
    b = next(x for x in backends if x not in done)
    ctx.mark("compile", b)
    res, secs = _timed(_guard, ctx, "compile", ctx.stages.build, ctx.kernel, ctx.source, ctx.port_dir, b)
    model = state.get("model", "")
    hist = [f"compile:{b}"]
    if not res.ok:
        f = dbg.failure_from_build(res)
        ctx.attempt("compile", False, f["detail"] or f["message"], model=model, backend=b, seconds=secs)
        return {"failure": f, "route": "debug", "history": hist}
    ctx.attempt("compile", True, getattr(res, "cmake", "") or "", model=model, backend=b, seconds=secs)
    if ctx.db is not None and getattr(res, "cmake", ""):
        ctx.db.set_kernel(ctx.run_id, ctx.kernel_id, cmake=res.cmake)  # which CMake built the port
    done.append(b)
    return {"compiled": done, "route": "compile" if len(done) < len(backends) else "run", "history": hist}

def run(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    backends = state.get("backends") or cfg.backends
    done = list(state.get("verified") or [])
    b = next(x for x in backends if x not in done)
    ctx.mark("run", b)
    verdict, secs = _timed(_guard, ctx, "run", ctx.stages.verify, ctx.kernel, ctx.source, ctx.port_dir, b)
    model = state.get("model", "")
    hist = [f"run:{b}"]
    opt = state.get("opt") or {}
    timed_next = cfg.bench or (cfg.optimize and cfg.optimizer_variants > 0)
    if verdict.passed and timed_next:
        # what is timed is proven first: the build at the timing sizes (kept per build,
        # so the bench after this finds it done)
        proof, s2 = _timed(_guard, ctx, "run", _prove_timing, ctx.stages, ctx.kernel, ctx.source, ctx.port_dir, b)
        secs += s2
        if proof is not None:
            verdict = _with_proof(verdict, proof)
    if ctx.db is not None:
        ctx.db.add_verdict(ctx.run_id, ctx.kernel_id, b, verdict.passed, verdict.reason, to_jsonable(verdict))
    if not verdict.passed and getattr(verdict, "code", ""):
        # no input the original accepts (harness.redraw): nothing to debug in the port
        where = f"{ctx.job.file}:{ctx.kernel.line_start}" if ctx.kernel is not None else ctx.job.file
        ctx.attempt("run", False, verdict.reason, model=model, backend=b, seconds=secs)
        return {"status": "refused", "reason": f"{where}: [{verdict.code}] {verdict.reason}",
                "reason_code": verdict.code, "route": "finalize", "history": hist}
    if not verdict.passed:
        f = dbg.failure_from_verdict(verdict)
        ctx.attempt("run", False, f["message"], model=model, backend=b, seconds=secs)
        return {"failure": f, "route": "debug", "history": hist}
    ctx.attempt("run", True, f"{len(verdict.cases)} cases passed", model=model, backend=b, seconds=secs)
    done.append(b)
    if len(done) < len(backends):
        return {"verified": done, "route": "run", "history": hist}
    want_opt = timed_next and not opt.get("done")
    return {"verified": done, "failure": None, "route": "optimize" if want_opt else "finalize",
            "history": hist}

def debug(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    f = dict(state.get("failure") or {})
    stage = f.get("stage", "run")
    rounds = dict(state.get("debug_rounds") or {})
    used = rounds.get(stage, 0)
    limit = cfg.debug_rounds.get(stage, 2)
    idx = state.get("model_index", 0)
    spec = ctx.chain[idx]
    ctx.mark("debug", f.get("backend", ""))
    hist = [f"debug:{stage}"]
    where = f"{ctx.job.file}:{ctx.kernel.line_start}" if ctx.kernel is not None else ctx.job.file
    on = f" on {f['backend']}" if f.get("backend") else ""
    reason = f"{where}: {stage} failed{on}: {f.get('message') or 'no detail'}"
    code = f.get("code") or f"{stage}-failed"
    if used >= limit:
        ctx.attempt("debug", False, f"{limit} debug round(s) for {stage} used up", model=spec.name)
        return {**_next_model_or(ctx, state, "failed", reason, code,
                                 refusal=f"the {spec.name} port failed at {stage}: {reason}"), "history": hist}
    rounds[stage] = used + 1
    t0 = time.monotonic()
    if not spec.is_llm:
        tried = list(state.get("debug_tried") or [])
        if f.get("line") and str(f.get("file", "")).endswith(".cpp") and ctx.cpp_path.is_file():
            f["fortran_line"] = dbg.fortran_loop_line(ctx.cpp_path.read_text(), int(f["line"]))
        nxt = dbg.next_rules_variant(ctx.kernel, options_from_dict(state.get("options")), f, tried,
                                     rounds_left=limit - used)
        if nxt is None:
            ctx.attempt("debug", False, "no safer rules variant left", model=spec.name)
            return {**_next_model_or(ctx, state, "failed", reason, code,
                                     refusal=f"the rules port failed at {stage}: {reason}"), "history": hist}
        name, opts = nxt
        try:
            port = _guard(ctx, "debug", ctx.stages.translate, ctx.kernel, ctx.source, opts)
        except TranslationRefused as exc:
            ctx.attempt("debug", False, f"variant {name} refused: {exc}", model=spec.name)
            return {"debug_rounds": rounds, "debug_tried": tried + [name], "route": "debug", "history": hist}
        _guard(ctx, "debug", ctx.stages.write_port, port, ctx.port_dir)
        ctx.attempt("debug", True, f"variant {name}", model=spec.name, seconds=time.monotonic() - t0)
        return {"options": options_to_dict(port.options or opts), "patterns": list(port.patterns),
                "versions": list(port.versions), "debug_rounds": rounds, "debug_tried": tried + [name],
                "compiled": [], "verified": [], "route": "validate", "history": hist, **_mode_update(port)}
    code_now = ctx.cpp_path.read_text() if ctx.cpp_path.is_file() else ""
    header = ctx.header_text()
    messages = render("debug.j2", kernel=ctx.kernel, code=code_now, failure=_fill(f), header=header,
                      hybrid=ctx.hybrid_info(),
                      signature=entry_signature(ctx.kernel, header))
    new_code, stop = _ask_llm(ctx, state, spec, "debug", messages, hist)
    if stop is not None:
        return stop
    ctx.attempt("debug", bool(new_code.strip()), f"{spec.name} fix for {stage}", model=spec.name,
                seconds=time.monotonic() - t0)
    return {"debug_rounds": rounds, "compiled": [], "verified": [], "route": "validate", "history": hist}

def optimize(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    ctx.mark("optimize")
    o = dict(state.get("opt") or {})
    backends = state.get("backends") or cfg.backends
    hist = ["optimize"]
    model = state.get("model", "")
    if not o.get("baseline"):
        timings = []
        if cfg.bench or (cfg.optimize and cfg.optimizer_variants > 0):
            ts, secs = _timed(_guard, ctx, "optimize", ctx.stages.bench, ctx.kernel, ctx.source, ctx.port_dir,
                              backends)
            timings = [to_jsonable(t) for t in ts]
            ctx.attempt("optimize", True, f"baseline: {len(timings)} timings", model=model, seconds=secs)
        o.update(baseline=True, tried=[], baseline_timings=timings)
        n_var = cfg.optimizer_variants if cfg.optimize and timings else 0
        if model == "rules":
            o["plan"] = [n for n, _ in opt_agent.variants(ctx.kernel, options_from_dict(state.get("options")),
                                                          n_var, backends)]
        else:  # the LLM that wrote the port is asked for faster versions
            o["plan"] = [f"llm-{i + 1}" for i in range(n_var)]
        route = "optimize" if o["plan"] else "finalize"
        if not o["plan"]:
            o["done"] = True
        return {"opt": o, "timings": timings, "route": route, "history": hist}
    plan = [n for n in o.get("plan", []) if n not in o.get("tried", [])]
    if not plan:
        o["done"] = True
        return {"opt": o, "route": "finalize", "history": hist}
    name = plan[0]
    o["tried"] = list(o.get("tried", [])) + [name]
    vdir = ctx.port_dir / "variants" / name
    t0 = time.monotonic()
    if model == "rules":
        cand = dict(opt_agent.variants(ctx.kernel, options_from_dict(state.get("options")), 1000,
                                       backends)).get(name)
        try:
            keep, why, vtimings = _try_variant(ctx, cand, vdir, backends, o.get("baseline_timings") or [])
        except Exception as exc:  # a broken variant never costs the verified port
            keep, why, vtimings = False, f"variant error: {type(exc).__name__}: {exc}", []
    else:
        cand = options_from_dict(state.get("options"))
        spec = ctx.chain[state.get("model_index", 0)]
        try:
            keep, why, vtimings = _try_llm_variant(ctx, spec, vdir, backends, o.get("baseline_timings") or [])
        except BudgetReached as exc:  # the port is verified already: only the optimization stops
            ctx.attempt("optimize", False, f"variant {name}: {exc}", model=model)
            o["done"] = True
            return {"opt": o, "route": "finalize", "history": hist}
        except Exception as exc:
            keep, why, vtimings = False, f"variant error: {type(exc).__name__}: {exc}", []
    seconds = time.monotonic() - t0
    if keep and model == "rules":
        # a win: the rules' variants are all tried (cheap, and the first win need not be the
        # best: Kokkos' own policies had won dgemm on noise before register blocking was tried);
        # the best of the wins is kept once the plan is done
        o["wins"] = list(o.get("wins", [])) + [{
            "name": name, "why": why, "seconds": seconds, "timings": vtimings,
            "speedup": opt_agent.speedup(vtimings, o.get("baseline_timings") or []),
            "options": options_to_dict(cand) if cand else {}}]
    else:
        ctx.attempt("optimize", keep, f"variant {name}: {why}", model=model, seconds=seconds)
    if keep and model != "rules":  # an LLM's variant costs tokens: the first win is kept
        return _keep_variant(ctx, o, name, vdir, options_to_dict(cand) if cand else {}, vtimings, hist)
    if len(plan) > 1:
        return {"opt": o, "route": "optimize", "history": hist}
    wins = o.get("wins") or []
    if wins:
        best = max(wins, key=lambda w: w["speedup"])
        for w in wins:
            detail = w["why"] if w is best else (f"{w['why']}; not kept: {best['name']} was faster "
                                                 f"({best['speedup']:.2f}x against {w['speedup']:.2f}x)")
            ctx.attempt("optimize", w is best, f"variant {w['name']}: {detail}", model=model, seconds=w["seconds"])
        return _keep_variant(ctx, o, best["name"], ctx.port_dir / "variants" / best["name"], best["options"],
                             best["timings"], hist)
    o["done"] = True
    return {"opt": o, "route": "finalize", "history": hist}


def _keep_variant(ctx: KernelContext, o: dict, name: str, vdir: Path, options: dict, timings: list,
                  hist: list) -> dict:
    """The variant's files replace the port's; it is proven again there (route validate)."""
    for fname in os.listdir(vdir):
        src = vdir / fname
        if src.is_file() and not fname.endswith((".spec.yaml", ".json")):
            shutil.copy2(src, ctx.port_dir / fname)
    o.update(done=True, kept=name)
    return {"opt": o, "options": options, "timings": timings,
            "compiled": [], "verified": [], "route": "validate", "history": hist}

def finalize(ctx: KernelContext, state: KernelState) -> dict:
    cfg = ctx.config
    ctx.mark("finalize")
    backends = state.get("backends") or cfg.backends
    status = state.get("status") or ""
    reason, code = state.get("reason", ""), state.get("reason_code", "")
    if not status:
        if set(backends) <= set(state.get("verified") or []):
            status = "verified"
        else:
            status, reason = "failed", reason or "not verified on every backend"
    kept = (state.get("opt") or {}).get("kept")
    if ctx.db is not None:
        for t in state.get("timings") or []:
            ctx.db.add_timing(ctx.run_id, ctx.kernel_id, t["variant"], t["median_s"],
                              threads=t.get("threads", 1), spread_s=t.get("spread_s", 0.0),
                              repeats=t.get("repeats", 0), kernel_only=t.get("kernel_only", True),
                              gbytes_per_s=t.get("gbytes_per_s"), gflops=t.get("gflops"),
                              roofline_fraction=t.get("roofline_fraction"), sizes=t.get("sizes"),
                              proven_sizes=t.get("proven_sizes"))
        ctx.db.set_kernel(ctx.run_id, ctx.kernel_id, status=status, reason=reason[:1000], reason_code=code,
                          model=state.get("model", ""),
                          patterns=state.get("patterns") or [], versions=state.get("versions") or [],
                          mode=state.get("mode") or "", hybrid=state.get("hybrid") or {},
                          port_dir=str(ctx.port_dir),
                          finished=time.time())
        ctx.attempt("finalize", status == "verified", f"{status}{' (optimizer kept ' + kept + ')' if kept else ''}"
                    f"{': ' + reason if reason and status != 'verified' else ''}", model=state.get("model", ""))
        _record_sources(ctx)
    if ctx.port_dir.is_dir():
        (ctx.port_dir / "outcome.json").write_text(json.dumps(
            {"kernel_id": ctx.kernel_id, "status": status, "reason": reason, "reason_code": code,
             "model": state.get("model", ""), "mode": state.get("mode") or "",
             "options": state.get("options") or {}, "optimizer_kept": kept,
             "history": state.get("history", []) + ["finalize"]}, indent=2))
    return {"status": status, "reason": reason, "reason_code": code, "history": ["finalize"]}


NODES: dict[str, Callable[[KernelContext, KernelState], dict]] = {
    "translate": translate, "validate": validate, "compile": compile_, "run": run, "debug": debug,
    "optimize": optimize, "finalize": finalize}


def make_nodes(ctx: KernelContext) -> dict[str, Callable[[KernelState], dict]]:
    """The graph's nodes for one kernel: each top-level node with ``ctx`` bound."""
    return {name: functools.partial(fn, ctx) for name, fn in NODES.items()}


def _record_sources(ctx: KernelContext) -> None:
    """The routine's lines of the original and the port kept, for the report's side-by-side
    view (the report reads only the database)."""
    fortran, first = "", 1
    k = ctx.kernel
    if k is not None and k.line_start:
        try:
            lines = Path(ctx.job.file).read_text(errors="replace").splitlines()
        except OSError:
            lines = []
        first = k.line_start
        fortran = "\n".join(lines[k.line_start - 1:k.line_end or k.line_start])
    kokkos = ctx.cpp_path.read_text(errors="replace") if ctx.cpp_path.is_file() else ""
    if fortran or kokkos:
        ctx.db.set_sources(ctx.run_id, ctx.kernel_id, fortran_file=ctx.job.rel_file or ctx.job.file,
                           fortran_first_line=first, fortran=fortran,
                           kokkos_file=ctx.cpp_path.name if kokkos else "", kokkos=kokkos)


def _fill(f: dict) -> dict:
    out = {"stage": "", "backend": "", "message": "", "detail": "", "output": "", "worst_index": None,
           "max_abs_err": "", "max_rel_err": "", "tolerance": "", "sizes": None}
    out.update({k: v for k, v in f.items() if v is not None})
    return out


def _try_variant(ctx: KernelContext, opts, vdir: Path, backends: list[str],
                 baseline: list[dict]) -> tuple[bool, str, list[dict]]:
    """Translate, build, verify and time one optimizer variant in its own directory."""
    st = ctx.stages
    try:
        port = st.translate(ctx.kernel, ctx.source, opts)
    except TranslationRefused as exc:
        return False, f"refused: {exc}", []
    if vdir.exists():
        shutil.rmtree(vdir)
    copy_spec(ctx.port_dir, vdir, ctx.name)
    st.write_port(port, vdir)
    why = _build_and_prove(st, ctx, vdir, backends)
    if why:
        return False, why, []
    timings = [to_jsonable(t) for t in st.bench(ctx.kernel, ctx.source, vdir, backends)]
    return (*opt_agent.is_better(timings, baseline), timings)


def _build_and_prove(st: Stages, ctx: KernelContext, vdir: Path, backends: list[str]) -> str:
    """Build, verify and verify at the timing sizes a variant on every backend; '' when
    it may be timed, else why it is rejected."""
    for b in backends:
        res = st.build(ctx.kernel, ctx.source, vdir, b)
        if not res.ok:
            return f"build failed on {b}"
        v = st.verify(ctx.kernel, ctx.source, vdir, b)
        if not v.passed:
            return f"not verified on {b}: {v.reason}"
        pv = _prove_timing(st, ctx.kernel, ctx.source, vdir, b)
        if pv is not None and not pv.passed:
            return f"not verified at the timing sizes on {b}: {pv.reason}"
    return ""


def _prove_timing(st, kernel, source, port_dir: Path, backend: str):
    """``st.prove_timing`` (Stages); None from a stage set written before it existed
    (a ``stages_factory`` object without the method has no timing-size proof)."""
    fn = getattr(st, "prove_timing", None)
    return fn(kernel, source, port_dir, backend) if fn is not None else None


def _with_proof(verdict, proof):
    """The verdict of the correctness cases with the timing-size case appended: one
    verdict per backend, failing when the port fails at the timing sizes (the failure
    named). Where the original itself rejects the timing-size inputs (a code: it fails,
    reads outside its arrays, returns inf/NaN there) the port stays verified by its
    correctness cases and is not timed on that backend (the note says why; the bench
    skips a backend whose timing-size proof did not pass)."""
    if not proof.passed and getattr(proof, "code", ""):
        sizes = proof.cases[0].sizes if proof.cases else {}
        return dataclasses.replace(verdict, notes=list(verdict.notes) + [
            f"not timed on {proof.backend}: at the timing sizes {sizes} the original is at fault "
            f"[{proof.code}]: {proof.reason}; give sizes.timing in the kernel's spec"])
    out = dataclasses.replace(verdict, cases=list(verdict.cases) + list(proof.cases),
                              notes=list(verdict.notes) + list(proof.notes))
    if not proof.passed:
        out.passed = False
        out.reason = proof.reason or "not verified at the timing sizes"
    return out


def _port_files(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.name not in ("outcome.json", "verdict.json", "timings.json"):
            shutil.copy2(f, dst / f.name)


def _profile(port_dir: Path) -> dict:
    """Per-kernel times from the Kokkos profiling hooks, when a run left a profile (an
    optional hint for the optimizer's prompt: a profile that cannot be read is left out
    with a warning naming the file; any other error is a bug and is raised)."""
    from ..profiling import ProfilingError, kernel_times, merge, read_profile

    files = sorted(port_dir.glob("build/**/kokkosp*.json"))
    try:
        return kernel_times(merge(read_profile(f) for f in files)) if files else {}
    except ProfilingError as exc:
        logging.getLogger(__name__).warning("optimizer prompt without a profile: %s", exc)
        return {}


def _try_llm_variant(ctx: KernelContext, spec: ModelSpec, vdir: Path, backends: list[str],
                     baseline: list[dict]) -> tuple[bool, str, list[dict]]:
    """Ask the LLM for a faster port; validate, build, verify and time it in its own directory."""
    st = ctx.stages
    if vdir.exists():
        shutil.rmtree(vdir)
    _port_files(ctx.port_dir, vdir)
    header = ctx.header_text()
    messages = render("optimize.j2", kernel=ctx.kernel, code=ctx.cpp_path.read_text(), timings=baseline,
                      signature=entry_signature(ctx.kernel, header), profile=_profile(ctx.port_dir))
    try:
        code, answer = ctx.client(spec).ask_code(messages, "optimize", entry=ctx.entry)
    except LLMCallFailed as exc:
        return False, f"LLM call failed: {exc}", []
    ctx.save_answer("optimize", answer)
    clean, diags = st.validate(code, ctx.kernel, vdir, backends[0])
    if diags:
        return False, f"rejected by the validator: {diags[0]}", []
    (vdir / f"{ctx.name}.kokkos.cpp").write_text(clean)
    why = _build_and_prove(st, ctx, vdir, backends)
    if why:
        return False, why, []
    timings = [to_jsonable(t) for t in st.bench(ctx.kernel, ctx.source, vdir, backends)]
    return (*opt_agent.is_better(timings, baseline), timings)
