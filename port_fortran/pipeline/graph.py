"""The per-kernel LangGraph state machine and :func:`port_kernel`.

::

    START -> translate -> validate -> compile (each backend) -> run (each backend) -> optimize -> finalize -> END
                 ^  |          |            |                        |                  |
                 |  '--(refused, next model in the chain)            |                  '-(kept variant: re-prove)-> validate
                 |             '-------------+-----------------------'
                 |                           v
                 '------(rounds used up, next model)----- debug --(new port)--> validate

Every failure goes to ``debug``, which produces a new port (rules: a safer translator
variant; LLM: the model's fix) and routes back through validate to the failing stage, at
most ``debug_rounds[stage]`` times per model; then the next model of the chain takes over,
or the kernel is reported failed with the reason. LLM nodes carry a RetryPolicy for
transient faults; the whole graph has a recursion limit. State is checkpointed to
``<out>/checkpoints.sqlite`` (thread ``<run_id>:<kernel_id>``) after each node, so an
interrupted kernel resumes from its last finished stage. The nodes are top-level functions
of :mod:`.nodes`.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable, Optional

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from ..agents.llm import LLMCallFailed, ModelSpec, TransientLLMError
from ..config import Config
from ..errors import UserError
from .checkpoint import open_checkpointer
from .nodes import KernelContext, StageError, make_nodes
from .stages import Stages, make_stages
from .state import FINISHED, KernelJob, KernelOutcome, KernelState

# ----------------------------------------------------------------------------- graph


def _route(state) -> str:
    return state.get("route", "finalize")


def build_graph(ctx: KernelContext) -> StateGraph:
    """The uncompiled StateGraph for one kernel (compile it with a checkpointer)."""

    class S(KernelState, total=False):
        route: str

    g = StateGraph(S)
    nodes = make_nodes(ctx)
    retry = RetryPolicy(max_attempts=max(1, ctx.config.llm.node_retries), initial_interval=0.2, backoff_factor=2.0,
                        max_interval=10.0, jitter=True, retry_on=lambda e: isinstance(e, TransientLLMError))
    for name, fn in nodes.items():
        if name in ("translate", "debug"):
            g.add_node(name, fn, retry_policy=retry)
        else:
            g.add_node(name, fn)
    g.add_edge(START, "translate")
    g.add_conditional_edges("translate", _route, {"validate": "validate", "translate": "translate",
                                                  "finalize": "finalize"})
    g.add_conditional_edges("validate", _route, {"compile": "compile", "debug": "debug", "finalize": "finalize"})
    g.add_conditional_edges("compile", _route, {"compile": "compile", "run": "run", "debug": "debug",
                                                "finalize": "finalize"})
    g.add_conditional_edges("run", _route, {"run": "run", "debug": "debug", "optimize": "optimize",
                                            "finalize": "finalize"})
    g.add_conditional_edges("debug", _route, {"validate": "validate", "translate": "translate", "debug": "debug",
                                              "finalize": "finalize"})
    g.add_conditional_edges("optimize", _route, {"optimize": "optimize", "validate": "validate",
                                                 "finalize": "finalize"})
    g.add_edge("finalize", END)
    return g


def port_dir_for(out_dir: str | Path, rel_file: str, kernel: str) -> Path:
    """``<out>/<file-stem>/<kernel>/``; files in sub-directories of a tree keep their
    directories (``<out>/sub/util/<kernel>``) so equal stems never collide."""
    rel = Path(rel_file)
    parts = [p for p in rel.parent.parts if p not in ("", ".", "..")]
    return Path(out_dir).joinpath(*parts, rel.stem, kernel)


def port_kernel(job: KernelJob, *, stages: Optional[Stages] = None,
                chat_factory: Optional[Callable[[ModelSpec], Any]] = None,
                on_stage: Optional[Callable[[str, str], None]] = None) -> KernelOutcome:
    """One kernel through the graph, recorded in ``<out>/port-fortran.db``. Picklable (a
    top-level function of plain data) for process pools and Parsl. Never raises for a
    kernel's own failures: they become the outcome's status and reason."""
    from ..reports.db import RunDB

    t_start = time.monotonic()
    config = Config.from_dict(job.config)
    if not job.port_dir:
        job.port_dir = str(port_dir_for(job.out_dir, job.rel_file, job.kernel))
    db = RunDB.in_dir(job.out_dir)
    try:
        row = db.kernel(job.run_id, job.kernel_id)
        if row and row["status"] in FINISHED:  # finished before an interruption: not repeated
            return KernelOutcome(job.kernel_id, row["status"], row["reason"], row["reason_code"], row["model"],
                                 row["port_dir"], resumed=True)
        db.set_kernel(job.run_id, job.kernel_id, status="running", started=time.time(), port_dir=job.port_dir)
        stages = stages or make_stages(config)
        if job.kind == "program":  # a main program: its hybrid port proven by running it
            from ..fortran.program import load_program
            from .program_job import port_program

            Path(job.port_dir).mkdir(parents=True, exist_ok=True)
            return port_program(job, config, db, load_program(job.program))
        ctx = KernelContext(job, config, stages, db, chat_factory)
        ctx.on_stage = on_stage
        try:
            if job.program and hasattr(stages, "use_program"):
                from ..fortran.program import load_program
                stages.use_program(load_program(job.program))
            ctx.kernel, ctx.source = stages.load(job.file, job.kernel, config.include_dirs, config.defines)
        except Exception as exc:
            return _record_error(db, job, f"{job.file}: cannot load kernel {job.kernel}: {exc}", "load-error",
                                 t_start)
        Path(job.port_dir).mkdir(parents=True, exist_ok=True)
        saver, conn = open_checkpointer(job.out_dir)
        try:
            graph = build_graph(ctx).compile(checkpointer=saver)
            run_cfg = {"configurable": {"thread_id": job.thread_id}, "recursion_limit": config.graph_steps()}
            snap = graph.get_state(run_cfg)
            resumed = bool(snap and snap.next)
            initial = None if resumed else {
                "run_id": job.run_id, "kernel_id": job.kernel_id, "backends": list(config.backends),
                "model_index": 0, "model": "", "options": {}, "patterns": [], "compiled": [], "verified": [],
                "failure": None, "refusal": "", "debug_rounds": {}, "debug_tried": [], "opt": {}, "timings": [],
                "history": [], "status": "", "reason": "", "reason_code": "", "route": ""}
            final = _invoke(graph, initial, run_cfg, ctx)
        finally:
            conn.close()
        if isinstance(final, KernelOutcome):
            final.resumed = resumed
            return _in_source(db, job, final, ctx.kernel)
        return _in_source(db, job, KernelOutcome(
            job.kernel_id, final.get("status", "error"), final.get("reason", ""), final.get("reason_code", ""),
            final.get("model", ""), job.port_dir, stages=list(final.get("history", [])),
            seconds=time.monotonic() - t_start, cost_usd=sum(c["cost_usd"] for c in ctx.ledger.calls),
            resumed=resumed), ctx.kernel)
    except Exception as exc:  # a bug must not stop the batch: recorded as this kernel's error
        return _record_error(db, job, f"internal error: {type(exc).__name__}: {exc}", "internal-error", t_start)
    finally:
        db.close()


def _in_source(db, job: KernelJob, outcome: KernelOutcome, kernel=None) -> KernelOutcome:
    """A kernel read from a copy the tool made of the user's file (``job.source``: an
    internal procedure made callable, fortran/lift.py) has its reason name the user's file,
    whose line numbers the copy keeps; one whose text an ``#include`` brings has its lines
    named in that header (``Kernel.text_file``), which they are numbered in."""
    reason = outcome.reason or ""
    header = getattr(kernel, "text_file", None)
    if job.source and job.file in reason:
        reason = reason.replace(job.file, job.source)
    if header:
        reason = re.sub(re.escape(job.source or job.file) + r":(\d+)", lambda m: f"{header}:{m.group(1)}", reason)
    if reason != (outcome.reason or ""):
        outcome.reason = reason
        db.set_kernel(job.run_id, job.kernel_id, reason=outcome.reason[:1000])
    return outcome


def _invoke(graph, initial, run_cfg, ctx: KernelContext):
    from langgraph.errors import GraphRecursionError

    try:
        return graph.invoke(initial, run_cfg) or {}
    except GraphRecursionError:
        reason = (f"the graph hit its recursion limit ({ctx.config.graph_steps()} steps) without finishing; "
                  "raise recursion_limit or lower debug_rounds")
        return _record_error(ctx.db, ctx.job, reason, "recursion-limit", None, status="failed")
    except StageError as exc:
        return _record_error(ctx.db, ctx.job, str(exc), "stage-error", None)
    except (TransientLLMError, LLMCallFailed) as exc:
        return _record_error(ctx.db, ctx.job, f"LLM call failed after retries: {exc}", "llm-error", None)
    except UserError as exc:  # e.g. a model that needs a key nobody set
        return _record_error(ctx.db, ctx.job, str(exc), "config-error", None)


def _record_error(db, job: KernelJob, reason: str, code: str, t_start: Optional[float],
                  status: str = "error") -> KernelOutcome:
    if db is not None:
        db.set_kernel(job.run_id, job.kernel_id, status=status, reason=reason[:1000], reason_code=code,
                      finished=time.time(), port_dir=job.port_dir)
        db.add_attempt(job.run_id, job.kernel_id, "finalize", False, reason[:2000])
    return KernelOutcome(job.kernel_id, status, reason, code, port_dir=job.port_dir,
                         seconds=(time.monotonic() - t_start) if t_start else 0.0)
