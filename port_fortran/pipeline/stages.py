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

        from ..fortran.program import build_program

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

    def scaffold(self, kernel: ir.Kernel, source: ir.SourceFile) -> Optional[Port]:
        """The port files other than the kernel source (header, module, CMake, compat
        header) for an LLM port when the rules refuse the kernel; None if unavailable."""
        return None


class RealStages(Stages):
    def __init__(self, config: Any = None):
        self.config = config
        self._harness: dict[str, Any] = {}

    def discover(self, paths):
        from ..fortran import discover

        return list(discover([str(p) for p in paths]))

    def parse(self, path, include_dirs=(), defines=None, modules=None):
        """``modules``: {name: SourceFile defining it} from the program model (parsed before
        this file); modules not among them are looked for in the configured search paths."""
        from ..fortran.program import parse_with_modules

        search = list(getattr(self.config, "module_search", None) or []) or None
        return parse_with_modules(path, include_dirs, defines, modules, module_search=search)

    def load(self, file, kernel, include_dirs=(), defines=None):
        if self.program is not None and self.program.has_file(file):
            return self.program.load(file, kernel)
        sf = self.parse(file, include_dirs, defines)
        for k in sf.kernels:
            if k.name == kernel:
                return k, sf
        raise UserError(f"{file}: kernel '{kernel}' not found (the file has: "
                        f"{', '.join(k.name for k in sf.kernels) or 'no kernels'})")

    def translate(self, kernel, source, options):
        from ..translate import translate_kernel

        return translate_kernel(kernel, source, options, program=self.program)

    def write_port(self, port, port_dir):
        from ..translate import write_port

        Path(port_dir).mkdir(parents=True, exist_ok=True)
        write_port(port, Path(port_dir))

    def validate(self, code, kernel, port_dir, backend, compile_check=True):
        from ..agents.validator import source_constants, validate

        inc = tuple(getattr(self.config, "include_dirs", ()) or ())
        return validate(code, kernel.name, port_dir, backend=backend, include_dirs=inc, compile_check=compile_check,
                        constants=tuple(source_constants(kernel)))

    def harness(self, kernel, source, port_dir):
        key = str(Path(port_dir).resolve())
        h = self._harness.get(key)
        if h is None:
            from ..harness import Harness

            cfg = self.config
            kw: dict[str, Any] = {}
            if cfg is not None:
                from ..build_runner.sandbox import Limits

                kw["limits"] = Limits(wall_s=cfg.limits.run_s, mem_mb=cfg.limits.memory_mb or 4096)
                if cfg.threads:
                    kw["threads"] = cfg.threads
            h = Harness(kernel, source, Path(port_dir), include_dirs=tuple(getattr(cfg, "include_dirs", ()) or ()),
                        defines=dict(getattr(cfg, "defines", {}) or {}), fflags=list(getattr(cfg, "fflags", ()) or ()),
                        module_search=list(getattr(cfg, "module_search", ()) or ()), program=self.program, **kw)
            self._harness[key] = h
        return h

    def build(self, kernel, source, port_dir, backend):
        return self.harness(kernel, source, port_dir).build(backend)

    def verify(self, kernel, source, port_dir, backend):
        seeds = getattr(self.config, "seeds", None)
        h = self.harness(kernel, source, port_dir)
        return h.verify(backend, seeds=seeds) if seeds else h.verify(backend)

    def bench(self, kernel, source, port_dir, backends):
        threads = getattr(self.config, "threads", None)
        return self.harness(kernel, source, port_dir).bench(list(backends), threads=threads)

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
