"""The stage functions the graph calls, behind one small interface.

:class:`Stages` is what the graph needs from the rest of the package: load a kernel,
translate it with the rules, write a port, validate C++, build, verify and time a port
directory. :class:`RealStages` wires the real front end, translator, validator and
harness; tests (and alternative harnesses) pass their own object with the same methods,
or name a factory in the configuration (``stages_factory: "module:function"``).
"""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from typing import Any, Optional

from ..errors import UserError
from ..fortran import ir
from ..records import BuildResult, Port, TranslateOptions, Timing, Verdict


class Stages:
    """Interface (all methods raise NotImplementedError here, except the program model's,
    which work with any ``parse``)."""

    program = None  # the run's fortran.program.Program, once use_program gave it

    def build_program(self, files: list[Path], include_dirs=(), defines=None, routines=None, fflags=()):
        """All files as one program (fortran.program), parsed with this object's ``parse``
        (given the modules other files of the program define, when it takes them)."""
        import inspect

        from ..fortran.program_build import build_program

        if "modules" in inspect.signature(self.parse).parameters:
            def parse(p, inc, d, modules=None):
                return self.parse(p, inc, d, modules=modules)
        else:
            def parse(p, inc, d):
                return self.parse(p, inc, d)
        return build_program([], include_dirs, defines, fflags, routines=routines, files=list(files), parse=parse)

    def use_program(self, program) -> None:
        """Later stages resolve callees, link originals and size arrays through ``program``."""
        self.program = program

    def discover(self, paths: list[str]) -> list[Path]:
        raise NotImplementedError

    def parse(self, path: Path, include_dirs=(), defines=None) -> ir.SourceFile:
        raise NotImplementedError

    def load(self, file: str, kernel: str, include_dirs=(), defines=None) -> tuple[ir.Kernel, ir.SourceFile]:
        raise NotImplementedError

    def translate(self, kernel: ir.Kernel, source: ir.SourceFile, options: Optional[TranslateOptions]) -> Port:
        """Rules translation; raises records.TranslationRefused."""
        raise NotImplementedError

    def write_port(self, port: Port, port_dir: Path) -> None:
        raise NotImplementedError

    def validate(self, code: str, kernel: ir.Kernel, port_dir: Path, backend: str,
                 compile_check: bool = True) -> tuple[str, list[ir.Diagnostic]]:
        """(clean code, diagnostics); ``compile_check``: also the host compiler's syntax check."""
        raise NotImplementedError

    def build(self, kernel: ir.Kernel, source: ir.SourceFile, port_dir: Path, backend: str) -> BuildResult:
        raise NotImplementedError

    def verify(self, kernel: ir.Kernel, source: ir.SourceFile, port_dir: Path, backend: str) -> Verdict:
        raise NotImplementedError

    def bench(self, kernel: ir.Kernel, source: ir.SourceFile, port_dir: Path, backends: list[str]) -> list[Timing]:
        raise NotImplementedError

    def prove_timing(self, kernel: ir.Kernel, source: ir.SourceFile, port_dir: Path, backend: str) -> Optional[Verdict]:
        """The port's build for ``backend`` verified at the sizes ``bench`` times it at (once
        per build). None: this stage set has no such proof (its ``bench`` must then time
        only what it proved itself)."""
        return None

    def scaffold(self, kernel: ir.Kernel, source: ir.SourceFile) -> Optional[Port]:
        """The port files other than the kernel source (header, module, CMake, compat
        header) for an LLM port when the rules refuse the kernel; None if unavailable."""
        return None


