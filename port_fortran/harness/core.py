"""The Harness: build the original and the port with their drivers, run both on the same
fresh inputs, compare everything they wrote; time both.

Side effects live here (files, compilers, processes); what to generate and how to compare
is in the pure modules beside it (spec, inputs, drivers, compare).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ..errors import ToolMissing, UserError
from ..build_runner.toolchain import generated_source_flags, gfortran_path, host_openmp
from ..fortran import ir
from ..records import BuildResult, CaseResult, OutputCheck, Timing, Verdict
from ..build_runner.sandbox import Limits, run_limited
from . import drivers
from .crossing import CrossCase, cross_case
from .inputs import Case, InputsTooLarge, cases as make_cases
from .infer import load_or_infer
from .spec import Spec
from .cases import CLOCKED, CaseRunner
from . import redraw
from .checked import ORIGINAL_OUT_OF_BOUNDS, ORIGINAL_UNINITIALISED, CheckedOriginal
from .timing import TIMING_LIMITS, proof_text, timing_case
from .budget import PROOF_BUDGET, BudgetSpent, ProofBudget, over_budget

SUPPORT_DIR = Path(__file__).parent / "fortran_support"
DEFAULT_LIMITS = Limits(wall_s=60.0, cpu_s=None, mem_mb=4096)
REF_BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=None, mem_mb=None)
VERIFY_FFLAGS = ("-O2",)
TIMING_FFLAGS = ("-O3", "-march=native")
# Legacy code gfortran >= 10 rejects by default, and the flag that makes it accept the code
# as older compilers did. Added only after gfortran refused the original with that error
# (not always: -fallow-argument-mismatch also hides genuine interface bugs as warnings), and
# recorded in port.json ("fflags_added") and in the build's log.
LEGACY_FFLAGS = (
    (r"(Type|Rank) mismatch (between actual argument|in argument)", "-fallow-argument-mismatch",
     "calls pass arguments of different types or ranks to the same routine (legacy code; an error "
     "since gfortran 10)"),
)
HOST_BACKENDS = ("serial", "openmp")
HOST_CXXFLAGS = ("-march=native",)  # CMake Release adds -O3; the port's CMakeLists adds -fno-math-errno

_build_lock = threading.Lock()
_src_lock = threading.Lock()

# the codes that make a failing case the original's, not the port's, and how a verdict says
# why such a case was left out (a cross-tiles case with one is not run at all)
ORIGINALS_CASES = {
    redraw.ORIGINAL_FAILED: "the original rejects its inputs",
    redraw.ORIGINAL_LIMIT: "the original does not finish on its inputs",
    redraw.NOT_FINITE: "the original rejects its inputs",
    InputsTooLarge.code: "its inputs are too large",
    ORIGINAL_OUT_OF_BOUNDS: "the original reads outside its arrays on its inputs",
    ORIGINAL_UNINITIALISED: "the original reads variables it never set on its inputs",
}


ORIGINAL_NO_EFFECT = "original-no-effect"


def _no_effect(verdict: Verdict, spec_name: str) -> None:
    """A passing verdict whose cases all left every output as the original was given it
    compared inputs with inputs (its loops ran zero times, a flag skipped the work): it
    proves nothing, and says so with its own code."""
    counted = [c for c in verdict.cases if c.changed >= 0]
    if not verdict.passed or not counted or len(counted) != len(verdict.cases) or any(c.changed for c in counted):
        return
    verdict.passed = False
    verdict.code = ORIGINAL_NO_EFFECT
    verdict.reason = (f"on every case ({len(counted)}) the original changed none of its outputs: the comparison "
                      f"proves nothing about the port (its loops ran zero times or a value skipped the work on "
                      f"these inputs); give sizes and values that reach the work in {spec_name}")


def default_threads() -> int:
    env = os.environ.get("PORT_FORTRAN_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(2, min(os.cpu_count() or 2, 8))


class Harness(CaseRunner, CheckedOriginal):
    """Differential test and timing of one port against the original Fortran.

    ``source_file`` is the front end's :class:`ir.SourceFile` or the path of the original
    file. ``limits`` bound each run of a driver (default 60 s wall, 4 GiB address space).
    ``threads`` is the OpenMP thread count for verification runs of the openmp backend
    (at least 2, so a racy port shows its race)."""

    FORTRAN_MODERN = False  # the modern program is the C++ driver (HybridHarness: the Fortran one)

    def __init__(self, kernel: ir.Kernel, source_file: Union[ir.SourceFile, str, Path, None], port_dir,
                 include_dirs: Sequence[str] = (), defines: Optional[dict] = None,
                 limits: Optional[Limits] = None, threads: Optional[int] = None, program=None,
                 fflags: Sequence[str] = (), module_search: Sequence[str] = (),
                 budget: Optional[ProofBudget] = None):
        if isinstance(source_file, ir.SourceFile):
            self.source_path = Path(source_file.path).resolve()
            self.source_ir: Optional[ir.SourceFile] = source_file
        else:
            self.source_path = Path(source_file or kernel.file).resolve()
            self.source_ir = None
        self.port_dir = Path(port_dir).resolve()
        self.include_dirs = [str(Path(d).resolve()) for d in include_dirs]
        self.defines = dict(defines or {})
        self.fflags = list(fflags)  # the user's, after the harness's own
        self.module_search = [str(Path(d).resolve()) for d in module_search]
        self.fflags_added: dict[str, str] = {}  # legacy flags the original needed: flag -> why
        self.limits = limits or DEFAULT_LIMITS
        # the time the kernel's proof may take, kept across harnesses of one port directory
        self.budget = budget if budget is not None else ProofBudget(0.0)
        self.threads = threads or default_threads()
        # the program the kernel belongs to (fortran.program): which files define what the
        # original calls, how each compiles; a program of the kernel's file alone by default
        self._program = program
        self._trees: dict[tuple, Any] = {}
        from .callee_commons import callee_state
        # COMMON members the kernel uses are driven as extra arguments after the real ones, with
        # the members of its blocks only its callees touch and what its callees' checks ask
        resolve = self.program.resolver() if kernel.calls else None  # no program built for a routine without calls
        self.kernel = callee_state(kernel, resolve, self._callee_module_reads(port_dir))
        self.link_notes: list[str] = []
        self._spec: Optional[Spec] = None
        self._cross: Optional[tuple[Optional[CrossCase]]] = None  # (case,) once computed for the spec
        self._builds: dict[str, BuildResult] = {}
        self._proofs: dict[str, tuple[str, Verdict]] = {}  # backend -> (build key, timing-size verdict)
        reason = drivers.unsupported_reason(kernel, self.FORTRAN_MODERN)
        if reason:
            raise UserError(f"{self.source_path}:{kernel.line_start}: {kernel.name}: {reason}")
        self.port_dir.mkdir(parents=True, exist_ok=True)
        self._write_port_json()

    def _callee_module_reads(self, port_dir) -> list[str]:
        """Module variables the routine's callees read that the harness sets too (a hybrid
        port's nests pass them on: ``members.driven_kernel``); none for a full port."""
        return []

    # ------------------------------------------------------------------ bookkeeping

    def _write_port_json(self) -> None:
        """What ``verify``/``bench`` need to rebuild this harness later: the source, the
        options it was parsed and compiled with, the legacy flags the original needed, the
        run's program model."""
        p = self.port_dir / "port.json"
        old: dict = {}
        if p.exists():
            try:
                old = json.loads(p.read_text())
            except (json.JSONDecodeError, OSError):
                old = {}
        if not self.fflags_added and isinstance(old.get("fflags_added"), dict) \
                and old.get("fflags") == self.fflags and old.get("source") == str(self.source_path):
            self.fflags_added = dict(old["fflags_added"])  # learnt by an earlier build: start with them
        meta = dict(old)
        meta.update({"kernel": self.kernel.name, "source": str(self.source_path), "include_dirs": self.include_dirs,
                     "defines": self.defines, "fflags": self.fflags, "fflags_added": self.fflags_added,
                     "module_search": self.module_search})
        if self._program is not None and self._program.path:
            meta["program"] = self._program.path  # the run's program model: callees, modules, extents
        if meta != old:
            p.write_text(json.dumps(meta, indent=2) + "\n")

    @property
    def spec_path(self) -> Path:
        return self.port_dir / f"{self.kernel.name}.spec.yaml"

    @property
    def program(self):
        if self._program is None:
            from ..fortran.program_build import build_program
            self._program = build_program([self.source_path], include_dirs=self.include_dirs, defines=self.defines,
                                          fflags=self.fflags, files=[self.source_path])
        return self._program

    @property
    def spec(self) -> Spec:
        if self._spec is None:
            hints = self._program.routine_config(self.kernel.name).get("args") if self._program is not None else None
            self._spec = load_or_infer(self.kernel, self.spec_path, hints=hints)
        return self._spec

    def reload_spec(self) -> Spec:
        self._spec = None
        self._cross = None
        return self.spec

    def cross_case(self) -> Optional[CrossCase]:
        """The boundary-crossing size set of this kernel under the current spec
        (harness.crossing), None when there is nothing to cross; computed once per spec."""
        if self._cross is None:
            self._cross = (cross_case(self.kernel, self.spec, self.source_ir),)
        return self._cross[0]

    # ------------------------------------------------------------------ reference build

    def _fflags(self, timing: bool, openmp: bool, path: Optional[str] = None) -> list[str]:
        """gfortran flags for the kernel's file, or for another file of the program (its own
        include dirs, defines and flags)."""
        flags = list(TIMING_FFLAGS if timing else VERIFY_FFLAGS)
        if openmp:
            flags.append("-fopenmp")
        src, defines, include_dirs, extra = self.source_path, self.defines, self.include_dirs, self.fflags
        if path is not None and self._program is not None and self._program.has_file(path):
            st = self._program.settings_of(path)
            src, defines, include_dirs, extra = Path(path), st.defines_dict, list(st.include_dirs), list(st.fflags)
        if defines or _needs_cpp(src):  # preprocessed as the front end read it
            flags.append("-cpp")
        from ..fortran.cpp import define_flags  # the front end preprocessed with the same -D
        flags += define_flags(defines)
        for d in include_dirs:
            flags.append(f"-I{Path(d).resolve()}")
        return host_openmp(flags + list(self.fflags_added) + list(extra))

    def tree_objects(self, timing: bool = False, openmp: bool = False):
        """The program's objects compiled with the reference's flags (linking.TreeObjects),
        shared by every kernel of the run (``Program.objects_dir``)."""
        from .linking import TreeObjects
        gfortran = gfortran_path()
        if not gfortran:
            raise ToolMissing("gfortran not found: install it (e.g. apt-get install gfortran); "
                              "`port-fortran doctor` says what is missing")
        key = (timing, openmp)
        tree = self._trees.get(key)
        if tree is None:
            prog = self.program
            base = Path(prog.objects_dir) if prog.objects_dir else self.port_dir / "build" / "objects"
            variant = "-".join(["O", *(x.lstrip("-") for x in (TIMING_FFLAGS if timing else VERIFY_FFLAGS))]
                               + (["omp"] if openmp else []))
            tree = TreeObjects(prog, base / variant, lambda p: self._fflags(timing, openmp, p), gfortran,
                               link_flags=("-fopenmp",) if openmp else ())
            self._trees[key] = tree
        return tree

    def build_reference(self, timing: bool = False, openmp: bool = False) -> Path:
        """The original compiled with its driver (cached; rebuilt when the sources or the
        flags change), linked with the original objects of every routine it needs from the
        program (``linking.TreeObjects``). Raises UserError when the original does not
        compile or link. When gfortran rejects legacy code that a flag of
        :data:`LEGACY_FFLAGS` lets through, the build is done again with that flag
        (recorded in port.json)."""
        for _ in range(len(LEGACY_FFLAGS) + 1):
            try:
                return self._build_reference_once(timing, openmp)
            except UserError as exc:
                if not self._legacy_retry(str(exc)):
                    raise
        raise AssertionError("unreachable: each legacy flag is added at most once")

    def _legacy_retry(self, text: str) -> Optional[str]:
        """The legacy flag (:data:`LEGACY_FFLAGS`) that answers the error gfortran gave,
        newly added (and recorded in port.json); None if there is none."""
        import re

        for pattern, flag, why in LEGACY_FFLAGS:
            if flag not in self.fflags_added and flag not in self.fflags and re.search(pattern, text):
                self.fflags_added[flag] = why
                self._write_port_json()
                self._trees.clear()  # the program's objects are compiled again with the flag
                return flag
        return None

    def _build_reference_once(self, timing: bool, openmp: bool) -> Path:
        gfortran = gfortran_path()
        if not gfortran:
            raise ToolMissing("gfortran not found: install it (e.g. apt-get install gfortran); "
                              "`port-fortran doctor` says what is missing")
        name = "reference" + ("-timing" if timing else "") + ("-omp" if openmp else "")
        bdir = self.port_dir / "build" / name
        exe = bdir / "ref_driver"
        flags = self._fflags(timing, openmp)
        driver = drivers.fortran_driver(self.kernel)
        support = (SUPPORT_DIR / "pf_harness_io.f90").read_text()
        if not self.source_path.is_file():
            raise UserError(f"{self.source_path}: original source not found (needed to build the reference)")
        links = self.tree_objects(timing, openmp).link_set(str(self.source_path), self._driver_module_files())
        links.check(self._reached_files())
        self.link_notes = links.notes()
        key = hashlib.sha256("\0".join([" ".join(flags), driver, support, str(self.source_path),
                                        *(f"{o}@{o.stat().st_mtime_ns}" for o in links.objects),
                                        *links.libs]).encode()).hexdigest()
        stamp = bdir / "stamp"
        with _build_lock:
            if exe.exists() and stamp.exists() and stamp.read_text() == key:
                return exe
            bdir.mkdir(parents=True, exist_ok=True)
            (bdir / "pf_harness_io.f90").write_text(support)
            (bdir / "pf_ref_driver.f90").write_text(driver)
            common = [gfortran, *flags, f"-J{bdir}", f"-I{bdir}", f"-I{links.mod_dir}"]
            gen = [gfortran, *generated_source_flags(flags), f"-J{bdir}", f"-I{bdir}", f"-I{links.mod_dir}"]
            objects = list(map(str, links.objects))
            cmds = [gen + ["-c", "pf_harness_io.f90", "-o", "pf_harness_io.o"]]
            public = self._public_copy(bdir)
            if public is not None:  # a PRIVATE module procedure: its file with it PUBLIC (publish.py)
                cmds.append(common + [f"-I{self.source_path.resolve().parent}", "-c", str(public), "-o",
                                      "pf_public.o"])
                objects[0] = "pf_public.o"
            cmds += [gen + ["-c", "pf_ref_driver.f90", "-o", "pf_ref_driver.o"],
                     [gfortran, *(["-fopenmp"] if openmp else []), "pf_ref_driver.o", "pf_harness_io.o",
                      *objects, *links.libs, "-o", "ref_driver"]]
            for cmd in cmds:
                self._check(run_limited(cmd, bdir, REF_BUILD_LIMITS), cmd, "building the reference driver")
            stamp.write_text(key)
        return exe

    def _check(self, res, cmd, what: str) -> None:
        if res.ok:
            return
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-15:])
        raise UserError(f"{self.source_path}:{self.kernel.line_start}: {what} failed "
                        f"({' '.join(map(str, cmd[:1] + cmd[-4:]))}):\n{tail}\n"
                        f"check the include dirs (-I), defines (-D) and Fortran flags (--fflags) given for this file")

    # ------------------------------------------------------------------ port build

    def _harness_src(self) -> Path:
        src = self.port_dir / "build" / "harness_src"
        src.mkdir(parents=True, exist_ok=True)
        views = self._views_timer_source()
        from .members import fortran_common_owner
        owner = fortran_common_owner(self.kernel)  # the COMMON blocks, laid out by gfortran
        extra = (["views_timer.cpp"] if views is not None else []) + (["pf_commons.f90"] if owner else [])
        files = {
            "pf_driver.cpp": drivers.cpp_driver(self.kernel, views_timer=views is not None),
            "CMakeLists.txt": drivers.driver_cmake(self.kernel, str(self.port_dir), str(SUPPORT_DIR), extra,
                                             link_libraries=self._port_links()),
        }
        if views is not None:
            files["views_timer.cpp"] = views
        if owner:
            files["pf_commons.f90"] = owner
        with _src_lock:  # builds of several backends may run at once (threads)
            for name, text in files.items():
                p = src / name
                if not p.exists() or p.read_text() != text:
                    tmp = p.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}")
                    tmp.write_text(text)
                    os.replace(tmp, p)
            for stale in ("views_timer.cpp", "pf_commons.f90"):
                if stale not in files and (src / stale).exists():
                    (src / stale).unlink()
        return src

    def _driver_module_files(self) -> tuple:
        """Files defining the modules whose variables the driver sets (a module of data only
        is no file the kernel's object calls into, yet the driver's USE needs its object)."""
        out = []
        for a in self.kernel.args:
            mod = getattr(a, "module", None)
            if mod:
                files = self.program.modules.get(mod, [])
                if files and files[0] not in out:
                    out.append(files[0])
        return tuple(out)

    def _reached_files(self) -> list[str]:
        """Files defining the routines the kernel calls, transitively (the program's graph)."""
        return sorted({c.routine.file for c in self.program.reaches(self.kernel) if c.routine is not None})

    def _port_links(self) -> list[str]:
        """What the port's driver links besides the port: the original objects the kernel's
        file needs (a static library: only what the port's host code calls is pulled in)
        and gfortran's run-time library."""
        from .linking import libgfortran
        links = self.tree_objects().link_set(str(self.source_path), self._driver_module_files())
        lib = libgfortran(gfortran_path() or "gfortran")
        return [str(links.archive), *([lib] if lib else []), *links.libs]

    def _views_timer_source(self) -> Optional[str]:
        from .views import views_timer_source  # the port header decides whether it applies
        return views_timer_source(self.kernel, self.port_dir)

    def build(self, backend: str) -> BuildResult:
        """Reference (verification flags, once) + the port and its driver for ``backend``."""
        from ..build_runner.cmake import configure_and_build
        from ..build_runner.kokkos import find_install

        t0 = time.monotonic()
        ref = self.build_reference()
        kokkos = find_install(backend)
        if kokkos is None:
            raise ToolMissing(f"no Kokkos install with the {backend} backend: run "
                              f"`port-fortran kokkos install --backends {backend}` or set Kokkos_ROOT")
        if not (self.port_dir / "CMakeLists.txt").exists():
            return BuildResult(backend, False, condensed=f"{self.port_dir}: no CMakeLists.txt (no port written)")
        src = self._harness_src()
        bdir = self.port_dir / "build" / backend
        cmake_args = []
        if backend in HOST_BACKENDS:
            # the port is timed against the original built with -O3 -march=native: give the
            # C++ the same target (the build runs on the machine that runs it)
            flags = " ".join(x for x in (kokkos.cxx_flags, *HOST_CXXFLAGS) if x)
            cmake_args.append(f"-DCMAKE_CXX_FLAGS={flags}")
        if (src / "pf_commons.f90").exists():  # the COMMON owner: the gfortran that builds the original
            cmake_args.append(f"-DCMAKE_Fortran_COMPILER={gfortran_path() or 'gfortran'}")
        res = configure_and_build(src, bdir, backend, kokkos, cmake_args=cmake_args, jobs=2)
        res.seconds = time.monotonic() - t0
        res.artifacts = dict(res.artifacts)
        res.artifacts["ref_driver"] = str(ref)
        notes = "".join(f"note: the original was compiled with {flag}: {why} (port.json: fflags_added)\n"
                        for flag, why in self.fflags_added.items())
        res.log = notes + (res.log or "")
        if res.ok:
            exe = bdir / "pf_driver"
            if not exe.exists():
                res.ok = False
                res.condensed = (res.condensed + "\n" if res.condensed else "") + "pf_driver was not built"
            res.artifacts["pf_driver"] = str(exe)
        self._builds[backend] = res
        return res

    # ------------------------------------------------------------------ runs

    def run_env(self, backend: str, threads: Optional[int] = None, timing: bool = False) -> dict[str, str]:
        t = 1 if backend == "serial" else (threads or self.threads)
        # KOKKOS_DISABLE_WARNINGS: Kokkos 3.4 prints its OMP_PROC_BIND notice on standard
        # output, which the proof compares with the original's (harness.printed)
        env = {"OMP_NUM_THREADS": str(t), "KOKKOS_NUM_THREADS": str(t), "OMP_DYNAMIC": "false",
               "GFORTRAN_UNBUFFERED_PRECONNECTED": "y", "KOKKOS_DISABLE_WARNINGS": "1"}
        if timing and t > 1:
            env.update({"OMP_PROC_BIND": "spread", "OMP_PLACES": "threads"})
        return env

    def _run(self, exe: str, args: list[str], cwd: Path, backend: str, threads=None, timing=False,
             limits: Optional[Limits] = None, env: Optional[dict] = None):
        lim = (limits or self.limits).for_backend(backend)
        left = self.budget.remaining()
        capped = left is not None and (lim.wall_s is None or left < lim.wall_s)
        if capped:  # the proof's time budget ends sooner than this run's own limit
            if left <= 0:
                raise BudgetSpent()
            lim = dataclasses.replace(lim, wall_s=left)
        res = run_limited([exe, *args], cwd, lim, env_extra={**self.run_env(backend, threads, timing), **(env or {})})
        if capped and res.killed_reason == "wall-time":
            raise BudgetSpent()
        return res

    def verify(self, backend: str, seeds: Union[None, int, Sequence[int]] = None) -> Verdict:
        """Differential test on fresh inputs: every size set x flag value of the spec, for
        each base seed (None: one seed from the clock; an int: that many; a list: those),
        and with the first seed the boundary-crossing set (:meth:`cross_case`) unless the
        spec turns it off."""
        build = self._builds.get(backend) or self.build(backend)
        if not build.ok:
            return Verdict(backend, False, reason=f"build failed: {build.condensed or 'see the build log'}")
        if seeds is None:
            bases = [time.time_ns() % (2**31 - 1)]
        elif isinstance(seeds, int):
            t = time.time_ns()
            bases = [(t + 104729 * k) % (2**31 - 1) for k in range(max(1, seeds))]
        else:
            bases = list(seeds)
        work = self.port_dir / "build" / backend / "cases"
        verdict = Verdict(backend, True)
        cross = self._crossing_cases(verdict, bases[0])
        cases = [case for k, base in enumerate(bases) for case in make_cases(self.spec, base) + (cross if k == 0 else [])]
        over = None  # why the proof stopped at its time budget (harness.budget)
        for n, case in enumerate(cases):
            if verdict.cases and verdict.cases[-1].code == redraw.ORIGINAL_LIMIT:
                # each further case would wait out the limit too (minutes): the spec's inputs are the matter
                verdict.notes.append(f"{len(cases) - n} more case(s) not run: the original ran past its limit on "
                                     f"{verdict.cases[-1].label}")
                break
            over = self.budget.refusal(f"the {len(cases)} on {backend}", len(cases) - n)
            if over:
                break
            self.budget.start()
            try:
                cr = self.run_case(backend, case, build.artifacts["ref_driver"], build.artifacts["pf_driver"], work)
            except BudgetSpent:
                self.budget.charge()
                over = self.budget.refusal(f"the {len(cases)} on {backend}", len(cases) - n, spent=True)
                break
            self.budget.charge("" if cr.passed or cr.code else f"{case.label()}: " + (cr.error or _first_failure(cr)))
            cr.sizes.update({k: v for k, v in case.choices.items() if isinstance(v, int)})
            if case.kind == "cross-tiles" and not cr.passed and cr.code in ORIGINALS_CASES:
                verdict.cross_tiles = False  # sizes the original rejects: no caller reaches the port so
                verdict.notes.append(f"boundary-crossing case not run: the original rejects its sizes "
                                     f"({case.label()}: {cr.error[:300]})")
                continue
            verdict.cases.append(cr)
            if not cr.passed and verdict.passed:
                verdict.passed = False
                verdict.reason = f"{case.label()}: " + (cr.error or _first_failure(cr))
        clocked = sorted({o.name for c in verdict.cases for o in c.outputs if o.message.startswith(CLOCKED)})
        if clocked:
            verdict.notes.append(f"not compared: {', '.join(clocked)}, which the original reads from a clock (they "
                                 "change when its clocks run faster, harness.dilate)")
        failing = [c for c in verdict.cases if not c.passed]
        passing = [c for c in verdict.cases if c.passed]
        if failing and all(c.code for c in failing) and passing:  # the proof stands on inputs the original takes
            verdict.passed, verdict.reason = True, ""
            verdict.cases = passing
            for c in failing:
                why = ORIGINALS_CASES.get(c.code, "the original rejects its inputs")
                verdict.notes.append(f"case not run: {why} ({c.label}: {c.error[:300]})")
        elif failing and all(c.code for c in failing):  # the original's doing on every failing case
            verdict.code = failing[0].code
            verdict.reason = failing[0].error
        _no_effect(verdict, self.spec_path.name)
        if over:
            over_budget(verdict, over, self.budget)
        self._save_verdict(verdict, bases)
        return verdict

    def _crossing_cases(self, verdict: Verdict, base: int) -> list[Case]:
        """The boundary-crossing cases (one seed, every flag value) and what the verdict
        says about them (``cross_tiles`` and notes)."""
        if not self.spec.cross_tiles:
            verdict.cross_tiles = False
            verdict.notes.append(f"the boundary-crossing case is turned off in {self.spec_path.name} "
                                 f"(sizes.cross_tiles: false): only the spec's correctness sizes are checked")
            return []
        cc = self.cross_case()
        if cc is None:
            return []
        verdict.notes += cc.notes
        if not cc.dims:
            return []
        verdict.cross_tiles = True
        if cc.sizes in self.spec.correctness:
            verdict.notes.append(f"sizes.correctness[{self.spec.correctness.index(cc.sizes)}] already crosses "
                                 f"every tile: {cc.describe()}")
            return []
        verdict.notes.append(f"boundary-crossing case: {cc.describe()}")
        return make_cases(self.spec, (base * 31 + 17) % (2**31 - 1), [cc.sizes], kind="cross-tiles")

    # ------------------------------------------------------------------ the timing sizes

    def prove_timing(self, backend: str, cached: bool = True) -> Verdict:
        """Verify this backend's build at the size set it is timed at (the case
        :func:`timing.timing_case` makes, the same inputs the timing runs), once per build:
        the verdict is kept with a key naming the port and reference executables, the spec
        and the case (in memory and in ``build/<backend>/timing_proof.json``). Where the
        original rejects the inferred timing sizes (a code: out of bounds, fails, inf/NaN) and
        a second choice of sizes exists (:func:`infer.timing_sizes`), the spec's timing sizes
        become that choice and the proof is redone there."""
        build = self._builds.get(backend) or self.build(backend)
        if not build.ok:
            return Verdict(backend, False, reason=f"build failed: {build.condensed or 'see the build log'}")
        v = self._prove_timing_at(backend, build, cached)
        if v.passed or not v.code or self.spec.edited:
            return v
        # the original rejects the inferred timing sizes (ghost-cell widths kept small, where
        # another size walks that deep into the halo): every size scaled together instead
        from .infer import timing_sizes

        first, alt = dict(self.spec.timing), timing_sizes(self.kernel, self.spec, small_offsets=False)
        if alt == first:
            return v
        self.spec.timing = alt
        v2 = self._prove_timing_at(backend, build, cached)
        if not v2.passed and v2.code:  # rejected there too: the first refusal stands
            self.spec.timing = first
            return v
        v2.notes.append(f"timing sizes {first} rejected by the original [{v.code}]; timed at {alt}")
        return v2

    def _prove_timing_at(self, backend: str, build: BuildResult, cached: bool) -> Verdict:
        from ..fortran.ir import to_dict

        case = timing_case(self.spec)
        key = self._proof_key(build, case)
        path = self.port_dir / "build" / backend / "timing_proof.json"
        if cached:
            mem = self._proofs.get(backend)
            if mem is not None and mem[0] == key:
                return mem[1]
            kept = _kept_proofs(path).get(key)
            if isinstance(kept, dict) and isinstance(kept.get("verdict"), dict):
                v = verdict_from_dict(kept["verdict"])
                self._proofs[backend] = (key, v)
                return v
        over = self.budget.refusal(f"the timing-size case on {backend}", 1)
        if over:  # not kept: a later run with a larger budget proves it
            return Verdict(backend, False, reason=over, code=PROOF_BUDGET)
        lim = Limits(wall_s=max(self.limits.wall_s or 0.0, TIMING_LIMITS.wall_s), cpu_s=None, mem_mb=None)
        self.budget.start()
        try:
            cr = self.run_case(backend, case, build.artifacts["ref_driver"], build.artifacts["pf_driver"],
                               self.port_dir / "build" / backend / "proof", limits=lim)
        except BudgetSpent:
            self.budget.charge()
            return Verdict(backend, False, reason=self.budget.refusal(f"the timing-size case on {backend}", 1, True),
                           code=PROOF_BUDGET)
        self.budget.charge("" if cr.passed or cr.code else f"at the timing sizes: {cr.error or _first_failure(cr)}")
        cr.sizes.update({k: v for k, v in case.choices.items() if isinstance(v, int)})
        v = Verdict(backend, cr.passed, cases=[cr])
        if not cr.passed:
            v.reason = f"at the timing sizes, {case.label()}: " + (cr.error or _first_failure(cr))
            v.code = cr.code  # the original's own failure there (harness.redraw, checked): not the port's
        v.notes.append(proof_text(v))
        self._proofs[backend] = (key, v)
        path.parent.mkdir(parents=True, exist_ok=True)
        kept = {k: e for k, e in _kept_proofs(path).items() if k != key}
        kept = dict(list(kept.items())[-3:])  # this build's proofs at the (few) size sets tried
        kept[key] = {"at": time.time(), "verdict": _json_safe(to_dict(v))}
        path.write_text(json.dumps({"proofs": kept}, indent=1) + "\n")
        return v

    def _proof_key(self, build: BuildResult, case: Case) -> str:
        """Names one build (its executables as they are on disk), the spec and the case."""
        parts = []
        for name in ("pf_driver", "ref_driver"):
            st = Path(build.artifacts[name]).stat()
            parts.append(f"{build.artifacts[name]}:{st.st_size}:{st.st_mtime_ns}")
        parts.append(json.dumps(self.spec.to_data(), sort_keys=True, default=str))
        parts.append(case.label())
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]

    def _save_verdict(self, verdict: Verdict, bases: list[int]) -> None:
        from ..fortran.ir import to_dict
        p = self.port_dir / "verdict.json"
        try:
            data = json.loads(p.read_text()) if p.exists() else {}
        except json.JSONDecodeError:
            data = {}
        d = to_dict(verdict)
        d["base_seeds"] = bases
        d["spec_edited"] = self.spec.edited
        d["at"] = time.time()
        data[verdict.backend] = _json_safe(d)
        p.write_text(json.dumps(data, indent=1) + "\n")

    # ------------------------------------------------------------------ timing

    def bench(self, backends: Sequence[str], threads: Optional[int] = None,
              repeats: Optional[int] = None) -> list[Timing]:
        from .timing import bench
        return bench(self, list(backends), threads or self.threads, repeats)


