"""The small, JSON-serialisable things that travel: a job, the graph state, the outcome.

The graph state holds names, paths, counters and short records (dicts) — never IR trees or
file contents; those live in the per-kernel context and on disk, so checkpoints stay small.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional, TypedDict

from ..records import TranslateOptions

FINISHED = ("verified", "failed", "refused", "budget-reached")  # not repeated on --resume
STAGES = ("translate", "validate", "compile", "run", "debug", "optimize", "finalize")


@dataclass
class KernelJob:
    """One kernel to port (picklable: plain data only)."""

    run_id: str
    out_dir: str
    file: str  # path of the Fortran file as given
    rel_file: str  # path used in the kernel id and the port directory
    kernel: str
    config: dict  # config.Config.to_dict()
    port_dir: str = ""
    program: str = ""  # the saved program model of the run (fortran.program.Program.save), '' if none
    kind: str = "routine"  # 'program': a main program, proven by running it (pipeline/program_job.py)
    # a program job: its internal procedures proven on their own (fortran/lift.py), whose rows
    # their own jobs write
    alone: list = field(default_factory=list)
    source: str = ""  # the user's file when ``file`` is a copy the tool made of it (fortran/lift.py)

    @property
    def kernel_id(self) -> str:
        return f"{self.rel_file}:{self.kernel}"

    @property
    def thread_id(self) -> str:
        return f"{self.run_id}:{self.kernel_id}"


@dataclass
class KernelOutcome:
    kernel_id: str
    status: str  # verified | failed | refused | budget-reached | error
    reason: str = ""
    reason_code: str = ""
    model: str = ""
    port_dir: str = ""
    stages: list[str] = field(default_factory=list)  # the path through the graph
    seconds: float = 0.0
    cost_usd: float = 0.0
    resumed: bool = False

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class KernelState(TypedDict, total=False):
    run_id: str
    kernel_id: str
    backends: list[str]
    model_index: int  # index in the model chain of the model that owns the current port
    model: str  # name of the model that wrote the current port
    options: dict  # TranslateOptions of the current rules port, as a dict
    patterns: list[str]
    mode: str  # 'full' | 'hybrid': what the current port is
    hybrid: dict  # a hybrid port's summary (translate.hybrid.summary): nests, outlined kernels, kept statements
    versions: list[str]  # loops parallel only under a run-time condition (records.Port.versions)
    compiled: list[str]  # backends built from the current port
    verified: list[str]  # backends verified with the current port
    failure: Optional[dict]  # {stage, backend, code, message, line, detail, output, ...}
    refusal: str  # why the rules refused (for the LLM prompt)
    debug_rounds: dict  # stage -> rounds used with the current model
    debug_tried: list[str]  # rules debugger variants already tried
    opt: dict  # {baseline: bool, tried: [...], kept: name, done: bool}
    timings: list[dict]
    history: Annotated[list[str], operator.add]  # every node visit, e.g. 'compile:openmp'
    status: str  # '' while running; verified | failed | refused | budget-reached | error
    reason: str
    reason_code: str


def options_to_dict(o: Optional[TranslateOptions]) -> dict:
    if o is None:
        return {}
    d = dataclasses.asdict(o)
    d["serial_loops"] = sorted(o.serial_loops)
    d["tile"] = list(o.tile) if o.tile is not None else None
    return d


def options_from_dict(d: Optional[dict]) -> Optional[TranslateOptions]:
    if not d:
        return None
    d = dict(d)
    d["serial_loops"] = set(d.get("serial_loops") or ())
    if d.get("tile") is not None:
        d["tile"] = tuple(d["tile"])
    known = {f.name for f in dataclasses.fields(TranslateOptions)}
    return TranslateOptions(**{k: v for k, v in d.items() if k in known})


def to_jsonable(obj: Any) -> Any:
    """Records (dataclasses) -> plain dicts, for state and the DB."""
    from ..fortran.ir import to_dict

    d = to_dict(obj)

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "_type"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, set):
            return sorted(x)
        return x

    return strip(d)
