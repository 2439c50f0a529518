"""Scriptable stand-ins for the front end, translator and harness, to test the graph's
mechanics (routing, bounds, checkpoint/resume, ledger, budget) fast and deterministically.

Not a test module itself (no tests): imported by the pipeline tests, and named in a
configuration as ``stages_factory: "test_pipeline_fakes:make_stages"`` for subprocess runs.

A fake source file is Fortran-looking text; each ``subroutine NAME`` starts a kernel with
one DO loop two lines below; comment directives after it script the kernel:

    ! fake: refuse                   the rules refuse it (a body construct)
    ! fake: refuse-common            the rules refuse its interface (COMMON)
    ! fake: wrong-unless-serial      its port gives wrong results until the loop is serial
    ! fake: broken-unless-serial     its port does not compile until the loop is serial
    ! fake: always-wrong             no rules variant fixes it
    ! fake: nested                   tightly nested parallel loops (optimizer variants apply)
    ! fake: sleep-compile=S          each build takes S seconds
    ! fake: original-not-finite      the original gives inf/NaN on every input (harness.redraw)
    ! fake: syntax-error             (anywhere) the file has a syntax error at that line
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from port_fortran.fortran import ir
from port_fortran.pipeline.stages import Stages
from port_fortran.records import (BuildResult, CaseResult, OutputCheck, Port, Timing, TranslateOptions,
                                  TranslationRefused, Verdict)


def fake_source(names_and_directives: dict[str, list[str]]) -> str:
    out = []
    for name, dirs in names_and_directives.items():
        out.append(f"      subroutine {name}(n, x, y)")
        out += [f"! fake: {d}" for d in dirs]
        out += ["      integer n", "      real*8 x(n), y(n)", "      do i = 1, n", "        y(i) = y(i) + x(i)",
                "      end do", "      end"]
    return "\n".join(out) + "\n"


GOOD_CPP = """#include "{k}.kokkos.hpp"
// variant {v}
extern "C" void {k}_kokkos(const int* n, const double* x, double* y) {{
  {marker}
}}
"""


class FakeStages(Stages):
    def __init__(self, config=None):
        self.config = config
        self.calls: list[tuple] = []
        self.log_path = os.environ.get("PF_FAKE_LOG")

    def _log(self, *what):
        self.calls.append(what)
        if self.log_path:
            with open(self.log_path, "a") as fh:
                fh.write(json.dumps(list(what)) + "\n")

    # -- front end
    def discover(self, paths):
        out = []
        for p in paths:
            p = Path(p)
            out += sorted(p.glob("*.f")) if p.is_dir() else [p]
        return out

    def parse(self, path, include_dirs=(), defines=None):
        text = Path(path).read_text()
        lines = text.splitlines()
        sf = ir.SourceFile(path=str(path), form="fixed")
        cur = None
        for i, ln in enumerate(lines, 1):
            m = re.match(r"\s+subroutine (\w+)", ln)
            if m:
                cur = ir.Kernel(name=m.group(1), kind="subroutine", file=str(path), line_start=i, line_end=i,
                                args=[ir.Argument("n", ir.INTEGER, position=0, intent="in"),
                                      ir.Argument("x", ir.REAL8, [ir.Dim(upper=ir.Name("n"))], position=1,
                                                  intent="in"),
                                      ir.Argument("y", ir.REAL8, [ir.Dim(upper=ir.Name("n"))], position=2,
                                                  intent="inout")],
                                source_text="")
                cur.diagnostics = []
                cur._directives = []
                sf.kernels.append(cur)
                continue
            m = re.match(r"! fake: (.*)", ln)
            if m and m.group(1).strip() == "syntax-error":
                sf.errors.append(ir.Diagnostic("syntax-error", "unexpected token", i, str(path)))
                continue
            if m and cur is not None:
                cur._directives.append(m.group(1).strip())
                continue
            if cur is not None and re.match(r"\s+do i", ln):
                nested = "nested" in cur._directives
                cur.body.append(ir.Do(var="i", start=ir.Literal(1, "1"), end=ir.Name("n"), line=i,
                                      info=ir.LoopInfo(parallel=True, tightly_nested_parallel=2 if nested else 1)))
            if cur is not None and ln.strip() == "end":
                cur.line_end = i
                cur.source_text = "\n".join(lines[cur.line_start - 1:i])
        return sf

    def load(self, file, kernel, include_dirs=(), defines=None):
        sf = self.parse(file)
        k = next(k for k in sf.kernels if k.name == kernel)
        return k, sf

    @staticmethod
    def _dirs(kernel):
        return list(getattr(kernel, "_directives", []))

    # -- translator
    def translate(self, kernel, source, options):
        self._log("translate", kernel.name, (options.variant if options else "default"))
        d = self._dirs(kernel)
        if "refuse-common" in d:
            raise TranslationRefused(kernel.name, [ir.Diagnostic("common-block", "COMMON /c/ is shared state",
                                                                 kernel.line_start + 1, kernel.file)])
        if "refuse" in d:
            raise TranslationRefused(kernel.name, [ir.Diagnostic("early-exit", "GOTO out of the loop",
                                                                 kernel.line_start + 3, kernel.file)])
        o = options or TranslateOptions()
        serial = bool(o.serial_loops)
        marker = "// ok"
        if "always-wrong" in d or ("wrong-unless-serial" in d and not serial):
            marker = "// WRONG"
        if "broken-unless-serial" in d and not serial:
            marker = "// BROKEN"
        k = kernel.name
        files = {f"{k}.kokkos.cpp": GOOD_CPP.format(k=k, v=o.variant, marker=marker),
                 f"{k}.kokkos.hpp": f'#pragma once\nextern "C" void {k}_kokkos(const int* n, const double* x, '
                                    f'double* y);\n',
                 f"{k}_kokkos_mod.f90": f"module {k}_kokkos_mod\nend module\n",
                 "CMakeLists.txt": f"add_library({k}_kokkos {k}.kokkos.cpp)\n"}
        return Port(k, f"{k}_kokkos", files, patterns=["serial"] if serial else ["parallel_for"], options=o)

    def scaffold(self, kernel, source):
        k = kernel.name
        return Port(k, f"{k}_kokkos", {
            f"{k}.kokkos.hpp": f'#pragma once\nextern "C" void {k}_kokkos(const int* n, const double* x, double* y);\n',
            "CMakeLists.txt": f"add_library({k}_kokkos {k}.kokkos.cpp)\n"})

    def write_port(self, port, port_dir):
        Path(port_dir).mkdir(parents=True, exist_ok=True)
        for name, text in port.files.items():
            (Path(port_dir) / name).write_text(text)

    def validate(self, code, kernel, port_dir, backend, compile_check=True):
        from port_fortran.agents.validator import validate

        self._log("validate", kernel.name)
        return validate(code, kernel.name, port_dir, backend=backend, compile_check=False)

    # -- harness
    def _cpp(self, kernel, port_dir):
        return (Path(port_dir) / f"{kernel.name}.kokkos.cpp").read_text()

    def build(self, kernel, source, port_dir, backend):
        self._log("build", kernel.name, backend)
        for d in self._dirs(kernel):
            if d.startswith("sleep-compile="):
                time.sleep(float(d.split("=")[1]))
        if "BROKEN" in self._cpp(kernel, port_dir):
            diag = ir.Diagnostic("compile-error", "expected ';' before '}' token", 4, f"{kernel.name}.kokkos.cpp")
            return BuildResult(backend, False, diagnostics=[diag], condensed=f"{diag.file}:4: error: {diag.message}")
        return BuildResult(backend, True, seconds=0.01)

    def verify(self, kernel, source, port_dir, backend):
        self._log("verify", kernel.name, backend)
        if "original-not-finite" in self._dirs(kernel):
            why = "the original's outputs are not finite on every input tried for seed=1 n=17"
            return Verdict(backend, False, [CaseResult(1, {"n": 17}, False, error=why, code="original-not-finite")],
                           reason=why, code="original-not-finite")
        if "WRONG" in self._cpp(kernel, port_dir):
            oc = OutputCheck("y", False, 17, max_abs_err=0.5, max_rel_err=0.25, worst_index=[3], tolerance=1e-12)
            return Verdict(backend, False, [CaseResult(1, {"n": 17}, False, [oc])],
                           reason="y(3): 0.5 off (tolerance 1e-12)")
        oc = OutputCheck("y", True, 17)
        return Verdict(backend, True, [CaseResult(1, {"n": 17}, True, [oc])])

    def prove_timing(self, kernel, source, port_dir, backend):
        """Directives: 'wrong-large-unless-serial' (every parallel port skips work past the
        small sizes), 'tile-wrong-large' (the fast tile-32x8 variant drops a partial tile)."""
        self._log("prove_timing", kernel.name, backend)
        cpp, d = self._cpp(kernel, port_dir), self._dirs(kernel)
        wrong = (("wrong-large-unless-serial" in d and "variant all-serial" not in cpp)
                 or ("tile-wrong-large" in d and "variant tile-32x8" in cpp))
        oc = OutputCheck("y", not wrong, 1000000, max_abs_err=1.0 if wrong else 0.0, worst_index=[999999] if wrong else None)
        case = CaseResult(20240607, {"n": 1000000}, not wrong, [oc], kind="timing-size")
        return Verdict(backend, not wrong, [case], reason="at the timing sizes: y(999999) 1.0 off" if wrong else "")

    def bench(self, kernel, source, port_dir, backends):
        self._log("bench", kernel.name, ",".join(backends), Path(port_dir).name)
        cpp = self._cpp(kernel, port_dir)
        fast = "variant tile-32x8" in cpp
        out = [Timing("fortran-serial", 1, {"n": 1000000}, 2.0, 0.01, 5)]
        for b in backends:
            out.append(Timing(f"kokkos-{b}", 1, {"n": 1000000}, 0.5 if fast else 1.0, 0.02, 5,
                              proven_sizes={"n": 1000000}))
        return out


def make_stages(config=None):
    return FakeStages(config)
