"""Whole-file analysis after the IR is built: argument intents and facts, loop dependence.

Calls are analysed through the effects of the callees the file defines
(``effects.Calls.of_file``); the program model analyses them again with every file of
the tree (``interproc.reanalyse_calls``)."""
from __future__ import annotations

from . import ir
from .argfacts import argument_facts, infer_intents, legacy_dims
from .dependence import analyse_loops


def analyse_kernel(k: ir.Kernel, callees: dict[str, ir.Kernel], calls=None) -> None:
    """Everything for one kernel (e.g. again after a rewrite of its statements);
    ``calls``: ``effects.Calls`` of its program (its callees' effects)."""
    infer_intents(k, callees)
    legacy_dims(k, calls)
    analyse_loops(k, calls)
    argument_facts(k, calls)


def analyse_file(sf: ir.SourceFile) -> None:
    """Intents need the callees' intents (CALLs to routines of the same file): iterate
    until nothing changes, then analyse loops (calls to the file's routines through
    their effects)."""
    callees = {k.name: k for k in sf.kernels}
    for _ in range(6):
        before = [[a.intent for a in k.args] for k in sf.kernels]
        for k in sf.kernels:
            try:
                infer_intents(k, callees)
            except Exception as exc:  # analysis bug: the kernel stays, flagged
                k.diagnostics.append(ir.Diagnostic("analysis-error", f"argument analysis failed: {type(exc).__name__}: {exc}",
                                                   k.line_start, k.file))
        if before == [[a.intent for a in k.args] for k in sf.kernels]:
            break
    calls = None
    kernels = list(sf.kernels)
    if any(k.calls for k in kernels + list(sf.program_units)):
        from .effects import Calls
        calls = Calls.of_file(sf)
        kernels = calls.callee_first(kernels)
    for k in kernels + list(sf.program_units):
        try:
            if k.kind == "program":
                infer_intents(k, callees)
            legacy_dims(k, calls)
            analyse_loops(k, calls)
            argument_facts(k, calls)
        except Exception as exc:
            k.diagnostics.append(ir.Diagnostic("analysis-error", f"loop analysis failed: {type(exc).__name__}: {exc}",
                                               k.line_start, k.file))
            for s in ir.walk(k.body):
                if isinstance(s, ir.Do):
                    s.info = ir.LoopInfo(parallel=False, reasons=[ir.Diagnostic(
                        "analysis-error", f"loop analysis failed: {exc}", s.line)], tightly_nested_parallel=0)