def _kept_proofs(path: Path) -> dict:
    """{key: {"at", "verdict"}} of ``build/<backend>/timing_proof.json`` (empty when absent,
    unreadable or of the older one-proof layout)."""
    try:
        data = json.loads(path.read_text()) if path.is_file() else {}
    except (json.JSONDecodeError, OSError):
        return {}
    proofs = data.get("proofs") if isinstance(data, dict) else None
    return proofs if isinstance(proofs, dict) else {}


def verdict_from_dict(d: dict) -> Verdict:
    """A Verdict back from :func:`ir.to_dict` JSON (the timing-size proofs kept on disk)."""
    def num(x):
        return float(x) if isinstance(x, str) else x

    cases = []
    for c in d.get("cases") or []:
        outs = [OutputCheck(o["name"], bool(o["passed"]), int(o.get("elements") or 0),
                            max_abs_err=num(o.get("max_abs_err", 0.0)), max_rel_err=num(o.get("max_rel_err", 0.0)),
                            worst_index=o.get("worst_index"), tolerance=num(o.get("tolerance", 0.0)),
                            message=o.get("message", ""), sampled=bool(o.get("sampled", False)),
                            total_elements=o.get("total_elements"))
                for o in c.get("outputs") or []]
        cases.append(CaseResult(seed=int(c["seed"]), sizes=dict(c.get("sizes") or {}), passed=bool(c["passed"]),
                                outputs=outs, error=c.get("error", ""), label=c.get("label", ""),
                                kind=c.get("kind", ""), code=c.get("code", "")))
    return Verdict(d["backend"], bool(d["passed"]), cases=cases, reason=d.get("reason", ""),
                   cross_tiles=d.get("cross_tiles"), notes=list(d.get("notes") or []), code=d.get("code", ""))


def _needs_cpp(src: Path) -> bool:
    """The front end's rule (``reader.needs_cpp``): an upper-case extension, or ``#`` lines."""
    from ..fortran.reader import needs_cpp
    try:
        text = src.read_text(errors="replace")
    except OSError:
        text = ""
    return needs_cpp(src, text)


def _first_failure(cr: CaseResult) -> str:
    for o in cr.outputs:
        if not o.passed:
            return f"{o.name}: {o.message}"
    return "failed"


def _json_safe(x: Any) -> Any:
    if isinstance(x, float):
        if x != x:
            return "nan"
        if x in (float("inf"), float("-inf")):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return x
