"""What a call does: the interprocedural effects of a routine of the program, for the
dependence analysis of loops that call it and for the translator's device functions.

Built on the program model (``program.Program``: where each callee is, its IR, its
intents refined over the tree, its impurities); nothing here is a second copy of those
facts. For a callee, per dummy argument (:class:`DummyEffect`):

* read and/or written (its intent), and for a scalar whether the call surely assigns it
  before reading it (``intent(out)``: the call defines the actual);
* the *span*: the first and last element it can touch, as offsets from the dummy's first
  element in column-major (array element) order over its declared shape, in terms of the
  callee's other arguments when symbolic (``dtemp(5)`` filled by ``do m = 1, 5`` -> 0..4;
  ``a(n)`` swept by ``do i = 1, n`` -> 0..n-1). Through the callee's own calls,
  transitively: a dummy passed on as an array element or a whole array touches what the
  inner callee touches of it;

and ``blockers``: why the callee cannot run as a device function called from a parallel
loop -- I/O and other constructs the IR does not model, STOP, state kept between calls
(SAVE), COMMON blocks it writes, module variables it writes, callees no file defines,
intrinsic subroutines, recursion -- in it or in anything it calls, each naming the
routine, the file and the line (``Program.impurities``). COMMON members and module
variables it only reads are no blockers: they are extra read-only dummies after its own
(``common_reads``, ``module_reads``), which an extended call passes.

:meth:`Calls.actual_ref` then says what a call touches of the *caller's* array passed as
an actual argument, by sequence association in column-major order: an element actual
``u(1, i, j, k)`` passed to a dummy whose span is 0..4 is ``u(1:5, i, j, k)`` when the
five elements provably stay in the first dimension; otherwise the span spills into the
next dimensions and the access covers the whole leading dimensions and the rows of the
first one it fits in, or at worst everything from the element to the end of the array
(the most a legal call can touch). Exact or conservative, never a guess.

Pure over the IR; :class:`Calls` memoises per callee.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import affine, ir
from .bounds import BoundsFinder
from .rewrite import replace_names
from .facts import Facts
from .sections import section_ref

I4 = ir.INTEGER


@dataclass
class DummyEffect:
    """What a call does to one dummy argument (see the module docstring)."""

    name: str
    position: int
    ftype: ir.FType
    rank: int
    read: bool
    write: bool
    assigned: bool = False  # scalar surely assigned before any read of it (intent out)
    # (first, last) element offsets touched from the dummy's first element; last None when
    # not bounded; span None when the callee never references the dummy
    span: Optional[tuple[ir.Expr, Optional[ir.Expr]]] = None
    # elements of an array dummy of constant shape the callee surely assigns, all of them,
    # before it reads any (privatize: a call that fills a caller's scratch array kills it)
    fills: int = 0
    # parts of an array dummy the callee surely assigns and never reads, as boxes of
    # (lower, upper) polynomials per dimension in the callee's names (privatize)
    fill_boxes: list = field(default_factory=list)
    # per dimension of an array dummy, the (min, max) subscript the callee touches in its
    # own names, or None (bounds.BoundsFinder; an array section actual maps them, sections)
    dim_bounds: list = field(default_factory=list)

    @property
    def touched(self) -> bool:
        return self.span is not None


@dataclass
class Effects:
    """The effects of one called name. ``callee`` is None when the name resolves to no
    routine of the program (then ``blockers`` says why)."""

    name: str
    callee: Optional[ir.Kernel]
    dummies: list[DummyEffect] = field(default_factory=list)
    blockers: list[ir.Diagnostic] = field(default_factory=list)
    # COMMON members the callee only reads, (block, member): its device function takes them
    # as extra arguments, which the caller passes (:func:`pass_common_reads`)
    common_reads: list[tuple[str, str]] = field(default_factory=list)
    # module variables the callee and its callees only read (``module_reads.ModuleRead``):
    # not blockers; an outlined nest passes them after the COMMON members (``extend_call``)
    module_reads: list = field(default_factory=list)

    @property
    def translatable(self) -> bool:
        """Runs as a device function: a routine of the program without side effects other
        than through its arguments."""
        return self.callee is not None and not self.blockers

    @property
    def where(self) -> str:
        if self.callee is None:
            return self.name
        return f"{self.callee.file}:{self.callee.line_start}"

    def why_not(self) -> str:
        """Why it cannot run as a device function, naming the routine and the line."""
        if not self.blockers:
            return ""
        b = self.blockers[0]
        if self.callee is None:
            return b.message
        at = f"{b.file or self.callee.file}:{b.line}" if b.line else (b.file or self.callee.file)
        return f"{self.name} ({self.where}) cannot run as a device function: {b.message} ({at}) [{b.code}]"

    def dummy(self, position: int) -> Optional[DummyEffect]:
        return self.dummies[position] if 0 <= position < len(self.dummies) else None

    def written_positions(self) -> set[int]:
        return {d.position for d in self.dummies if d.write}

    def assigned_positions(self) -> set[int]:
        """Scalar dummies the call surely assigns before reading (the actual is defined)."""
        return {d.position for d in self.dummies if d.assigned}


def _lit(v: int) -> ir.Expr:
    return ir.Literal(int(v), str(int(v)), ftype=I4)


def _whole_span(v: ir.Variable, env: dict) -> Optional[ir.Expr]:
    """The last element offset of an array of constant shape (None when not constant)."""
    from .fills import constant_bounds, element_count

    bounds = constant_bounds(v.dims, env)
    return None if bounds is None else _lit(element_count(bounds) - 1)


def _params(k: ir.Kernel) -> dict:
    return {n: v.parameter for n, v in k.locals.items() if v.parameter is not None}


def variable(k: ir.Kernel, name: str) -> Optional[ir.Variable]:
    """The declaration of a name of ``k`` (argument, local, COMMON or module variable)."""
    for a in k.args:
        if a.name == name:
            return a
    return k.locals.get(name) or k.module_vars.get(name)


class Calls:
    """The effects of the calls of a program's routines (memoised per callee).

    ``program``: a ``program.Program`` (the whole tree, or one file: :meth:`of_file`)."""

    def __init__(self, program):
        self.program = program
        self._memo: dict[tuple[str, str], Effects] = {}
        self._active: set[tuple[str, str]] = set()

    @classmethod
    def of_file(cls, sf: ir.SourceFile) -> "Calls":
        """Callees of the file's own routines only (the per-file analysis before the
        program of the whole tree exists)."""
        from .program import FileSettings, FileUnits, Program

        prog = Program()
        uses = sorted({u for k in sf.kernels for u in getattr(k, "uses", [])})
        prog.add_file(sf.path, sf, FileSettings(), FileUnits(list(sf.modules), uses))
        prog.link()
        return cls(prog)

    # ------------------------------------------------------------------ resolution
    def _callee(self, caller: ir.Kernel, name: str):
        """Where ``name`` is defined, for a routine of the program or a main program (which
        is no routine of it: its calls, to its internal procedures too, are resolved now)."""
        c = self.program.callee(caller, name)
        if c is None and getattr(caller, "kind", "") == "program" and hasattr(self.program, "resolve_from"):
            c = self.program.resolve_from(caller, name)
        return c

    def resolve(self, caller: ir.Kernel, name: str) -> Optional[ir.Kernel]:
        c = self._callee(caller, name)
        if c is None or c.routine is None:
            return None
        k = self.program.kernel_of(c.routine)
        return k if isinstance(k, ir.Kernel) else None

    def _unresolved(self, caller: ir.Kernel, name: str) -> str:
        from .program import Callee, unknown_where

        c = self._callee(caller, name) or Callee(name, "external")
        return unknown_where(c)

    def _is_intrinsic(self, caller: ir.Kernel, name: str) -> bool:
        c = self._callee(caller, name)
        return c is not None and c.where == "intrinsic"

    def callee_first(self, kernels: list[ir.Kernel]) -> list[ir.Kernel]:
        """``kernels`` ordered so that every routine comes after the routines it calls
        (recursion broken anywhere): the order in which to analyse their loops, so that a
        callee's own loops are analysed before its effects are summarised."""
        order: list[ir.Kernel] = []
        state: dict[int, int] = {}
        mine = {id(k) for k in kernels}

        def visit(k: ir.Kernel) -> None:
            if state.get(id(k)):
                return
            state[id(k)] = 1
            for name in k.calls:
                c = self.resolve(k, name)
                if c is not None and id(c) in mine:
                    visit(c)
            order.append(k)

        for k in kernels:
            visit(k)
        return order

    # ------------------------------------------------------------------ effects
    def effects(self, caller: ir.Kernel, name: str) -> Effects:
        """What calling ``name`` from ``caller`` does (never raises: an analysis that
        fails names itself as the blocker)."""
        callee = self.resolve(caller, name)
        if callee is None:
            if name == "lsame":  # the translator's own character comparison
                return Effects(name, None, [], [ir.Diagnostic("call-to-unknown", "'lsame' is not a routine of the "
                                                              "program", 0)])
            code = "intrinsic-call" if self._is_intrinsic(caller, name) else "call-to-unknown"
            why = self._unresolved(caller, name)
            if code == "intrinsic-call":
                why += " with effects the analysis does not model"
            return Effects(name, None, [], [ir.Diagnostic(code, why, 0, caller.file)])
        key = (str(callee.file), callee.name)
        hit = self._memo.get(key)
        if hit is not None:
            return hit if hit.name == name else Effects(name, hit.callee, hit.dummies, hit.blockers, hit.common_reads,
                                                        hit.module_reads)
        if key in self._active:
            return Effects(name, callee, [], [ir.Diagnostic("recursion", f"calls itself (recursion through {name})",
                                                            callee.line_start, callee.file)])
        self._active.add(key)
        try:
            eff = self._summarize(name, callee)
        except (ArithmeticError, KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
            eff = Effects(name, callee, [], [ir.Diagnostic("analysis-error", f"its effects could not be analysed "
                                                           f"({type(exc).__name__}: {exc})", callee.line_start,
                                                           callee.file)])
        finally:
            self._active.discard(key)
        self._memo[key] = eff
        return eff

    def _summarize(self, name: str, k: ir.Kernel) -> Effects:
        from .common_use import common_reads
        from .error_exits import without_error_exits
        from .module_reads import module_reads
        k = without_error_exits(k, self.resolve)  # its device function ends the program there
        blockers = list(self.program.impurities(k, module_reads=True))
        reads = common_reads(k, self.resolve)
        if reads:  # only read: not a blocker, the caller passes them (pass_common_reads)
            blocks = {b for b, _m in reads}
            read_at = {c.line for c in k.commons if c.name in blocks}
            blockers = [b for b in blockers if not (b.code == "common-block" and b.file == k.file
                                                    and b.line in read_at)]
        for s in ir.walk(k.body):
            if isinstance(s, ir.CallStmt) and self._is_intrinsic(k, s.name):
                blockers.append(ir.Diagnostic("intrinsic-call", f"calls the intrinsic subroutine {s.name} (no device "
                                              "equivalent)", s.line, k.file))
        for sub in dict.fromkeys(k.calls):
            inner = self.effects(k, sub)
            if inner.callee is not None and inner.blockers:
                first = inner.blockers[0]
                blockers.append(ir.Diagnostic(first.code, f"calls {sub} ({inner.where}), which {first.message}",
                                              first.line, first.file or inner.callee.file))
        mreads = module_reads(k, self.resolve)
        if not blockers:  # (when something else blocks, that is the reason given)
            blockers = mreads.problems
        blockers = _unique(blockers)
        dummies = []
        env = _params(k)
        referenced = {x.name for s in ir.walk(k.body) for e in _all_exprs(s) for x in ir.walk_expr(e)
                      if isinstance(x, (ir.Name, ir.ArrayRef))}
        for q, a in enumerate(k.args):
            d = DummyEffect(a.name, q, a.ftype, len(a.dims), a.intent in ("in", "inout"), a.intent in ("out", "inout"),
                            assigned=not a.dims and a.intent == "out")
            if a.name not in referenced:
                d.read = d.write = d.assigned = False
            elif not a.dims:
                d.span = (_lit(0), _lit(0))
            else:
                d.span, d.dim_bounds = self._span(k, a, env)
                d.fills = filled_elements(k, a, env)
                if not d.read:
                    from .fills import dummy_fill_boxes
                    d.fill_boxes = dummy_fill_boxes(k, a.name, env)
            dummies.append(d)
        for _b, m in reads or []:  # read-only extra dummies: what an extended call passes
            v = k.locals[m]
            d = DummyEffect(m, len(dummies), v.ftype, len(v.dims), True, False)
            d.span = (_lit(0), _lit(0)) if not v.dims else (_lit(0), _whole_span(v, env))
            dummies.append(d)
        for r in (mreads.reads if not blockers else []):  # then the module variables (module_reads.extra_arguments)
            v = r.var
            d = DummyEffect(r.name, len(dummies), v.ftype, len(v.dims), True, False)
            d.span = (_lit(0), _lit(0)) if not v.dims else (_lit(0), _whole_span(v, env))
            dummies.append(d)
            for lb, ub in r.bound_names():
                for b in (lb, ub):
                    dummies.append(DummyEffect(b, len(dummies), I4, 0, True, False, span=(_lit(0), _lit(0))))
        return Effects(name, k, dummies, blockers, common_reads=list(reads or []),
                       module_reads=list(mreads.reads) if not blockers else [])

    def _span(self, k: ir.Kernel, a: ir.Argument, env: dict) -> tuple[tuple[ir.Expr, Optional[ir.Expr]], list]:
        """(first, last) offsets from the dummy's first element, in ``k``'s arguments; and
        the per-dimension bounds they come from (None where a bound names a scalar dummy
        the callee writes: its value at the call is not the one the bound means)."""

        bounds = BoundsFinder(k, env, calls=self).bounds(a)
        written = {x.name for x in k.args if not x.dims and x.intent != "in"}
        dims = [b if b is not None and not ({x.name for e in b for x in ir.walk_expr(e)
                                             if isinstance(x, (ir.Name, ir.ArrayRef))} & written) else None
                for b in bounds]
        return self._offsets(a, env, bounds, written), dims

    @staticmethod
    def _offsets(a: ir.Argument, env: dict, bounds: list, written: set) -> tuple[ir.Expr, Optional[ir.Expr]]:
        lo: Optional[affine.Poly] = affine.const(0)
        hi: Optional[affine.Poly] = affine.const(0)
        stride: Optional[affine.Poly] = affine.const(1)
        last = len(a.dims) - 1
        for d, dim in enumerate(a.dims):
            L = affine.poly_of(dim.lower, env) if dim.lower is not None else affine.const(1)
            U = affine.poly_of(dim.upper, env) if dim.upper is not None else None
            b = bounds[d] if d < len(bounds) else None
            blo = affine.poly_of(b[0], env) if b is not None else None
            bhi = affine.poly_of(b[1], env) if b is not None else None
            if blo is None or bhi is None:  # not bounded by the subscripts: the declared extent
                blo, bhi = L, U
            if L is None or blo is None or stride is None:
                return _lit(0), None
            if lo is not None:
                lo = affine.add(lo, affine.mul(affine.add(blo, L, -1), stride))
            hi = None if (hi is None or bhi is None) else affine.add(hi, affine.mul(affine.add(bhi, L, -1), stride))
            if d < last:
                stride = None if U is None else affine.mul(stride, affine.add(affine.add(U, L, -1), affine.const(1)))
        if lo is None or affine.names(lo) & written or any(n.startswith("@") for n in affine.names(lo)):
            return _lit(0), None
        if hi is not None and (affine.names(hi) & written or any(n.startswith("@") for n in affine.names(hi))):
            hi = None
        return affine.to_expr(lo), (affine.to_expr(hi) if hi is not None else None)

    # ------------------------------------------------------------------ the caller's side
    def actual_ref(self, caller: ir.Kernel, name: str, args: list[ir.Expr], position: int,
                   facts: Optional[Facts] = None) -> Optional[ir.Expr]:
        """What a call of ``name`` with ``args`` touches of the caller's variable passed at
        ``position`` (a Name or an ArrayRef): the actual itself for a scalar, an ArrayRef
        whose subscripts are points and ``Slice(lo, hi)`` ranges (``hi`` None: to the end
        of the array), or the whole array (its Name). None when the callee never touches
        the dummy. ``facts``: what holds where the call runs (bounds the spans)."""
        actual = args[position]
        v = variable(caller, actual.name)
        if v is None or not v.dims:
            return actual
        eff = self.effects(caller, name)
        d = eff.dummy(position) if eff.callee is not None else None
        if eff.callee is not None and len(args) > len(eff.dummies):
            d = None
        if d is None:
            return tail_ref(v, actual)  # unknown callee: anything from the element on
        if not d.touched:
            return None
        if d.rank == 0:
            return actual
        if d.ftype.bytes != v.ftype.bytes:
            return ir.Name(v.name, ftype=v.ftype)  # reinterpreted storage: the whole array
        table = _scalar_actuals(caller, eff, args)
        if isinstance(actual, ir.ArrayRef) and any(isinstance(s, ir.Slice) for s in actual.subscripts) \
                and position < len(eff.callee.args):
            # a section: dimension by dimension where its shape is the dummy's, else all of it
            got = section_ref(v, actual, eff.callee.args[position], d.dim_bounds,
                              lambda e: _in_caller(e, table), _params(caller))
            return got if got is not None else ir.Name(v.name, ftype=v.ftype)
        lo, hi = d.span
        lo_c, hi_c = _in_caller(lo, table), (_in_caller(hi, table) if hi is not None else None)
        if lo_c is None:
            return ir.Name(v.name, ftype=v.ftype)
        return place(v, actual, lo_c, hi_c, _params(caller), facts or Facts())


    def fill_boxes(self, caller: ir.Kernel, name: str, args: list[ir.Expr], position: int) -> list:
        """The parts of the caller's array passed at ``position`` that a call of ``name``
        surely assigns (a dummy the callee writes and never reads), as boxes of polynomials
        in the caller's indices. Only where sequence association keeps the shape: the
        dummy has the array's rank, leading extents and element size, and the actual is the
        whole array or an element at the first position of every leading dimension (the
        last one then starts there). Empty when nothing is known."""
        actual = args[position]
        v = variable(caller, actual.name)
        eff = self.effects(caller, name)
        if v is None or not v.dims or eff.callee is None or len(args) > len(eff.dummies):
            return []
        d = eff.dummy(position)
        a = eff.callee.args[position] if position < len(eff.callee.args) else None
        if d is None or a is None or d.read or not d.fill_boxes or len(a.dims) != len(v.dims) \
                or d.ftype.bytes != v.ftype.bytes:
            return []
        cenv, kenv = _params(caller), _params(eff.callee)
        table = {n: affine.poly_of(e, cenv) for n, e in _scalar_actuals(caller, eff, args).items()}

        def mapped(p):
            for n in affine.names(p):
                if table.get(n) is None:
                    return None
                p = affine.substitute(p, n, table[n])
            return p

        lower = lambda dim, env: affine.poly_of(dim.lower, env) if dim.lower is not None else affine.const(1)  # noqa: E731
        for dd, cd in zip(a.dims[:-1], v.dims[:-1]):
            dlo, dhi = lower(dd, kenv), affine.poly_of(dd.upper, kenv) if dd.upper is not None else None
            dlo, dhi = (mapped(dlo) if dlo is not None else None), (mapped(dhi) if dhi is not None else None)
            if dlo is None or dhi is None or dlo != lower(cd, cenv) or dhi != affine.poly_of(cd.upper, cenv):
                return []
        last_lo = lower(a.dims[-1], kenv)
        last_lo = mapped(last_lo) if last_lo is not None else None
        if last_lo is None:
            return []
        if isinstance(actual, ir.Name):
            start = lower(v.dims[-1], cenv)
        elif isinstance(actual, ir.ArrayRef) and len(actual.subscripts) == len(v.dims) and all(
                affine.poly_of(x, cenv) == lower(cd, cenv) for x, cd in zip(actual.subscripts[:-1], v.dims[:-1])):
            start = affine.poly_of(actual.subscripts[-1], cenv)
        else:
            return []
        if start is None:
            return []
        shift = affine.add(start, last_lo, -1)
        out = []
        for box in d.fill_boxes:
            m = [(mapped(lo), mapped(hi)) for lo, hi in box]
            if any(lo is None or hi is None for lo, hi in m):
                continue
            m[-1] = (affine.add(m[-1][0], shift), affine.add(m[-1][1], shift))
            out.append(m)
        return out


def _scalar_actuals(caller: ir.Kernel, eff: Effects, args: list[ir.Expr]) -> dict[str, ir.Expr]:
    """The callee's scalar dummies as a call passes them, and the module scalars it reads
    as the call passes them (an extended call) or else as the caller names them: its own
    use of the same variable, or the bare name when the caller has nothing of that name
    (a value no statement of the caller changes)."""
    table = {}
    for q, x in enumerate(eff.callee.args):
        if not x.dims and q < len(args):
            table[x.name] = args[q]
    at = {d.name: d.position for d in eff.dummies[len(eff.callee.args):]}
    for r in eff.module_reads:
        q = at.get(r.name)
        if r.var.dims or r.name in table:
            continue
        if q is not None and q < len(args):
            table[r.name] = args[q]
            continue
        v = variable(caller, r.name) or caller.host_vars.get(r.name)
        if v is None or (v.module == r.module and not isinstance(v, ir.Argument) and r.name in caller.module_vars):
            table[r.name] = ir.Name(r.name, ftype=r.var.ftype)
    return table


def _all_exprs(s: ir.Stmt) -> list[ir.Expr]:
    out = list(ir.stmt_exprs(s))
    if isinstance(s, ir.Do):
        out.append(ir.Name(s.var))
    return out


def _unique(diags: list[ir.Diagnostic]) -> list[ir.Diagnostic]:
    out, seen = [], set()
    for d in diags:
        key = (d.code, d.message, d.line, d.file)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _in_caller(e: ir.Expr, table: dict[str, ir.Expr]) -> Optional[ir.Expr]:
    """A span bound in the caller's names: the callee's dummies replaced by the actual
    arguments; None when it depends on a dummy the call does not pass as a scalar."""

    names = {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}
    if names - set(table):
        return None
    return replace_names(e, {n: table[n] for n in names})


def tail_ref(v: ir.Variable, actual: ir.Expr) -> ir.Expr:
    """Everything from the element on to the end of the array (what a call to a routine
    the analysis cannot see may touch): the whole array for a whole-array actual."""
    if isinstance(actual, ir.Name) or not isinstance(actual, ir.ArrayRef) or \
            len(actual.subscripts) != len(v.dims) or any(isinstance(s, ir.Slice) for s in actual.subscripts):
        return ir.Name(v.name, ftype=v.ftype)
    subs: list[ir.Expr] = [ir.Slice(_lower(d), d.upper) for d in v.dims[:-1]]
    subs.append(ir.Slice(actual.subscripts[-1], v.dims[-1].upper))
    return ir.ArrayRef(v.name, subs, ftype=v.ftype)


def _lower(d: ir.Dim) -> ir.Expr:
    return d.lower if d.lower is not None else _lit(1)


def _floor_div(x: affine.Poly, s: affine.Poly, facts: Facts) -> Optional[affine.Poly]:
    """floor(x / s) as a constant when the facts pin it (0 <= x - c*s <= s - 1)."""
    if affine.is_const(x) and affine.is_const(s):
        return affine.const(affine.constant(x) // affine.constant(s)) if affine.constant(s) > 0 else None
    cands = [0]
    top = max((m for m in s if m != ()), key=len, default=None)
    if top is not None and x.get(top) and x[top] % s[top] == 0:
        c = x[top] // s[top]
        cands = [c, c - 1, c + 1, 0]
    for c in dict.fromkeys(cands):
        r = affine.add(x, affine.mul(affine.const(c), s), -1)
        if facts.nonneg(r) and facts.nonneg(affine.add(affine.add(s, affine.const(-1)), r, -1)):
            return affine.const(c)
    return None


def place(v: ir.Variable, actual: ir.Expr, lo: ir.Expr, hi: Optional[ir.Expr], env: dict, facts: Facts) -> ir.Expr:
    """The elements ``lo..hi`` (offsets in array element order) from the element ``actual``
    of the caller's array ``v`` as one reference with ranges (see the module docstring)."""
    whole = ir.Name(v.name, ftype=v.ftype)
    n = len(v.dims)
    if isinstance(actual, ir.Name):
        subs = [_lower(d) for d in v.dims]
    elif isinstance(actual, ir.ArrayRef) and len(actual.subscripts) == n \
            and not any(isinstance(s, ir.Slice) for s in actual.subscripts):
        subs = list(actual.subscripts)
    else:
        return whole  # an array section: copy-in/copy-out semantics, the whole array
    P = lambda e: affine.poly_of(e, env) if e is not None else None  # noqa: E731
    lo_p, hi_p = P(lo), P(hi)
    Ls = [P(_lower(d)) for d in v.dims]
    Us = [P(d.upper) for d in v.dims]
    exts = [affine.add(affine.add(u, l, -1), affine.const(1)) if u is not None and l is not None else None
            for l, u in zip(Ls, Us)]
    if lo_p is None:
        return whole
    if not facts.nonneg(lo_p):
        return whole
    if hi_p is None:
        return tail_ref(v, ir.ArrayRef(v.name, subs, ftype=v.ftype))
    # the call touches something only if hi >= lo; the caller's array then has elements
    f = facts.plus([lo_p, affine.add(hi_p, lo_p, -1)] + [affine.add(e, affine.const(-1)) for e in exts[:-1]
                                                        if e is not None])
    ss = [P(s) for s in subs]

    def plus(k: int, off: affine.Poly) -> ir.Expr:
        if ss[k] is not None:
            return affine.to_expr(affine.add(ss[k], off))
        return ir.BinOp("+", subs[k], affine.to_expr(off), ftype=I4)

    first = lambda m: [ir.Slice(_lower(v.dims[j]), v.dims[j].upper) for j in range(m)]  # noqa: E731
    if n == 1 or (ss[0] is not None and Us[0] is not None
                  and f.nonneg(affine.add(affine.add(Us[0], ss[0], -1), hi_p, -1))):
        return ir.ArrayRef(v.name, [ir.Slice(plus(0, lo_p), plus(0, hi_p))] + subs[1:], ftype=v.ftype)
    stride = affine.const(1)
    at_start = True
    for m in range(1, n):
        if exts[m - 1] is None:
            break
        stride = affine.mul(stride, exts[m - 1])
        at_start = at_start and ss[m - 1] is not None and Ls[m - 1] is not None and ss[m - 1] == Ls[m - 1]
        x = hi_p if at_start else affine.add(affine.add(stride, affine.const(-1)), hi_p)
        q = _floor_div(x, stride, f)
        if q is None:
            continue
        if m == n - 1 or (ss[m] is not None and Us[m] is not None
                          and f.nonneg(affine.add(Us[m], affine.add(ss[m], q), -1))):
            return ir.ArrayRef(v.name, first(m) + [ir.Slice(subs[m], plus(m, q))] + subs[m + 1:], ftype=v.ftype)
    return tail_ref(v, ir.ArrayRef(v.name, subs, ftype=v.ftype))


def same_common(caller: ir.Kernel, callee: ir.Kernel, block: str) -> str:
    """'' when ``caller`` declares COMMON ``block`` as ``callee`` does (the same members in
    the same order, each of the same type and shape), else why not."""
    def decl(k: ir.Kernel):
        names = [v for c in k.commons if c.name == block for v in c.variables]
        out = []
        for n in names:
            v = k.locals.get(n)
            if v is None:
                return None
            out.append((n, v.ftype, [(repr(d.lower), repr(d.upper)) for d in v.dims]))
        return out

    title = f"/{block}/" if block else "blank COMMON"
    mine, theirs = decl(caller), decl(callee)
    if not mine:
        return f"{caller.name} does not declare COMMON {title}"
    if mine != theirs:
        return f"{caller.name} declares COMMON {title} differently from {callee.name}"
    return ""


def load_for_port(program, path, name: str) -> tuple[ir.Kernel, ir.SourceFile]:
    """``program.load`` with the kernel's calls to routines that only read COMMON passing
    the members they read (:func:`pass_common_reads`): the kernel every stage of a port
    works on (translator, device functions, harness) sees the same calls."""
    from .callee_tests import callee_tests

    k, sf = program.load(path, name)
    if isinstance(k, ir.Kernel):
        calls = Calls(program)
        if k.calls:
            pass_common_reads(k, calls)
        k.accepts = error_exit_conditions(k, calls)
        k.callee_tests = callee_tests(k, calls.resolve) if k.calls else []
    return k, sf


def error_exit_conditions(k: ir.Kernel, calls: "Calls") -> list[tuple[ir.Expr, int, str]]:
    """When ``k`` or a routine it calls ends the program on an argument check
    (``error_exits.exit_conditions``), the check's condition in ``k``'s names: what its
    inputs must not meet (a callee's, with the call's actual arguments for its dummies;
    only checks on scalar dummies)."""
    from .common_use import call_sites
    from .error_exits import exit_conditions
    from .render import expr_str

    memo: dict = {}
    out = [(c, line, f"{k.name} ends the program when {expr_str(c)}")
           for c, line in exit_conditions(k, calls.resolve, memo)]
    checks: dict[int, list] = {}  # per callee, however often it is called
    for name, args, at in call_sites(k.body):
        callee = calls.resolve(k, name)
        if callee is None:
            continue
        if id(callee) not in checks:
            checks[id(callee)] = exit_conditions(callee, calls.resolve, memo)
        table = {a.name: args[q] for q, a in enumerate(callee.args) if q < len(args) and not a.dims}
        for c, line in checks[id(callee)]:
            names = {x.name for x in ir.walk_expr(c) if isinstance(x, (ir.Name, ir.ArrayRef))}
            if names and names <= set(table):
                out.append((replace_names(c, table), at,
                            f"{name} ({Path(callee.file).name}:{line}) ends the program when {expr_str(c)}"))
    return out


def pass_common_reads(kernel: ir.Kernel, calls: "Calls") -> None:
    """Calls of ``kernel`` (a copy: it is changed) to routines that only read COMMON
    members pass the kernel's own members of the same blocks as extra actual arguments,
    matching their device functions (``common_use.promoted``). Only where the kernel declares
    the blocks the same way (the dependence analysis keeps other such loops serial)."""
    def extend(name: str, args: list) -> None:
        eff = calls.effects(kernel, name)
        if eff.callee is None or not eff.common_reads or len(args) != len(eff.dummies) - len(eff.common_reads):
            return
        if any(same_common(kernel, eff.callee, b) for b in {b for b, _m in eff.common_reads}):
            return
        for _b, m in eff.common_reads:
            v = kernel.locals[m]
            args.append(ir.Name(m, ftype=v.ftype))

    for s in ir.walk(kernel.body):
        if isinstance(s, ir.CallStmt):
            extend(s.name, s.args)
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    extend(x.name, x.args)


def filled_elements(k: ir.Kernel, a: ir.Argument, env: dict) -> int:
    """The element count of array dummy ``a`` when ``k`` assigns all of it before reading
    any (its shape constant), else 0."""
    from .fills import constant_bounds, element_count
    from .privatize import fills_before_reads
    bounds = constant_bounds(a.dims, env)
    if bounds is None or not fills_before_reads(k.body, a.name, bounds, env):
        return 0
    return element_count(bounds)
