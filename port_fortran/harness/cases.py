"""One case of a proof (a mixin of :class:`core.Harness`): the original first, on inputs it
accepts (``harness.redraw``: drawn again when its outputs are not finite or it fails), in
a private directory removed before the port runs; then the port on the same inputs; then
every output compared within the original's own sensitivity, and the second opinion of the
checking build (``checked.py``) on every case.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from ..build_runner.sandbox import Limits
from ..records import CaseResult
from .compare import compare, magnitude_scale
from .inputs import Case, InputsTooLarge, make_inputs, read_records, write_records
from .printed import check_printed, computed_numbers, printed_rtol

BIG_INPUT_BYTES = 16 * 2**20  # a case's input file larger than this is removed after the runs
# what _run_original says when the original exited normally without writing its outputs
_ENDED_PROGRAM = "ended-program"


CLOCKED = "not compared: the original's own"  # how an output read from a clock is marked


def _hit_limit(res) -> bool:
    """The run was stopped by a sandbox limit (time, memory) or never started, rather than
    failing by itself: a signal the program raised (SIGFPE, SIGSEGV) is its own failure,
    which other inputs may avoid."""
    return bool(res.memory_exceeded or (res.killed_reason and not res.killed_reason.startswith("signal")))


class CaseRunner:
    """``run_case`` and what it needs (the Harness's ``kernel``, ``spec``, ``spec_path``,
    ``_run`` and the checking build's ``_second_opinion``)."""

    @staticmethod
    def _describe_failure(who: str, res) -> str:
        if res.killed_reason in ("wall-time", "cpu-time"):
            return f"{who} stopped: {res.killed_reason} limit reached after {res.wall_s:.1f} s"
        if res.killed_reason == "memory" or res.memory_exceeded:
            return f"{who} stopped: memory limit reached"
        lines = (res.stderr or res.stdout).strip().splitlines()
        said = [ln.strip() for ln in lines if ln.strip().startswith("pf_harness:")]  # the drivers' own words
        tail = " | ".join(said[-1:] or lines[-3:])
        code = res.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return f"{who} failed ({how}){': ' + tail if tail else ''}"

    def run_case(self, backend: str, case: Case, ref_exe: str, port_exe: str, work: Path,
                 limits: Optional[Limits] = None) -> CaseResult:
        """One case: the original first, on inputs it accepts (``harness.redraw``: drawn
        again when its outputs are not finite or it fails), its outputs read into memory
        and its files removed; then the port on the same inputs, which therefore never finds
        an output of the original; then every output compared."""
        from . import redraw
        names = [a.name for a in self.kernel.args] + (["result"] if self.kernel.result is not None else [])
        cr = CaseResult(seed=case.seed, sizes={**case.sizes}, passed=False, label=case.label(), kind=case.kind)
        work.mkdir(parents=True, exist_ok=True)
        fin, fport = work / "in.bin", work / "port.bin"
        if fport.exists():
            fport.unlink()
        tried: list[str] = []  # what each rejected draw gave
        crashed: list[bool] = []
        too_large: list[str] = []  # draws whose arrays would not fit (inputs.MAX_CASE_BYTES)
        ref_out = recs = None
        for k, (how, spec) in enumerate([("the spec's ranges", self.spec)] + redraw.attempts(self.kernel, self.spec)):
            this = case if k == 0 else Case(seed=redraw.redraw_seed(case.seed, k), sizes=case.sizes, choices=case.choices,
                                              kind=case.kind)
            try:
                recs, _ = make_inputs(self.kernel, spec, this)
            except InputsTooLarge as exc:  # another draw may take smaller values
                tried.append(f"{how}: {exc}")
                crashed.append(False)
                too_large.append(str(exc))
                continue
            except (ValueError, KeyError) as exc:
                cr.error = f"{self.spec_path.name}: cannot make inputs for {this.label()}: {exc} (edit the spec)"
                cr.code = getattr(exc, "code", "")  # UnknownExtent: the port is not at fault
                return cr
            write_records(fin, recs)
            rres, ref_out, unreadable = self._run_original(ref_exe, fin, names, work, limits)
            if unreadable == _ENDED_PROGRAM:  # other inputs may take another branch
                out = " | ".join((rres.stdout or rres.stderr or "").strip().splitlines()[-2:])
                tried.append(f"{how}: the original ended the program instead of returning (a STOP or EXIT in it "
                             f"or in a routine it calls){': ' + out if out else ''}")
                crashed.append(True)
                ref_out = None
                continue
            if unreadable:
                cr.error = f"unreadable output of the original: {unreadable}"
                return cr
            if not rres.ok:
                if _hit_limit(rres):  # a limit: drawing again would not help
                    # the original's own failure (FFTPACK's rfftb1 looping on factor counts read
                    # from a drawn work array): the port is not at fault
                    cr.code = redraw.ORIGINAL_LIMIT
                    cr.error = (self._describe_failure("the original", rres) + f" on inputs {this.label()}; the port "
                                f"is not at fault: the spec may make inputs the original rejects: edit "
                                f"{self.spec_path.name}")
                    return cr
                tried.append(f"{how}: " + self._describe_failure("the original", rres))
                crashed.append(True)
                ref_out = None
                continue
            bad = redraw.not_finite(recs, ref_out)
            if not bad:
                cr.seed = this.seed
                if k:
                    cr.label = f"{this.label()} (inputs drawn again: {'; '.join(tried)}; accepted: {how})"
                break
            tried.append(f"{how}: inf/NaN in {', '.join(bad)}")
            crashed.append(False)
            ref_out = None
        if ref_out is None and len(too_large) == len(tried):
            cr.code = InputsTooLarge.code
            cr.error = (f"the inputs of {case.label()} are too large on every draw ({too_large[0]}); the port is not "
                        f"at fault: give smaller sizes, or smaller ranges to the scalars in the array bounds, in "
                        f"{self.spec_path.name} (or routines.{self.kernel.name}.args.<name>.range in the run "
                        "configuration)")
            return cr
        if ref_out is None:
            failed = all(crashed)
            cr.code = redraw.ORIGINAL_FAILED if failed else redraw.NOT_FINITE
            what = ("the original fails" if failed else
                    "the original's outputs are not finite (inf or NaN where the inputs were numbers)")
            cr.error = (f"{what} on every input tried for {case.label()}: {'; '.join(tried)}; the port is not at "
                        f"fault: give value ranges the routine accepts in {self.spec_path.name} (args.<name>.range) "
                        f"or in the run configuration (routines.{self.kernel.name}.args.<name>.range)")
            return cr
        cr.changed = changed_elements(recs, ref_out, {a.name: self.spec.args[a.name].intent for a in self.kernel.args})
        cr.changed += computed_numbers(rres.stdout, recs)  # a value it printed is an effect too
        pres = self._run(port_exe, ["run", str(fin), str(fport)], work, backend, limits=limits)
        big = fin.stat().st_size > BIG_INPUT_BYTES  # inputs at timing sizes are not kept (once compared)
        try:
            return self._compare_case(cr, pres, fport, fin, names, recs, ref_out, ref_exe, work, limits,
                                      rres.stdout)
        finally:
            if big and fin.exists():
                fin.unlink()

    def _compare_case(self, cr: CaseResult, pres, fport: Path, fin: Path, names: list[str], recs: list,
                      ref_out: list, ref_exe: str, work: Path, limits: Optional[Limits],
                      ref_printed: str = "") -> CaseResult:
        """The port's outputs against the original's, what it printed too (the second
        opinion on a failure needs the inputs ``fin`` still there)."""
        try:
            if not pres.ok:
                cr.error = self._describe_failure("the port", pres) + f" on inputs {cr.label}"
                return self._second_opinion(cr, fin, work, limits, names)
            try:
                port_out = read_records(fport, names)
            except (ValueError, OSError) as exc:
                cr.error = f"unreadable output: {exc}"
                return cr
        finally:
            if fport.exists():
                fport.unlink()
        scale = magnitude_scale([r for r, a in zip(recs, self.kernel.args) if self.spec.args[a.name].intent != "out"])
        noise = self.sensitivity(ref_exe, recs, ref_out, names, work, limits, cr.seed)
        for r, p in zip(ref_out, port_out):
            tol = self.spec.tolerance[r.name]
            cr.outputs.append(compare(r, p, tol, scale, noise=noise.get(r.name)))
        dilated: dict = {}  # one dilated-clock run of the original per case, whoever asks first
        if not all(o.passed for o in cr.outputs):
            self._clock_outputs(cr, ref_exe, fin, names, ref_out, work, limits, dilated)
        printed = self._printed(ref_printed, pres.stdout, ref_exe, fin, names, work, limits, dilated)
        if printed is not None:
            cr.outputs.append(printed)
        cr.passed = all(o.passed for o in cr.outputs)
        # every case gets the second opinion: a pass that agrees on undefined behaviour
        # proves nothing either
        return self._second_opinion(cr, fin, work, limits, names, ref_out, scale,
                                    by_clocks=lambda: self._changed_by_clocks(dilated, ref_exe, fin, names, ref_out,
                                                                            work, limits))

    def _dilated(self, cache: dict, ref_exe: str, fin: Path, names: list[str], work: Path,
                 limits: Optional[Limits]):
        """The original run once more on ``fin`` with its clocks dilated (``harness.dilate``):
        (run result, records or None), None without a C compiler; run once per case
        (``cache``), for the outputs and the printed text alike."""
        from .dilate import dilation_library

        if "run" not in cache:
            lib = dilation_library(work / ".dilate")
            cache["run"] = None if lib is None else \
                self._run_original(ref_exe, fin, names, work, limits, env={"LD_PRELOAD": str(lib)})[:2]
        return cache["run"]

    def _changed_by_clocks(self, dilated: dict, ref_exe: str, fin: Path, names: list[str], ref_out: list,
                           work: Path, limits: Optional[Limits]) -> set[str]:
        """The outputs that change when the original's clocks run faster (times it measures,
        which differ between any two runs): none when that run cannot be made."""
        run = self._dilated(dilated, ref_exe, fin, names, work, limits)
        if run is None or not run[0].ok or run[1] is None:
            return set()
        return {r0.name for r0, r1 in zip(ref_out, run[1]) if r0.data.shape == r1.data.shape and not np.array_equal(
            r0.data, r1.data, equal_nan=r0.data.dtype.kind in "fc")}

    def _printed(self, ref: str, new: str, ref_exe: str, fin: Path, names: list[str], work: Path,
                 limits: Optional[Limits], dilated: dict):
        """What the port printed against what the original printed (``harness.printed``);
        on a difference the original runs once more with dilated clocks, and the numbers
        that change there (times it printed) are left out."""
        rtol = printed_rtol(self.spec.tolerance.values())
        oc = check_printed(ref, new, rtol)
        if oc is None or oc.passed:
            return oc
        run = self._dilated(dilated, ref_exe, fin, names, work, limits)
        if run is not None and run[0].ok:
            oc = check_printed(ref, new, rtol, run[0].stdout)
        return oc

    def _clock_outputs(self, cr: CaseResult, ref_exe: str, fin: Path, names: list[str], ref_out: list, work: Path,
                       limits: Optional[Limits], dilated: dict) -> None:
        """Outputs that differ because they are read from a clock (a routine adding its
        elapsed time to a module or COMMON counter): the original run once more with its
        clocks dilated (``harness.dilate``) changes them and nothing else. Each such failed
        output is not compared, and says why; the others stand as they are."""
        timed = self._changed_by_clocks(dilated, ref_exe, fin, names, ref_out, work, limits)
        for o in cr.outputs:
            if not o.passed and o.name in timed:
                o.passed = True
                o.message = (f"{CLOCKED} {o.name} changes when its clocks run faster (a time it measures); was: "
                             f"{o.message or 'outside tolerance'}")

    def sensitivity(self, ref_exe: str, recs: list, ref_out: list, names: list[str], work: Path,
                    limits: Optional[Limits], seed: int) -> dict:
        """The original's rounding sensitivity on these inputs (``harness.sensitivity``)."""
        from .sensitivity import sensitivity

        return sensitivity(self.kernel, self.spec, lambda fin: self._run_original(ref_exe, fin, names, work, limits),
                           recs, ref_out, work, seed)

    def _run_original(self, ref_exe: str, fin: Path, names: list[str], work: Path,
                      limits: Optional[Limits] = None, env: Optional[dict] = None):
        """Run the original on ``fin`` in a private directory under ``work`` and read what it
        wrote; the directory is removed before this returns, so no file of the original's
        output exists when the port runs. Returns (run result, records or None, why the
        output could not be read or '')."""
        priv = Path(tempfile.mkdtemp(prefix=".original-", dir=work))
        try:
            fref = priv / "ref.bin"
            res = self._run(ref_exe, ["run", str(fin), str(fref)], priv, "serial", limits=limits, env=env)
            if not res.ok:
                return res, None, ""
            if not fref.exists():  # the driver writes its outputs after the call: the call never returned
                return res, None, _ENDED_PROGRAM
            try:
                return res, read_records(fref, names), ""
            except (ValueError, OSError) as exc:
                return res, None, str(exc)
        finally:
            shutil.rmtree(priv, ignore_errors=True)


def changed_elements(inputs: list, outputs: list, intents: dict[str, str]) -> int:
    """How many elements of the outputs (arguments not ``in``, and the function result) the
    original changed from the inputs it was given (NaN left NaN is no change); an output
    whose shape changed counts whole."""
    total = 0
    for rin, rout in zip(inputs, outputs):
        if rin.name != "result" and intents.get(rin.name, "inout") == "in":
            continue
        a, b = np.asarray(rin.data), np.asarray(rout.data)
        if a.shape != b.shape or a.dtype != b.dtype:
            total += int(b.size)
            continue
        if a.dtype.kind in "fc":
            with np.errstate(invalid="ignore"):
                same = (a == b) | (np.isnan(a) & np.isnan(b))
        else:
            same = a == b
        total += int(np.size(same) - np.count_nonzero(same))
    return total
