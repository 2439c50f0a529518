"""Run configuration: a YAML file merged with command-line flags, validated.

Precedence: defaults < config file < flags given on the command line. Every error names
the key (and the file) and says what is expected, as a :class:`UserError` (exit 2).

Example file::

    models: [rules, openai:gpt-4o-mini]     # or "rules,openai:gpt-4o-mini"
    base_url: http://127.0.0.1:8000/v1
    backends: [serial, openmp]
    max_cost: 2.50                          # USD for the whole run
    debug_rounds: 2                         # or {validate: 1, compile: 2, run: 2}
    optimizer_variants: 3
    prices:                                 # USD per million tokens
      my-local-model: {input: 0.0, cached: 0.0, output: 0.0}
    llm: {timeout_s: 120, max_retries: 3, requests_per_second: 0.5}
    limits: {build_s: 900, run_s: 300, proof_s: 1800}   # proof_s: one kernel's whole proof (0: none)
    threads: 8
    executor: local
    jobs: 2
    python: true                            # one Python module of the verified kernels
    include_dirs: [include]
    defines: {USE_MPI: "0"}
    mode: auto                              # full | hybrid | auto (full where it can, else hybrid)
    routines:                               # per routine of the tree, per argument
      smooth:
        args:
          u: {extent: "n*m"}                # upper bound of an assumed-size dimension
          w: {dims: ["0:n+1", "1:m"], range: [0.0, 1.0]}   # harness arrays and values
          k: {values: [1, 2]}
    programs:                               # how to run each main program for its proof
      stencil: {args: "10 1000", inputs: [stencil.in], stdin: null, ignore: ["time"], rtol: 1.0e-9, atol: 0}
    fflags: -fno-range-check              # extra gfortran flags for the original (string or list)
    module_search: [src/, ../common/]     # where USEd modules of other files are looked for
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from .errors import UserError
from .records import BACKENDS

DEBUG_STAGES = ("validate", "compile", "run")
MODES = ("auto", "full", "hybrid")  # translate.hybrid.MODES (config stays importable alone)


@dataclass
class LLMSettings:
    timeout_s: float = 180.0  # per call
    max_retries: int = 3  # the client's own retries on 429 / 5xx / connection errors, exponential backoff
    requests_per_second: Optional[float] = None  # client-side rate limit
    temperature: float = 0.0
    max_tokens: Optional[int] = None
    node_retries: int = 2  # graph-level attempts of an LLM node on a transient fault (RetryPolicy)
    api_key_env: str = "OPENAI_API_KEY"


@dataclass
class Limits:
    build_s: float = 900.0
    run_s: float = 120.0  # each run of a driver (harness)
    # the whole proof of one kernel (its cases on every backend, debugger rounds included):
    # past it the kernel is refused `proof-over-budget` (harness.budget); 0 or null: no limit
    proof_s: Optional[float] = 1800.0
    memory_mb: Optional[int] = None


@dataclass
class Config:
    models: list[str] = field(default_factory=lambda: ["rules"])
    base_url: Optional[str] = None
    backends: list[str] = field(default_factory=lambda: ["serial", "openmp"])
    max_cost: Optional[float] = None
    debug_rounds: dict[str, int] = field(default_factory=lambda: {s: 2 for s in DEBUG_STAGES})
    optimize: bool = True
    bench: bool = True  # time the verified port against the original (also the optimizer's baseline)
    optimizer_variants: int = 2
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    llm: LLMSettings = field(default_factory=LLMSettings)
    limits: Limits = field(default_factory=Limits)
    threads: Optional[int] = None
    executor: str = "local"
    jobs: int = 1
    include_dirs: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    # extra gfortran flags for compiling the original (and its driver), after the harness's own
    fflags: list[str] = field(default_factory=list)
    # files and trees where modules USEd by a file but defined elsewhere are looked for
    # (empty: the sources given to the run)
    module_search: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)  # only these kernels (empty: all)
    # full: the routine becomes C++; hybrid: it stays Fortran and its parallel loop nests become
    # Kokkos kernels it calls; auto: full where the rules can, hybrid otherwise
    mode: str = "auto"
    # per routine of the tree: {name: {args: {arg: {extent, dims, range, values}}}} (fortran.program)
    routines: dict[str, dict] = field(default_factory=dict)
    # per main program: how the proof runs it {name: {args, inputs, stdin, ignore, rtol, atol}}
    # (pipeline/program_job.py); a program with no entry runs without arguments
    programs: dict[str, dict] = field(default_factory=dict)
    seeds: Optional[int] = None  # random input sets for the differential test (harness default)
    recursion_limit: Optional[int] = None  # graph steps per kernel; None: enough for the configured bounds
    quiet: bool = False
    python: bool = False  # after the run: one Python module of the verified kernels (OUT/python)
    python_module: str = "kokkos_ports"
    # "module:function" returning a pipeline.stages.Stages; for alternative harnesses and tests
    stages_factory: Optional[str] = None

    def graph_steps(self) -> int:
        """The recursion limit of one kernel's graph: the explicit setting, or enough steps for
        every bounded loop (debug rounds per stage and model, optimizer variants) plus slack."""
        if self.recursion_limit:
            return self.recursion_limit
        cycle = 2 + 2 * len(self.backends)  # debug + validate + compile and run per backend
        per_model = 1 + cycle + sum(self.debug_rounds.values()) * (cycle + 1)
        optimizer = 2 + self.optimizer_variants + cycle
        return 10 + len(self.models) * per_model + optimizer

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        return _build(d, where="configuration")


_TOP_KEYS = {f.name for f in dataclasses.fields(Config)}


def _err(where: str, key: str, msg: str) -> UserError:
    return UserError(f"{where}: key '{key}': {msg}")


def _as_list(v: Any, key: str, where: str) -> list[str]:
    if isinstance(v, str):
        return [x.strip() for x in v.split(",") if x.strip()]
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return [x.strip() for x in v if x.strip()]
    raise _err(where, key, f"expected a list of strings or a comma-separated string, got {v!r}")


def _num(v: Any, key: str, where: str, *, integer: bool = False, minimum: float = 0.0,
         optional: bool = False) -> Any:
    if v is None and optional:
        return None
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok:
        raise _err(where, key, f"expected {'an integer' if integer else 'a number'}, got {v!r}")
    if v < minimum:
        raise _err(where, key, f"must be >= {minimum}, got {v!r}")
    return int(v) if integer else float(v)


def _sub(cls, v: Any, key: str, where: str):
    if v is None:
        return cls()
    if isinstance(v, cls):
        return v
    if not isinstance(v, dict):
        raise _err(where, key, f"expected a mapping, got {v!r}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    out = cls()
    for k, val in v.items():
        if k not in names:
            raise _err(where, f"{key}.{k}", f"unknown key (known: {', '.join(sorted(names))})")
        default = getattr(out, k)
        full = f"{key}.{k}"
        if k == "api_key_env":
            if not isinstance(val, str):
                raise _err(where, full, "expected the name of an environment variable")
            setattr(out, k, val)
        elif isinstance(default, bool):
            if not isinstance(val, bool):
                raise _err(where, full, f"expected true or false, got {val!r}")
            setattr(out, k, val)
        else:
            integer = k in ("max_retries", "node_retries", "max_tokens", "memory_mb")
            setattr(out, k, _num(val, full, where, integer=integer, optional=True))
    if cls is LLMSettings and (out.timeout_s is None or out.timeout_s <= 0):
        raise _err(where, "llm.timeout_s", "must be > 0 (every LLM call has a timeout)")
    if cls is LLMSettings and out.node_retries is not None and out.node_retries < 1:
        raise _err(where, "llm.node_retries", "must be >= 1 (the number of attempts, including the first)")
    return out


def _build(d: dict, where: str, base: Optional[Config] = None) -> Config:
    if not isinstance(d, dict):
        raise UserError(f"{where}: expected a mapping of keys to values at the top level")
    cfg = dataclasses.replace(base) if base is not None else Config()
    for key, v in d.items():
        if key not in _TOP_KEYS:
            raise _err(where, key, f"unknown key (known: {', '.join(sorted(_TOP_KEYS))})")
        if key in ("models", "kernels", "include_dirs", "module_search"):
            setattr(cfg, key, _as_list(v, key, where))
        elif key == "fflags":
            cfg.fflags = parse_fflags(v, key, where)
        elif key == "backends":
            bs = _as_list(v, key, where)
            bad = [b for b in bs if b not in BACKENDS]
            if bad or not bs:
                raise _err(where, key, f"unknown backend(s) {bad or bs!r}; choose from {', '.join(BACKENDS)}")
            cfg.backends = list(dict.fromkeys(bs))
        elif key == "mode":
            if v not in MODES:
                raise _err(where, key, f"expected one of {', '.join(MODES)}, got {v!r}")
            cfg.mode = v
        elif key in ("base_url", "stages_factory"):
            if v is not None and not isinstance(v, str):
                raise _err(where, key, f"expected a string, got {v!r}")
            setattr(cfg, key, v)
        elif key == "max_cost":
            cfg.max_cost = _num(v, key, where, optional=True)
        elif key == "debug_rounds":
            if isinstance(v, dict):
                rounds = dict(cfg.debug_rounds)
                for s, n in v.items():
                    if s not in DEBUG_STAGES:
                        raise _err(where, f"debug_rounds.{s}", f"unknown stage; choose from {', '.join(DEBUG_STAGES)}")
                    rounds[s] = _num(n, f"debug_rounds.{s}", where, integer=True)
                cfg.debug_rounds = rounds
            else:
                n = _num(v, key, where, integer=True)
                cfg.debug_rounds = {s: n for s in DEBUG_STAGES}
        elif key == "python_module":
            if not isinstance(v, str) or not v.isidentifier():
                raise _err(where, key, f"expected a Python module name (letters, digits, _), got {v!r}")
            cfg.python_module = v
        elif key in ("optimize", "quiet", "bench", "python"):
            if not isinstance(v, bool):
                raise _err(where, key, f"expected true or false, got {v!r}")
            setattr(cfg, key, v)
        elif key == "optimizer_variants":
            cfg.optimizer_variants = _num(v, key, where, integer=True)
        elif key == "recursion_limit":
            cfg.recursion_limit = _num(v, key, where, integer=True, minimum=5, optional=True)
        elif key in ("threads", "seeds"):
            setattr(cfg, key, _num(v, key, where, integer=True, minimum=1, optional=True))
        elif key == "jobs":
            cfg.jobs = _num(v, key, where, integer=True, minimum=1)
        elif key == "executor":
            if v not in ("local", "parsl"):
                raise _err(where, key, f"expected 'local' or 'parsl', got {v!r}")
            cfg.executor = v
        elif key == "prices":
            if not isinstance(v, dict):
                raise _err(where, key, "expected a mapping model -> {input, cached, output} (USD per million tokens)")
            prices = {}
            for m, p in v.items():
                if not isinstance(p, dict):
                    raise _err(where, f"prices.{m}", "expected {input: X, cached: Y, output: Z}")
                extra = set(p) - {"input", "cached", "output"}
                if extra:
                    raise _err(where, f"prices.{m}.{sorted(extra)[0]}", "unknown key (known: input, cached, output)")
                if "input" not in p or "output" not in p:
                    raise _err(where, f"prices.{m}", "needs at least 'input' and 'output' (USD per million tokens)")
                prices[str(m)] = {k: _num(p[k], f"prices.{m}.{k}", where) for k in p}
                prices[str(m)].setdefault("cached", prices[str(m)]["input"])
            cfg.prices = prices
        elif key == "llm":
            cfg.llm = _sub(LLMSettings, v, key, where)
        elif key == "limits":
            cfg.limits = _sub(Limits, v, key, where)
        elif key == "routines":
            cfg.routines = _routines(v, where)
        elif key == "programs":
            cfg.programs = _programs(v, where)
        elif key == "defines":
            if isinstance(v, list):
                cfg.defines = parse_defines(v)
            elif isinstance(v, dict):
                cfg.defines = {str(k): "" if x is None else str(x) for k, x in v.items()}
            else:
                raise _err(where, key, "expected a mapping NAME: VALUE or a list of 'NAME=VALUE'")
    validate_models(cfg, where)
    return cfg


ROUTINE_ARG_KEYS = ("extent", "dims", "range", "values")
PROGRAM_KEYS = ("args", "inputs", "stdin", "ignore", "rtol", "atol")


def _programs(v: Any, where: str) -> dict[str, dict]:
    """``programs: {name: {args: str, inputs: [files], stdin: file, ignore: [regex], rtol: x, atol: y}}``:
    how a main program runs for its proof (names lower case; files relative to the current
    directory)."""
    import re
    import shlex

    if not isinstance(v, dict):
        raise _err(where, "programs", f"expected a mapping program name -> {{{', '.join(PROGRAM_KEYS)}}}")
    out: dict[str, dict] = {}
    for name, pv in v.items():
        key = f"programs.{name}"
        if pv is None:
            pv = {}
        if not isinstance(pv, dict):
            raise _err(where, key, f"expected a mapping with some of {', '.join(PROGRAM_KEYS)}")
        extra = set(pv) - set(PROGRAM_KEYS)
        if extra:
            raise _err(where, f"{key}.{sorted(extra)[0]}", f"unknown key (known: {', '.join(PROGRAM_KEYS)})")
        d: dict = {}
        if pv.get("args") is not None:
            a = pv["args"]
            if isinstance(a, list):
                d["args"] = [str(x) for x in a]
            elif isinstance(a, (str, int, float)) and not isinstance(a, bool):
                try:
                    d["args"] = shlex.split(str(a))
                except ValueError as exc:
                    raise _err(where, f"{key}.args", f"cannot split {a!r} into arguments: {exc}")
            else:
                raise _err(where, f"{key}.args", "expected a string ('10 1000') or a list of arguments")
        if pv.get("inputs") is not None:
            d["inputs"] = _as_list(pv["inputs"], f"{key}.inputs", where)
        if pv.get("ignore") is not None:  # one regex as a string (commas are regex text), or a list
            d["ignore"] = [pv["ignore"]] if isinstance(pv["ignore"], str) else \
                _as_list(pv["ignore"], f"{key}.ignore", where)
        for pat in d.get("ignore", []):
            try:
                re.compile(pat)
            except re.error as exc:
                raise _err(where, f"{key}.ignore", f"{pat!r} is not a regular expression: {exc}")
        if pv.get("stdin") is not None:
            if not isinstance(pv["stdin"], str):
                raise _err(where, f"{key}.stdin", "expected a file name")
            d["stdin"] = pv["stdin"]
        if pv.get("atol") is not None:
            d["atol"] = _num(pv["atol"], f"{key}.atol", where)
        if pv.get("rtol") is not None:
            d["rtol"] = _num(pv["rtol"], f"{key}.rtol", where)
            if not 0 <= d["rtol"] < 1:
                raise _err(where, f"{key}.rtol", "expected a relative tolerance in [0, 1)")
        out[str(name).lower()] = d
    return out


def _routines(v: Any, where: str) -> dict[str, dict]:
    """``routines: {name: {args: {arg: {extent, dims, range, values}}}}``, names lower case."""
    if not isinstance(v, dict):
        raise _err(where, "routines", "expected a mapping routine -> {args: {argument -> settings}}")
    out: dict[str, dict] = {}
    for r, rv in v.items():
        key = f"routines.{r}"
        if not isinstance(rv, dict) or set(rv) - {"args"}:
            raise _err(where, key, "expected {args: {argument -> {extent, dims, range, values}}}")
        args: dict[str, dict] = {}
        for a, av in (rv.get("args") or {}).items():
            ak = f"{key}.args.{a}"
            if not isinstance(av, dict):
                raise _err(where, ak, f"expected a mapping with some of {', '.join(ROUTINE_ARG_KEYS)}")
            extra = set(av) - set(ROUTINE_ARG_KEYS)
            if extra:
                raise _err(where, f"{ak}.{sorted(extra)[0]}", f"unknown key (known: {', '.join(ROUTINE_ARG_KEYS)})")
            if "extent" in av and not (isinstance(av["extent"], (str, int)) and not isinstance(av["extent"], bool)):
                raise _err(where, f"{ak}.extent", "expected an integer expression of the routine's arguments, "
                                                  "e.g. 'n*m'")
            if "dims" in av and not (isinstance(av["dims"], list) and av["dims"]
                                     and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in av["dims"])):
                raise _err(where, f"{ak}.dims", "expected a list of 'lower:upper' expressions, one per dimension")
            if "range" in av and not (isinstance(av["range"], list) and len(av["range"]) == 2
                                      and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                              for x in av["range"]) and av["range"][0] <= av["range"][1]):
                raise _err(where, f"{ak}.range", "expected [low, high] numbers with low <= high")
            if "values" in av and not (isinstance(av["values"], list) and av["values"]):
                raise _err(where, f"{ak}.values", "expected a non-empty list")
            args[str(a).lower()] = dict(av)
        out[str(r).lower()] = {"args": args}
    return out
# gfortran flags that change what a declaration means (default kinds) and that the front end
# does not follow (it follows -fdefault-real-8 and -fdefault-double-8: ftypes.kinds_of_fflags),
# so the harness would feed the wrong data
KIND_CHANGING_FFLAGS = ("-fdefault-real-10", "-fdefault-real-16", "-fdefault-integer-8", "-freal-4-real-8",
                        "-freal-4-real-10", "-freal-4-real-16", "-freal-8-real-4", "-freal-8-real-10",
                        "-freal-8-real-16", "-finteger-4-integer-8")
# flags the harness sets itself (output files, what to build)
_HARNESS_FFLAGS = ("-o", "-c", "-J", "-S", "-E")


def parse_fflags(v: Any, key: str = "fflags", where: str = "command line") -> list[str]:
    """Fortran compiler flags from a string (split as a shell would) or a list of strings."""
    import shlex

    if isinstance(v, str):
        try:
            flags = shlex.split(v)
        except ValueError as exc:
            raise _err(where, key, f"cannot split {v!r} into flags ({exc})")
    elif isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        flags = [x for x in v if x.strip()]
    else:
        raise _err(where, key, f"expected a string of flags or a list of strings, got {v!r}")
    for f in flags:
        if not f.startswith("-"):
            raise _err(where, key, f"{f!r} is not a compiler flag (flags start with '-'; sources are given apart)")
        if f in KIND_CHANGING_FFLAGS:
            raise _err(where, key, f"{f} changes the default kinds in a way the front end does not follow (it "
                                   "follows -fdefault-real-8 and -fdefault-double-8): not supported; declare the "
                                   "kinds in the source instead")
        if f in _HARNESS_FFLAGS or any(f.startswith(h) and h == "-J" for h in _HARNESS_FFLAGS):
            raise _err(where, key, f"{f} is set by the harness itself (it chooses the outputs); leave it out")
    return flags


def parse_defines(items: list[str]) -> dict[str, str]:
    """``-D NAME`` / ``-D NAME=VALUE`` items as {name: value} (NAME alone: "1"); the one
    reader of defines (command line, configuration, manifests)."""
    out = {}
    for it in items:
        name, _, val = str(it).partition("=")
        if not name:
            raise UserError(f"-D {it!r}: expected NAME or NAME=VALUE")
        out[name] = val if _ else "1"
    return out


def validate_models(cfg: Config, where: str = "configuration") -> None:
    from .agents.llm import parse_model  # local import: config must stay importable alone

    if not cfg.models:
        raise _err(where, "models", "at least one model is needed (e.g. 'rules')")
    for m in cfg.models:
        spec = parse_model(m, cfg.base_url)  # raises UserError naming the model
        if spec.kind == "compatible" and not cfg.base_url:
            raise _err(where, "models", f"model {m!r} is neither 'rules' nor 'openai:<name>': "
                                        "give --base-url URL of the OpenAI-compatible server that serves it")


def load_file(path: str | Path) -> dict:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise UserError(f"{p}: cannot read the configuration file ({exc.strerror})")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UserError(f"{p}{line}: not valid YAML ({getattr(exc, 'problem', exc)}); fix the file")
    return data or {}


def from_args(args: Any) -> Config:
    """The effective configuration for a `port-fortran run` invocation: defaults, then
    ``--config FILE``, then the flags that were given."""
    cfg = Config()
    cfg_path = getattr(args, "config", None)
    if cfg_path:
        cfg = _build(load_file(cfg_path), where=str(cfg_path), base=cfg)
    flags: dict[str, Any] = {}
    # argparse default for --backends is 'serial,openmp': a file value wins unless the flag was typed
    if getattr(args, "backends", None) and not (cfg_path and _flag_is_default(args, "backends")):
        flags["backends"] = args.backends
    if getattr(args, "model", None):
        flags["models"] = args.model
    if getattr(args, "base_url", None):
        flags["base_url"] = args.base_url
    if getattr(args, "kernel", None):
        flags["kernels"] = list(args.kernel)
    if getattr(args, "mode", None):
        flags["mode"] = args.mode
    if getattr(args, "jobs", None):
        flags["jobs"] = args.jobs
    if getattr(args, "max_cost", None) is not None:
        flags["max_cost"] = args.max_cost
    if getattr(args, "executor", None):
        flags["executor"] = args.executor
    if getattr(args, "quiet", False):
        flags["quiet"] = True
    if getattr(args, "python", False) or getattr(args, "python_module", None):
        flags["python"] = True
    if getattr(args, "python_module", None):
        flags["python_module"] = args.python_module
    if getattr(args, "include", None):
        flags["include_dirs"] = list(cfg.include_dirs) + list(args.include)
    if getattr(args, "define", None):
        d = dict(cfg.defines)
        d.update(parse_defines(args.define))
        flags["defines"] = d
    if getattr(args, "fflags", None):
        flags["fflags"] = list(cfg.fflags) + parse_fflags(args.fflags, "--fflags")
    return _build(flags, where="command line", base=cfg)


def _flag_is_default(args: Any, name: str) -> bool:
    return getattr(args, name, None) == "serial,openmp" and not getattr(args, f"_{name}_given", False)