class RealStages(Stages):
    def __init__(self, config: Any = None):
        self.config = config
        self._harness: dict[str, Any] = {}
        self._budgets: dict[str, Any] = {}  # port directory -> harness.budget.ProofBudget

    def discover(self, paths):
        from ..fortran import discover

        return list(discover([str(p) for p in paths]))

    def parse(self, path, include_dirs=(), defines=None, modules=None):
        """``modules``: {name: SourceFile defining it} from the program model (parsed before
        this file); modules not among them are looked for in the configured search paths."""
        from ..fortran.program_build import parse_with_modules

        search = list(getattr(self.config, "module_search", None) or []) or None
        return parse_with_modules(path, include_dirs, defines, modules, module_search=search)

    def load(self, file, kernel, include_dirs=(), defines=None):
        if self.program is not None and self.program.has_file(file):
            from ..fortran.effects import load_for_port
            return load_for_port(self.program, file, kernel)
        sf = self.parse(file, include_dirs, defines)
        for k in sf.kernels:
            if k.name == kernel:
                return k, sf
        raise UserError(f"{file}: kernel '{kernel}' not found (the file has: "
                        f"{', '.join(k.name for k in sf.kernels) or 'no kernels'})")

    def translate(self, kernel, source, options):
        """The port in the configured mode (auto: full where the rules can, else hybrid)."""
        from ..harness.drivers import unsupported_reason
        from ..records import TranslationRefused
        from ..translate.hybrid import translate_mode

        port = translate_mode(kernel, source, options, getattr(self.config, "mode", None) or "auto",
                              program=self.program)
        reason = unsupported_reason(kernel, port.mode == "hybrid")  # the proof needs a harness that can drive it
        if reason:
            raise TranslationRefused(kernel.name, [ir.Diagnostic(
                "harness-unsupported", f"{port.mode} port not provable: {reason}", kernel.line_start, kernel.file)])
        if port.mode == "hybrid":
            from ..harness.members import module_state_problems

            problems = module_state_problems(kernel, (port.hybrid or {}).get("module_reads", []))
            if problems:
                line = min((v.line for v in kernel.module_vars.values()), default=0) or kernel.line_start
                raise TranslationRefused(kernel.name, [ir.Diagnostic(
                    "module-state", f"{problems[0]}; the harness sets module scalars and arrays (allocating "
                    "allocatable ones) before the call, not this, so a hybrid port could not be proven "
                    "(`port-fortran translate --mode hybrid` writes it unproven)", line, kernel.file)])
        return port

    def write_port(self, port, port_dir):
        from ..translate import write_port

        Path(port_dir).mkdir(parents=True, exist_ok=True)
        stale = Path(port_dir) / "hybrid.json"
        if port.mode != "hybrid" and stale.is_file():  # a full port replaces a hybrid one
            stale.unlink()
        write_port(port, Path(port_dir))

    def validate(self, code, kernel, port_dir, backend, compile_check=True):
        from ..agents.validator import source_constants, validate

        inc = tuple(getattr(self.config, "include_dirs", ()) or ())
        return validate(code, kernel.name, port_dir, backend=backend, include_dirs=inc, compile_check=compile_check,
                        constants=tuple(source_constants(kernel)))

    def harness(self, kernel, source, port_dir):
        key = str(Path(port_dir).resolve())
        from ..harness.budget import ProofBudget
        from ..harness.hybrid import HybridHarness, is_hybrid, make_harness

        h = self._harness.get(key)
        if h is not None and isinstance(h, HybridHarness) != is_hybrid(port_dir):
            h = None  # the port in the directory changed mode (a debugger round): a new harness
        if h is None:

            cfg = self.config
            kw: dict[str, Any] = {}
            if cfg is not None:
                from ..build_runner.sandbox import Limits

                kw["limits"] = Limits(wall_s=cfg.limits.run_s, mem_mb=cfg.limits.memory_mb or 4096)
                # one budget for the port directory's proofs: every backend, every debugger round
                kw["budget"] = self._budgets.setdefault(key, ProofBudget(cfg.limits.proof_s or 0))
                if cfg.threads:
                    kw["threads"] = cfg.threads
            include_dirs, defines, fflags = self.compile_settings(kernel)
            h = make_harness(kernel, source, Path(port_dir), include_dirs=include_dirs, defines=defines,
                             fflags=fflags, module_search=list(getattr(cfg, "module_search", ()) or ()),
                             program=self.program, **kw)
            self._harness[key] = h
        return h

    def compile_settings(self, kernel) -> tuple[tuple, dict, list]:
        """(include dirs, defines, Fortran flags) the original of ``kernel`` is compiled with:
        the run's (an application run takes each file's own from its build)."""
        cfg = self.config
        return (tuple(getattr(cfg, "include_dirs", ()) or ()), dict(getattr(cfg, "defines", {}) or {}),
                list(getattr(cfg, "fflags", ()) or ()))

    def build(self, kernel, source, port_dir, backend):
        return self.harness(kernel, source, port_dir).build(backend)

    def verify(self, kernel, source, port_dir, backend):
        seeds = getattr(self.config, "seeds", None)
        h = self.harness(kernel, source, port_dir)
        return h.verify(backend, seeds=seeds) if seeds else h.verify(backend)

    def bench(self, kernel, source, port_dir, backends):
        threads = getattr(self.config, "threads", None)
        return self.harness(kernel, source, port_dir).bench(list(backends), threads=threads)

    def prove_timing(self, kernel, source, port_dir, backend):
        return self.harness(kernel, source, port_dir).prove_timing(backend)

    def scaffold(self, kernel, source):
        """The rules' interface files without the kernel body (header with the views-level
        and entry declarations, bind(C) module, CMake, compat header), rendered by the
        translator itself; None when the interface itself is refused."""
        from ..records import TranslationRefused
        from ..translate import scaffold

        try:
            return scaffold(kernel, source, program=self.program)
        except TranslationRefused:
            return None


def make_stages(config: Any) -> Stages:
    spec = getattr(config, "stages_factory", None)
    if not spec:
        return RealStages(config)
    mod, _, fn = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(mod), fn or "make_stages")
    except (ImportError, AttributeError) as exc:
        raise UserError(f"configuration key 'stages_factory': cannot import {spec!r} ({exc})")
    return factory(config)


def copy_spec(src_dir: Path, dst_dir: Path, kernel: str) -> None:
    """Reuse the (possibly user-refined) harness spec in a variant directory."""
    spec = Path(src_dir) / f"{kernel}.spec.yaml"
    if spec.is_file():
        Path(dst_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy2(spec, Path(dst_dir) / spec.name)
