"""The checking build of the original: the second opinion on every case of a proof.

The original with its own file compiled with :data:`CHECK_FFLAGS` (``-fcheck=bounds``, its
uninitialised locals set to signalling NaNs and odd integers) runs on each case's inputs.
When it reads or writes outside its arrays (``original-out-of-bounds``) or its outputs
change with the values its uninitialised locals hold (``original-uninitialised``), the
original's outputs are undefined on those inputs and prove nothing about the port, even
when both agree: the case is left out of the proof (``Harness.verify``). Also here: the
copy of the kernel's file that makes PRIVATE module entities PUBLIC for the driver
(``publish.py``). A mixin of :class:`core.Harness`.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Optional

from ..build_runner.sandbox import Limits, run_limited
from ..build_runner.toolchain import gfortran_path
from ..errors import UserError
from ..records import CaseResult
from . import drivers
from .cases import CLOCKED
from .compare import compare
from .inputs import read_records

ORIGINAL_OUT_OF_BOUNDS = "original-out-of-bounds"  # reason codes: see CheckedOriginal._second_opinion
ORIGINAL_UNINITIALISED = "original-uninitialised"
# what the checking build of the original adds to its flags (CheckedOriginal._bounds_tree)
CHECK_FFLAGS = ("-fcheck=bounds", "-finit-real=snan", "-finit-integer=-7654321", "-finit-logical=true")
CHECK_BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=None, mem_mb=None)
_check_lock = threading.Lock()  # builds of several backends may ask at once (threads)


class CheckedOriginal:
    """The checking build and the second opinion (needs the Harness's ``kernel``,
    ``source_path``, ``port_dir``, ``program``, ``spec``, ``_trees``, ``_fflags``,
    ``build_reference``, ``tree_objects``, ``_driver_module_files`` and ``_run``)."""

    def _public_copy(self, bdir: Path, text: Optional[str] = None) -> Optional[Path]:
        """For a PRIVATE module procedure, the kernel's file (or ``text``, its hybrid copy)
        with the procedure made PUBLIC, written into ``bdir`` (``publish.py``); else None."""
        if not drivers.private_names(self.kernel):
            return None
        public = drivers.public_source(self.source_path, self.kernel, text)
        if public is None:
            raise UserError(f"{self.source_path}:{self.kernel.line_start}: {self.kernel.name}: the PRIVATE entities "
                            f"{', '.join(drivers.private_names(self.kernel))} of module {self.kernel.module} cannot "
                            "be made PUBLIC in a copy")
        p = bdir / f"pf_public_{self.source_path.name}"
        p.write_text(public)
        return p

    def build_bounds_reference(self) -> Optional[Path]:
        """The reference driver with the kernel's own file and the files of the routines it
        calls compiled with :data:`CHECK_FFLAGS` (the other objects as for the reference):
        the second opinion on every case (:meth:`_second_opinion`). None when it cannot be
        built."""
        gfortran = gfortran_path()
        ref = self.build_reference()
        bdir = self.port_dir / "build" / "reference-bounds"
        exe = bdir / "ref_driver"
        links = self.tree_objects().link_set(str(self.source_path), self._driver_module_files())
        flags = self._fflags(False, False) + list(CHECK_FFLAGS)
        key = hashlib.sha256("\0".join([" ".join(flags), str(ref), str(ref.stat().st_mtime_ns),
                                        *(f"{o}@{o.stat().st_mtime_ns}" for o in links.objects)]).encode()).hexdigest()
        stamp = bdir / "stamp"
        with _check_lock:
            if exe.exists() and stamp.exists() and stamp.read_text() == key:
                return exe
            if stamp.exists():
                stamp.unlink()
            bdir.mkdir(parents=True, exist_ok=True)
            rdir = ref.parent
            own = bdir / "kernel_file.o"
            public = self._public_copy(bdir)
            cmds = []
            if public is not None:  # the kernel's own copy of its file
                cmds.append([gfortran, *flags, f"-J{bdir}", f"-I{bdir}", f"-I{links.mod_dir}",
                             f"-I{self.source_path.resolve().parent}", "-c", str(public), "-o", str(own)])
            else:  # the file's bounds-checked object, shared by every kernel of the run
                try:
                    own = self._bounds_tree().compile_locked(str(self.source_path))
                except UserError:
                    return None
            # the files of the routines it calls are checked too (TeaLeaf's cg_calc_ur_kernel
            # reads out of bounds in tea_block_solve, another file's routine)
            plain = self.tree_objects()
            others = {str(plain.object_path(f)): f for f in self._reached_files()
                      if os.path.abspath(f) != os.path.abspath(self.source_path)}
            rest = []
            for o in map(str, links.objects[1:]):
                try:
                    rest.append(str(self._bounds_tree().compile_locked(others[o])) if o in others else o)
                except UserError:
                    rest.append(o)  # that file's checking build failed: its plain object
            cmds.append([gfortran, str(rdir / "pf_ref_driver.o"), str(rdir / "pf_harness_io.o"), str(own),
                         *rest, *links.libs, "-o", str(exe)])
            for cmd in cmds:
                res = run_limited(cmd, bdir, CHECK_BUILD_LIMITS)
                if not res.ok:
                    return None
                if public is not None and cmd is cmds[0]:
                    from .linking import hide_main
                    hide_main(own, "bounds")
            stamp.write_text(key)
        return exe

    def _bounds_tree(self):
        """The program's objects compiled with :data:`CHECK_FFLAGS` (only the kernels' files
        and their callees' are ever asked for), cached beside the reference's
        (``linking.TreeObjects``)."""
        from .linking import TreeObjects
        tree = self._trees.get("bounds")
        if tree is None:
            prog = self.program
            base = Path(prog.objects_dir) if prog.objects_dir else self.port_dir / "build" / "objects"
            tree = TreeObjects(prog, base / "checked", lambda p: self._fflags(False, False, p) + list(CHECK_FFLAGS),
                               gfortran_path() or "gfortran")
            self._trees["bounds"] = tree
        return tree

    def _checked_original(self, fin: Path, work: Path, names: list[str],
                          limits: Optional[Limits] = None) -> tuple[str, Optional[list]]:
        """The original built for checking (``-fcheck=bounds``, its uninitialised locals set to
        signalling NaNs and odd integers: :meth:`_bounds_tree`) on these inputs: (the array
        it reads or writes outside its declared bounds, '' when none or when the only
        complaint is an F77 ``a(1)`` dummy standing for a longer array; its outputs, None
        when it did not return them)."""
        try:
            exe = self.build_bounds_reference()
        except UserError:
            return "", None
        if exe is None or not fin.exists():
            return "", None
        priv = Path(tempfile.mkdtemp(prefix=".bounds-", dir=work))
        try:
            res = self._run(str(exe), ["run", str(fin), str(priv / "ref.bin")], priv, "serial", limits=limits)
            if res.ok:
                try:
                    return "", read_records(priv / "ref.bin", names)
                except (ValueError, OSError):
                    return "", None
        finally:
            shutil.rmtree(priv, ignore_errors=True)
        return _out_of_bounds((res.stderr or "") + (res.stdout or ""), self._unit_dummies), None

    def _unit_dummies(self) -> set[str]:
        """Names of the dummies declared with a last extent of the literal 1 (the F77 idiom)
        in the kernel and the routines it calls."""
        from ..fortran import ir
        kernels = [self.kernel] + [self.program.kernel_of(c.routine) for c in self.program.reaches(self.kernel)
                                   if c.routine is not None]
        return {a.name for k in kernels for a in k.args if getattr(a, "declared_one", False) or (
                a.dims and isinstance(a.dims[-1].upper, ir.Literal) and a.dims[-1].upper.value == 1)}

    def _second_opinion(self, cr: CaseResult, fin: Path, work: Path, limits: Optional[Limits],
                        names: Optional[list[str]] = None, ref_out: Optional[list] = None,
                        scale: float = 0.0, by_clocks=None) -> CaseResult:
        """The case is the original's when, on these inputs, it reads or writes outside its
        arrays (code ``original-out-of-bounds``) or its outputs change with the values its
        uninitialised locals happen to hold (``original-uninitialised``): its outputs are
        undefined, so they prove nothing about the port (:meth:`_checked_original`; the
        case is left out of the proof). ``by_clocks()``: the outputs that change when the
        original's clocks run faster (asked only when an output differs: a time it measures
        differs in the slower checking build too, and says nothing of uninitialised reads)."""
        names = names or [a.name for a in self.kernel.args] + (["result"] if self.kernel.result is not None else [])
        oob, checked = self._checked_original(fin, work, names, limits)
        if oob:
            cr.passed = False
            cr.code = ORIGINAL_OUT_OF_BOUNDS
            cr.error = (f"the original reads or writes outside its arrays on these inputs ({oob}, seen by "
                        f"gfortran -fcheck=bounds): its outputs are undefined, the port is not at fault; give "
                        f"sizes or ranges the routine accepts in {self.spec_path.name}")
        elif checked is not None and ref_out is not None:
            clocked = {o.name for o in cr.outputs if o.message.startswith(CLOCKED)}  # differ in every run anyway
            bad = [r.name for r, c in zip(ref_out, checked)
                   if r.name not in clocked and not compare(r, c, self.spec.tolerance[r.name], scale).passed]
            if bad and by_clocks is not None:
                timed = by_clocks()
                for o in cr.outputs:  # not compared, and said so (the verdict's notes name them)
                    if o.name in bad and o.name in timed:
                        o.message = (f"{CLOCKED} {o.name} changes when its clocks run faster (a time it measures; "
                                     f"it differed in the checking build too)")
                bad = [n for n in bad if n not in timed]
            if bad:
                cr.passed = False
                cr.code = ORIGINAL_UNINITIALISED
                cr.error = (f"the original's outputs {', '.join(bad)} change when its uninitialised local variables "
                            f"hold other values (gfortran -finit-real=snan -finit-integer): it reads variables it "
                            f"never set on these inputs, so its outputs are undefined and the port is not at fault")
        return cr


def _out_of_bounds(text: str, unit_dummies) -> str:
    """The bounds violation gfortran's checking build reported in ``text`` ('' when none,
    or when it is the F77 idiom of a dummy declared with a last extent of 1 standing for an
    array of any length: ``unit_dummies()`` names those). Every form libgfortran prints: an
    index below or above a bound, outside the expected range of an array section, an
    array reference past a dimension, shapes that do not conform."""
    import re

    m = re.search(r"Fortran runtime error: ((?:Index '|Array bound mismatch|Array reference out of bounds)[^\n]*)", text)
    if m is None:
        return ""
    msg = m.group(1).strip()
    name = re.search(r"array '(\w+)'", msg)
    upper_one = ("above upper bound of 1" in msg or re.search(r"expected range \(-?\d+:1\)", msg) is not None
                 or re.search(r"exceeded \(-?\d+ > 1\)", msg) is not None)
    if upper_one and name is not None and name.group(1).lower() in unit_dummies():
        # the F77 idiom: a dummy declared (1) (or (lda, 1)) for an array of any length, in
        # the kernel or in a routine it calls (Nekbone's rzero(a, n) with a(1))
        return ""
    return msg
