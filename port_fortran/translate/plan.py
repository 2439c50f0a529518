"""The loop planner: which Kokkos pattern each loop and statement gets, and why.

Pure: reads the (structured, lowered) statement list, the loop analysis in ``Do.info`` and
the :class:`records.TranslateOptions`; returns a tree of plan nodes and one note per loop.

* statements that only touch scalars run on the host;
* a loop proven parallel -> ``parallel_for`` (RangePolicy), ``mdrange`` for a tightly
  nested parallel band, ``reduce`` when it has scalar reductions, ``atomic`` for scattered
  updates when ``options.atomic_scatter``;
* a loop that is not parallel but contains parallel loops (time steps, sweeps) -> a host
  loop launching them;
* everything else that touches arrays -> a single-iteration kernel (``serial``) so the data
  stays in the memory space; consecutive such statements share one kernel;
* a loop independent only under a condition on run-time values (``LoopInfo.condition``:
  a stride that may be zero, an offset that may be small) -> both, chosen where the loop
  starts: ``if (condition) parallel kernel else single-iteration kernel`` (``PVersion``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import ir
from ..records import TranslateOptions
from ..fortran.dataflow import FlowGraph
from ..fortran.fills import constant_bounds, element_count
from ..fortran.reductions import SECTION_ELEMENTS, index_loc_idiom, per_thread
from ..fortran.render import expr_str
from . import cstrings
from .access import names_in, scalars_written
from .launches import small_trips
from .scan import match_scan
from .symbols import Refusal, SymbolTable

# ------------------------------------------------------------------ plan nodes


@dataclass
class PHost:
    """A statement run on the host as it is (scalars only)."""
    stmt: ir.Stmt


@dataclass
class PIf:
    stmt: ir.If
    branches: list[list]  # plan nodes per branch
    else_body: list


@dataclass
class PLoop:
    """A host loop (not parallel) whose body launches kernels."""
    do: ir.Do
    body: list


@dataclass
class PWhile:
    stmt: ir.DoWhile
    body: list


@dataclass
class PVersion:
    """Loop versioning: ``parallel`` when ``cond`` holds where the loop starts, else
    ``serial`` (the same statements in a single-iteration kernel)."""
    do: ir.Do
    cond: ir.Expr
    parallel: "PKernel"
    serial: "PKernel"


@dataclass
class PKernel:
    kind: str  # 'range' | 'mdrange' | 'reduce' | 'locreduce' | 'scan' | 'atomic' | 'team' | 'serial'
    stmts: list[ir.Stmt]
    line: int
    band: list[ir.Do] = field(default_factory=list)  # the loops of the policy (mdrange: outer first)
    private: list[str] = field(default_factory=list)  # lambda locals
    reductions: list[ir.Reduction] = field(default_factory=list)
    atomic: list[str] = field(default_factory=list)
    copy_in: list[str] = field(default_factory=list)  # serial: scalars copied into the kernel
    copy_out: list[str] = field(default_factory=list)  # serial: scalars copied back
    locals: list[str] = field(default_factory=list)  # serial: scalars declared in the kernel
    loopvar_live: bool = False  # parallel: the DO variable is read after the loop
    live_band_vars: list[str] = field(default_factory=list)  # DO variables read after the loop
    loc: Optional["LocReduction"] = None  # kind 'locreduce'
    scan: Optional[object] = None  # kind 'scan': translate.scan.Scan
    team: Optional[tuple] = None  # kind 'team': (statements before, inner reduction loop, statements after)
    inductions: list = field(default_factory=list)  # ir.Induction: computed from the iteration number
    last_private: list[str] = field(default_factory=list)  # private arrays (scalars) the last iteration writes (hands on)
    scratch_boxes: dict = field(default_factory=dict)  # of those, name -> the boxes each iteration writes (LoopInfo)


@dataclass
class LocReduction:
    """``if (v > m) then; m = v; idx = i; end if`` (first occurrence of the maximum; '<'
    for the minimum): a (value, index) reduction, ties to the lowest index. ``prelude``:
    assignments of scalars before the test that compute ``v`` (BookLeaf's time-step
    control: ``w1 = max(...)``, ``w1 = ellength(iel)/w1``, then ``if (w1 < w2)``); the
    planner makes sure they are private to the iteration."""
    value_var: str
    index_var: str
    op: str  # 'max' | 'min'
    value: ir.Expr
    line: int
    prelude: list = field(default_factory=list)
    array: str = ""  # ``if (x(k) < x(m)) m = k``: no value variable, the values are x's


def match_loc_reduction(do: ir.Do) -> Optional[LocReduction]:
    body = [s for s in do.body if not isinstance(s, ir.Continue)]
    if not body or not isinstance(body[-1], ir.If):
        return None
    prelude = body[:-1]
    if not all(isinstance(t, ir.Assign) and isinstance(t.target, ir.Name) for t in prelude):
        return None
    s = body[-1]
    il = index_loc_idiom(s, do.var)
    if il is not None:
        if prelude:
            return None
        m, op, arr = il
        return LocReduction("", m, op, ir.ArrayRef(arr, [ir.Name(do.var, ftype=ir.INTEGER)]), s.line, [], arr)
    if len(s.branches) != 1 or s.else_body:
        return None
    cond, stmts = s.branches[0]
    if not isinstance(cond, ir.BinOp) or cond.op not in (">", "<"):
        return None
    if isinstance(cond.right, ir.Name):
        v, m, op = cond.left, cond.right.name, ("max" if cond.op == ">" else "min")
    elif isinstance(cond.left, ir.Name):
        v, m, op = cond.right, cond.left.name, ("max" if cond.op == "<" else "min")
    else:
        return None
    if len(stmts) != 2 or not all(isinstance(t, ir.Assign) and isinstance(t.target, ir.Name) for t in stmts):
        return None
    same = lambda a, b: ir.to_dict(a) == ir.to_dict(b)  # noqa: E731
    val = [t for t in stmts if t.target.name == m]
    idx = [t for t in stmts if t.target.name != m]
    if len(val) != 1 or len(idx) != 1 or not same(val[0].value, v):
        return None
    if not (isinstance(idx[0].value, ir.Name) and idx[0].value.name == do.var):
        return None
    ix = idx[0].target.name
    if {m, ix} & names_in(v):
        return None
    if any(t.target.name in (m, ix) or {m, ix} & names_in(t.value) for t in prelude):
        return None
    return LocReduction(m, ix, op, v, s.line, prelude)


SCATTER_CODES = {"scattered-update"}


def fortran_do(do: ir.Do) -> str:
    return f"do {do.var}"


class Planner:
    def __init__(self, kernel: ir.Kernel, tab: SymbolTable, options: TranslateOptions,
                 out_args: Optional[dict] = None, pure_functions: Optional[set] = None):
        self.kernel = kernel
        self.tab = tab
        self.options = options
        self.notes: list[str] = []
        self.patterns: list[str] = []
        self.versions: list[str] = []  # "line 24: do i parallel if incy /= 0" (records.Port.versions)
        self.out_args = out_args or {}
        self.pure_functions = pure_functions or set()  # same-source functions inlined, no side effects
        self._par_cache: dict[int, tuple] = {}
        self._scans: dict[int, object] = {}  # loop -> the prefix sum or location reduction parallel_kind matched
        # a sum into one element counts as parallel (hybrid's search for nests: an outlined
        # nest reduces it into a scalar, translate/element_reductions.py)
        self.element_reductions = False

    # ------------------------------------------------------------------ helpers
    def add_pattern(self, p: str):
        if p not in self.patterns:
            self.patterns.append(p)

    def is_array_name(self, name: str) -> bool:
        return self.tab.is_array(name)

    def touches_arrays(self, exprs) -> bool:
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and x.name == "size":
                    continue
                if isinstance(x, (ir.Name, ir.ArrayRef)) and self.is_array_name(x.name):
                    return True
        return False

    def stmt_touches_arrays(self, s: ir.Stmt) -> bool:
        from .access import own_exprs
        for t in ir.walk([s]):
            exprs = list(own_exprs(t))
            if isinstance(t, ir.Assign):
                exprs.append(t.target)
            if self.touches_arrays(exprs):
                return True
        return False

    def host_expr_ok(self, exprs) -> bool:
        return not self.touches_arrays(exprs)

    # ------------------------------------------------------------------ parallel verdict
    def parallel_kind(self, do: ir.Do) -> tuple[Optional[str], str]:
        """('range'|'reduce'|'atomic', why) when the loop can run in parallel, else (None, why not)."""
        key = id(do)
        if key in self._par_cache:
            return self._par_cache[key]
        res = self._parallel_kind(do)
        self._par_cache[key] = res
        return res

    def _parallel_kind(self, do: ir.Do):
        info = do.info
        if do.line in self.options.serial_loops:
            return None, "kept serial by the translate options"
        string = cstrings.string_in([do], self.tab)
        if string is not None:
            return None, f"works on the CHARACTER string {string} (strings stay on the host)"
        if info.early_exit:
            return None, _reason(info, "leaves the loop early")
        for s in ir.walk(do.body):
            if isinstance(s, ir.Unsupported):  # say what it is: 'UNSUPPORTED inside' told the user nothing
                return None, f"{s.reason} (line {s.line})"
            if isinstance(s, (ir.Return, ir.Stop, ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)):
                return None, f"{type(s).__name__.upper()} inside (line {s.line})"
            if isinstance(s, ir.Exit) and not self._inside_inner_loop(do, s):
                return None, f"EXIT inside (line {s.line})"
        if do.step is not None and not isinstance(do.step, ir.Literal):
            if names_in(do.step) & scalars_written(do.body, self.out_args):
                return None, "the step changes inside the loop"
        inner_vars = {s.var for s in ir.walk(do.body) if isinstance(s, ir.Do)}
        written = scalars_written(do.body, self.out_args) - inner_vars - {do.var}
        inductions = list(getattr(info, "inductions", None) or [])
        codes = {d.code for d in info.reasons}
        fixable = {"induction-variable"} if inductions else set()
        if info.calls and all(c in self.pure_functions for c in info.calls):
            fixable.add("call-in-loop")
        cond = getattr(info, "condition", None)
        if cond is not None:  # values where the loop starts: versioned, parallel when it holds
            fixable.add("conditional-independence")
        pure_call_only = (not info.parallel and info.reasons and codes <= fixable)
        if not info.parallel and not pure_call_only:
            inductions = []
        if info.parallel or pure_call_only:
            red = [r for r in info.reductions]
            if not all(per_thread(r) or (self.element_reductions and r.section is None) for r in red):
                return None, "accumulates into an array element (kept serial)"
            allowed = set(info.private) | {r.var for r in red} | {ind.var for ind in inductions}
            extra = sorted(w for w in written if w not in allowed)
            if extra:
                return None, f"scalar {', '.join(extra)} written but not private"
            for r in red:
                sym = self.tab.get(r.var)
                element = r.target is not None and r.section is None  # reduced into a scalar when outlined
                if sym is None or r.op not in ("sum", "prod", "min", "max") or \
                        sym.is_array != (r.section is not None or element):
                    return None, f"reduction on {r.var} not supported"
                if r.section is not None:
                    bounds = constant_bounds(sym.dims, self.kernel.constants())
                    if bounds is not None and (len(bounds) != len(r.section) or any(
                            lo < blo or hi > bhi for (lo, hi), (blo, bhi) in zip(r.section, bounds))):
                        return None, f"reduction into {r.var} outside its declared bounds"
                    if bounds is None or element_count(bounds) > SECTION_ELEMENTS:
                        return None, (f"reduction into a section of {r.var}: the array needs constant extents of at "
                                      f"most {SECTION_ELEMENTS} elements (one copy per thread)")
                if sym.ftype.base not in ("integer", "real", "complex") or (
                        sym.ftype.base == "complex" and r.op in ("min", "max")):
                    return None, f"reduction on {r.var} of type {sym.ftype} not supported"
            why = ""
            if "conditional-independence" in codes:
                why += f"; independent when {expr_str(cond)}"
            if "call-in-loop" in codes:
                why += "; calls only pure functions, inlined"
            elif info.calls:
                why += f"; calls {', '.join(info.calls)} as {'device functions' if len(info.calls) > 1 else 'a device function'}"
            if inductions:
                why += "; induction variable" + ("s " if len(inductions) > 1 else " ") + \
                    ", ".join(i.var for i in inductions) + f" computed from {do.var}"

            if red:
                return "reduce", "reduction " + ", ".join(f"{r.op} of {r.var}" for r in red) + why
            if why.startswith("; independent when"):
                return "range", "iterations are" + why[1:]
            return "range", "iterations are independent" + why
        # first-occurrence max/min location: a deterministic (value, index) reduction
        if info.reasons and all(d.code == "loc-reduction" for d in info.reasons) and not info.reductions:
            loc = self._scans[id(do)] = match_loc_reduction(do)
            if loc is not None:
                extra = sorted(w for w in written if w not in set(info.private) | {loc.value_var, loc.index_var})
                vsym = self.tab.get(loc.array or loc.value_var)
                if not extra and vsym and vsym.ftype.base in ("integer", "real"):
                    what = f"the index {loc.index_var} of the first {loc.op}imum of {loc.array}" if loc.array else \
                        f"{loc.value_var} with {loc.index_var}"
                    return "locreduce", f"{loc.op}loc reduction on {what} (ties to the lowest index)"
        # a running sum whose partial values are stored: a prefix sum (parallel_scan)
        if self.options.scans:
            sc = self._scans[id(do)] = match_scan(do, self.tab)
            if sc is not None:
                return "scan", (f"prefix sum: {sc.var} accumulates over {do.var} and the partial sums are stored"
                                if not sc.array else f"prefix sum: {sc.var}({do.var}) adds to {sc.var}({do.var}-1)")
        # atomics for scattered updates
        if info.scattered and self.options.atomic_scatter:
            others = [d for d in info.reasons if d.code not in SCATTER_CODES]
            if others:
                return None, _reason(info, "not parallel")
            if info.reductions:
                return None, "scattered updates together with reductions"
            if not self.atomic_forms_ok(do, set(info.scattered)):
                return None, "scattered arrays are touched other than by += updates"
            extra = sorted(w for w in written if w not in set(info.private))
            if extra:
                return None, f"scalar {', '.join(extra)} written but not private"
            return "atomic", "scattered updates of " + ", ".join(info.scattered) + " made atomic"
        return None, _reason(info, "not proven parallel")

    def _inside_inner_loop(self, do: ir.Do, target: ir.Stmt) -> bool:
        for s in ir.walk(do.body):
            if isinstance(s, (ir.Do, ir.DoWhile)) and any(t is target for t in ir.walk(s.body)):
                return True
        return False

    def atomic_forms_ok(self, do: ir.Do, arrays: set[str]) -> bool:
        for s in ir.walk(do.body):
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.ArrayRef) and s.target.name in arrays:
                if atomic_increment(s) is None:
                    return False
                continue
            exprs = []
            from .access import own_exprs
            exprs = own_exprs(s)
            if any(n in arrays for e in exprs for n in names_in(e)):
                return False
        return True

    def would_launch(self, stmts: list[ir.Stmt]) -> bool:
        """True when some loop in ``stmts`` would become a parallel kernel."""
        return any(isinstance(s, ir.Do) and self.parallel_kind(s)[0] is not None for s in ir.walk(stmts))

    # ------------------------------------------------------------------ planning
    def plan(self, body: list[ir.Stmt], live_at_end: set[str]) -> list:
        """Plan nodes for the routine's (structured, lowered) statements; ``live_at_end``:
        the names its caller reads (outputs, COMMON members written, the result)."""
        self.flow = FlowGraph(body, live_at_end=live_at_end, globals_=live_at_end)
        return self.plan_list(body)

    def live_after(self, s: ir.Stmt, name: str) -> bool:
        """May the value ``name`` has when ``s`` completes be read later (fortran/dataflow)?"""
        return self.flow.is_live_after(s, name)

    def plan_list(self, stmts: list[ir.Stmt]) -> list:
        out: list = []
        pending: list[ir.Stmt] = []

        def flush():
            if pending:
                out.append(self.serial_region(list(pending)))
                pending.clear()

        for s in stmts:
            node = self.plan_stmt(s)
            if node == "device":
                cstrings.refuse_in_kernel(s, self.tab)
                pending.append(s)
                continue
            flush()
            if node is not None:
                out.append(node)
        flush()
        return out

    def plan_stmt(self, s: ir.Stmt):
        if isinstance(s, ir.Unsupported):
            raise Refusal(s.construct, s.reason, s.line)
        if isinstance(s, ir.Stop):
            raise Refusal("stop-in-kernel", "STOP in the kernel", s.line)
        if isinstance(s, (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)):
            raise Refusal("unstructured-goto", "a GO TO the rules could not structure", s.line)
        if isinstance(s, ir.Continue):
            return None
        if isinstance(s, (ir.Return, ir.Cycle, ir.Exit)):
            return PHost(s)
        if isinstance(s, ir.Assign):
            if isinstance(s.target, ir.Name) and not self.is_array_name(s.target.name) \
                    and self.host_expr_ok([s.value]):
                return PHost(s)
            return "device"
        if isinstance(s, ir.CallStmt):
            return PHost(s) if self.host_expr_ok(s.args) else "device"
        if isinstance(s, ir.If):
            conds = [c for c, _ in s.branches]
            if self.host_expr_ok(conds) and (self.would_launch([s]) or self._has_return(s)):
                # the branch bodies continue with what follows the IF
                branches = [self.plan_list(b) for _, b in s.branches]
                els = self.plan_list(s.else_body)
                return PIf(s, branches, els)
            if not self.stmt_touches_arrays(s) and not self._has_return(s):
                return PHost(s)
            return "device"
        if isinstance(s, ir.Do):
            kind, why = self.parallel_kind(s)
            if kind is not None:
                if "conditional-independence" in {d.code for d in s.info.reasons}:
                    return self.versioned(s, kind, why)
                return self.parallel_region(s, kind, why)
            bounds = [x for x in (s.start, s.end, s.step) if x is not None]
            small = small_trips(s, lambda d: self.parallel_kind(d)[0] is not None, self.kernel.constants())
            if small is not None and self.stmt_touches_arrays(s):  # launches.py: a launch per pass does not pay
                return self.note_loop(s, f"serial, whole in one kernel (not parallel: {why}; {small})") or "device"
            if self.would_launch(s.body) and self.host_expr_ok(bounds):
                self.note_loop(s, f"host loop (not parallel: {why}); launches the parallel loops inside")
                body = self.plan_list(s.body)
                return PLoop(s, body)
            if not self.stmt_touches_arrays(s):
                self.note_loop(s, f"host loop over scalars ({why})")
                return PHost(s)
            return "device"
        if isinstance(s, ir.DoWhile):
            if self.would_launch(s.body) and self.host_expr_ok([s.cond]):
                self.notes.append(f"line {s.line}: do while -> host loop launching the parallel loops inside")
                return PWhile(s, self.plan_list(s.body))
            if not self.stmt_touches_arrays(s):
                return PHost(s)
            return "device"
        if isinstance(s, (ir.Where, ir.SelectCase)):
            raise Refusal("unsupported-construct", f"{type(s).__name__} left after lowering", s.line)
        raise Refusal("unsupported-construct", f"statement {type(s).__name__}", s.line)

    @staticmethod
    def _has_return(s: ir.Stmt) -> bool:
        return any(isinstance(t, ir.Return) for t in ir.walk([s]))

    def note_loop(self, do: ir.Do, text: str):
        turned = f" (interchanged: the loop of line {do.info.interchanged} moved outside)" \
            if getattr(do.info, "interchanged", 0) else ""
        if getattr(do, "host_original", None) is not None:
            rows = getattr(do, "sunk_rows", None) or "the rows"
            turned = (f" (sunk: its loops over {rows} made one loop around the column's statements; "
                      "the host backends run the original order)")
        self.notes.append(f"line {do.line}: {fortran_do(do)}{turned} -> {text}")

    # ------------------------------------------------------------------ parallel loops
    def parallel_region(self, do: ir.Do, kind: str, why: str) -> "PKernel":
        info = do.info
        private = list(dict.fromkeys(list(info.private) +
                                     [s.var for s in ir.walk(do.body) if isinstance(s, ir.Do)]))
        last = [x for x in getattr(info, "last_private", None) or [] if x in private]
        if last and (kind not in ("range",) or const_step(do) != 1):
            return self._as_serial_fallback(do, f"{', '.join(last)} would be private with the last iteration "
                                                "writing through (parallel_for over unit steps only)")
        live_private = [p for p in private if p not in last and p not in info.dead_after and self.live_after(do, p)]
        if live_private:
            # last values are needed after the loop: keep it serial
            return self._as_serial_fallback(do, f"private {', '.join(live_private)} is used after the loop")
        if last:
            why += f"; {', '.join(last)} private to each iteration, the last one writing through"
        node = PKernel(kind, [do], do.line, band=[do], private=private, last_private=last,
                       scratch_boxes={x: b for x, b in (getattr(info, 'scratch_boxes', None) or {}).items() if x in last})
        if not do.info.parallel:
            node.inductions = list(getattr(do.info, "inductions", None) or [])
            ivars = {i.var for i in node.inductions}
            node.private = [p for p in node.private if p not in ivars]
        node.loopvar_live = self.live_after(do, do.var)
        node.live_band_vars = [d.var for d in (self.band(do) if kind == "range" and self.options.mdrange else [do])
                               if self.live_after(do, d.var)]
        if kind == "scan":
            node.scan = self._scans[id(do)]  # what parallel_kind matched
            self.add_pattern("scan")
            self.note_loop(do, f"parallel_scan ({why})")
        elif kind == "locreduce":
            node.loc = self._scans[id(do)]  # what parallel_kind matched
            self.add_pattern("reduce")
            self.note_loop(do, f"parallel_reduce ({why})")
        elif kind == "reduce":
            node.reductions = list(info.reductions)
            self.add_pattern("reduce")
            band = self.reduce_band(do) if self.options.mdrange else [do]
            if len(band) > 1:
                node.band = band
                node.live_band_vars = [d.var for d in band if self.live_after(do, d.var)]
                self.note_loop(do, f"parallel_reduce over an MDRangePolicy of {', '.join(d.var for d in band)} "
                                   f"(tightly nested parallel loops reducing the same variables; {why})")
                for inner in band[1:]:
                    self.note_loop(inner, f"part of the MDRangePolicy reduction of line {do.line}")
            else:
                self.note_loop(do, f"parallel_reduce ({why})")
        elif kind == "atomic":
            node.atomic = list(info.scattered)
            self.add_pattern("atomic")
            self.add_pattern("parallel_for")
            self.note_loop(do, f"parallel_for with Kokkos::atomic_add ({why})")
        elif self.options.team_reductions and not node.inductions and not node.last_private \
                and self.team_split(do) is not None:
            node.kind = "team"
            node.team = self.team_split(do)
            self.add_pattern("team")
            inner = node.team[1]
            self.note_loop(do, f"TeamPolicy: one team per {do.var} ({why}), team reduction over "
                               f"{inner.var} at line {inner.line}")
            self.note_loop(inner, f"TeamThreadRange parallel_reduce inside the team of line {do.line}")
            for other in ir.walk(do.body):
                if isinstance(other, ir.Do) and other is not inner:
                    self.note_loop(other, f"sequential inside the team of line {do.line}")
            return node
        else:
            band = self.band(do) if self.options.mdrange and not node.inductions else [do]
            if len(band) > 1:
                node.kind = "mdrange"
                node.band = band
                self.add_pattern("mdrange")
                self.note_loop(do, f"MDRangePolicy over {', '.join(d.var for d in band)} "
                                   f"(tightly nested parallel loops; {why})")
                for inner in band[1:]:
                    self.note_loop(inner, f"part of the MDRangePolicy of line {do.line}")
            else:
                self.add_pattern("parallel_for")
                self.note_loop(do, f"parallel_for RangePolicy ({why})")
        for inner in ir.walk(do.body):
            if isinstance(inner, ir.Do) and inner not in node.band:
                self.note_loop(inner, f"sequential inside the parallel loop of line {do.line}")
        return node

    def versioned(self, do: ir.Do, kind: str, why: str):
        """A loop independent only when its condition holds: the parallel kernel and the
        single-iteration kernel of the same statements, chosen on the host where the loop
        starts. Never the parallel kernel alone: the condition is a run-time value."""
        n_notes = len(self.notes)
        par = self.parallel_region(do, kind, why)
        if par.kind == "serial":  # the parallel region itself fell back to serial
            return par
        par_notes = self.notes[n_notes:]
        del self.notes[n_notes:]
        ser = self.serial_region([do], noted=True)
        cond = do.info.condition
        self.add_pattern("versioned")
        self.versions.append(f"line {do.line}: {fortran_do(do)} parallel if {expr_str(cond)}")
        own = f"line {do.line}: "
        for note in par_notes:
            if note.startswith(own):
                note += f", run when {expr_str(cond)} holds where the loop starts; otherwise serial in a " \
                    "single-iteration kernel"
            self.notes.append(note)
        return PVersion(do, cond, par, ser)

    def team_split(self, do: ir.Do):
        """(before, inner, after) when the loop body is: scalar assignments to privates, one
        inner loop that is a single scalar reduction into a private, then statements without
        loops (run once per team)."""
        body = [s for s in do.body if not isinstance(s, ir.Continue)]
        loops = [k for k, s in enumerate(body) if isinstance(s, (ir.Do, ir.DoWhile))]
        if len(loops) != 1 or do.step is not None and const_step(do) != 1:
            return None
        k = loops[0]
        inner = body[k]
        if not isinstance(inner, ir.Do) or const_step(inner) != 1 or inner.line in self.options.serial_loops:
            return None
        info = inner.info
        if not info.parallel or len(info.reductions) != 1 or info.reductions[0].target is not None:
            return None
        r = info.reductions[0]
        if r.op not in ("sum", "prod", "min", "max") or r.var not in do.info.private:
            return None
        if any(isinstance(s, (ir.Do, ir.DoWhile)) for s in ir.walk(inner.body)):
            return None
        sym = self.tab.get(r.var)
        if sym is None or sym.ftype.base not in ("integer", "real"):
            return None
        before, after = body[:k], body[k + 1:]
        for s in before:
            if not (isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)):
                return None
        if any(isinstance(s, (ir.Do, ir.DoWhile, ir.Cycle, ir.Exit)) for s in ir.walk(after)):
            return None
        return before, inner, after

    def reduce_band(self, do: ir.Do) -> list[ir.Do]:
        """The loops of a reduction nest one MDRange parallel_reduce can cover: ``do`` and
        the tightly nested parallel loops inside whose only reductions are ``do``'s own
        (same scalar, same operator), unit steps, bounds free of the outer indices, no
        induction variables. One iteration space over the whole nest lets a GPU spread the
        contiguous (leftmost) index over its threads instead of looping over it in each."""
        reds = do.info.reductions
        outer = {(r.var, r.op) for r in reds if per_thread(r)}
        if (not reds or len(outer) != len(reds) or getattr(do.info, "inductions", None)
                or const_step(do) != 1 or do.line in self.options.serial_loops):
            return [do]
        band = [do]
        cur = do
        while len(band) < 6:  # MDRangePolicy's largest rank
            body = [s for s in cur.body if not isinstance(s, ir.Continue)]
            if len(body) != 1 or not isinstance(body[0], ir.Do):
                break
            inner = body[0]
            info = inner.info
            if (inner.line in self.options.serial_loops or not info.parallel or const_step(inner) != 1
                    or getattr(info, "inductions", None) or info.scattered
                    or any(not per_thread(r) or (r.var, r.op) not in outer for r in info.reductions)):
                break
            if (names_in(inner.start) | names_in(inner.end)) & {d.var for d in band}:
                break
            band.append(inner)
            cur = inner
        return band

    def band(self, do: ir.Do) -> list[ir.Do]:
        band = [do]
        depth = max(1, do.info.tightly_nested_parallel)
        if not do.info.parallel and getattr(do.info, "condition", None) is not None:
            # a versioned loop: the tightly nested parallel loops inside join its band
            body = [s for s in do.body if not isinstance(s, ir.Continue)]
            if len(body) == 1 and isinstance(body[0], ir.Do) and body[0].info.parallel:
                depth = 1 + max(1, body[0].info.tightly_nested_parallel)
        cur = do
        while len(band) < depth:
            body = [s for s in cur.body if not isinstance(s, ir.Continue)]
            if len(body) != 1 or not isinstance(body[0], ir.Do):
                break
            inner = body[0]
            if inner.line in self.options.serial_loops or not inner.info.parallel or inner.info.reductions:
                break
            if inner.step is not None and not (isinstance(inner.step, ir.Literal) and inner.step.value == 1):
                break
            outer_vars = {d.var for d in band}
            if (names_in(inner.start) | names_in(inner.end)) & outer_vars:
                break
            band.append(inner)
            cur = inner
        if len(band) > 1 and do.step is not None and not (isinstance(do.step, ir.Literal) and do.step.value == 1):
            return [do]
        return band

    def _as_serial_fallback(self, do: ir.Do, why: str):
        self.note_loop(do, f"serial in a single-iteration kernel ({why})")
        return self.serial_region([do], noted=True)

    # ------------------------------------------------------------------ serial regions
    def serial_region(self, stmts: list[ir.Stmt], noted: bool = False) -> PKernel:
        for s in ir.walk(stmts):
            if isinstance(s, ir.Return):
                raise Refusal("early-exit", "RETURN inside code that must run in a kernel "
                              "(its condition reads arrays)", s.line)
            if isinstance(s, (ir.Stop,)):
                raise Refusal("stop-in-kernel", "STOP in the kernel", s.line)
            if isinstance(s, ir.Unsupported):
                raise Refusal(s.construct, s.reason, s.line)
        written = sorted(w for w in scalars_written(stmts, self.out_args) if not self.is_array_name(w))
        # copied out: what is read after the region; copied in: what the region may read
        # before assigning it, and what it may leave unassigned on a path to a copy-out
        copy_out = [w for w in written if self.live_after(stmts[-1], w)]
        needed = FlowGraph(stmts, live_at_end=copy_out).exposed()
        copy_in = [w for w in written if w in needed]
        local = list(written)
        node = PKernel("serial", stmts, stmts[0].line, copy_in=copy_in, copy_out=copy_out, locals=local)
        self.add_pattern("serial")
        if not noted:
            for s in ir.walk(stmts):
                if isinstance(s, ir.Do):
                    kind, why = self.parallel_kind(s)
                    self.note_loop(s, f"serial in a single-iteration kernel ({why})")
        return node


def const_step(do: ir.Do) -> Optional[int]:
    if do.step is None:
        return 1
    if isinstance(do.step, ir.Literal) and isinstance(do.step.value, int):
        return do.step.value
    return None


def _reason(info: ir.LoopInfo, default: str) -> str:
    if info.reasons:
        d = info.reasons[0]
        return f"{d.code}: {d.message}"
    return default


def atomic_increment(s: ir.Assign) -> Optional[tuple[str, ir.Expr]]:
    """('+'|'-', increment) when ``s`` is ``a(k) = a(k) + e`` / ``e + a(k)`` / ``a(k) - e``."""
    t = s.target
    v = s.value
    if not isinstance(v, ir.BinOp) or v.op not in "+-":
        return None
    same = lambda e: ir.to_dict(e) == ir.to_dict(t)  # noqa: E731
    if same(v.left) and t.name not in names_in(v.right):
        return v.op, v.right
    if v.op == "+" and same(v.right) and t.name not in names_in(v.left):
        return "+", v.left
    return None


def constant_extents(sym, kernel: ir.Kernel) -> Optional[list[int]]:
    """The extents of an array whose bounds named constants fix, else None (a private copy
    per iteration or thread needs them)."""
    bounds = constant_bounds(sym.dims, kernel.constants())
    return None if bounds is None else [hi - lo + 1 for lo, hi in bounds]
