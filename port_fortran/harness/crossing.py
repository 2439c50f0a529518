"""The boundary-crossing correctness case: sizes at which every parallel loop of the kernel
runs past the largest block a port may cut it into, and not a whole number of them.

The small cases of the spec (1, 7, 33 elements per dimension) fit inside one MDRange tile,
one GPU block, one team: a port that mishandles the last partial tile, or skips every index
above 40, passes them. This case gives each parallel dimension ``2 x tile + 3`` iterations,
``tile`` the largest MDRange tile extent any variant or Kokkos itself may use there, and more
than a GPU block (``1024 + 3``) where a GPU may cut the dimension into thread blocks (1-D
ranges, the fastest MDRange dimension, a team's inner range); those extents live in
:mod:`port_fortran.translate.blocks`. All within a memory and work budget.

Pure: reads the IR (array syntax lowered to loops as the translator does), the spec and
the layout rules of :mod:`.inputs`; no file, no process.

How the sizes are found: each parallel dimension's trip count is evaluated numerically at a
size set (the spec's largest correctness set to start with); the size arguments a trip count
grows with are the ones raised, each to the smallest value that gives the wanted count.
A raise that makes a subscript run past a declared array bound further than the spec's own
sizes do is not taken (a halo ``depth`` wider than the arrays' halo makes inputs the
original itself overruns). When the case would exceed the budget (:data:`CROSS_BYTES` of
array data, :data:`CROSS_FLOPS` flops, :data:`CROSS_ITERATIONS` loop iterations,
:data:`CROSS_LAUNCHES` kernel launches: a parallel loop inside serial ones is launched each
time), the size arguments that bound no parallel loop are taken from a smaller correctness
set first, then the largest wanted counts step down (halving the block: ``b/2 + 3``, ...),
and every dimension left short is named in :attr:`CrossCase.notes`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Optional

from ..fortran import ir
from ..translate.blocks import GPU_BLOCK, blocks_at, fast_order, team_blocks
from . import ir_facts
from .spec import Spec, follow, following_sizes

CROSS_BYTES = 32 * 2**20  # array data of the case at most
CROSS_FLOPS = 1e8  # estimated floating-point work of one call at most (an O(n^3) nest: ~0.1 s)
CROSS_ITERATIONS = 1e8  # loop iterations of one call at most (bounds taken over the outer loops)
CROSS_LAUNCHES = 1e4  # parallel kernels one call launches at most (a parallel loop inside serial ones)
BUDGET = (f"{CROSS_BYTES >> 20} MB of data, {CROSS_FLOPS:.0e} flops, {CROSS_ITERATIONS:.0e} loop iterations, "
          f"{CROSS_LAUNCHES:.0e} kernel launches")
MAX_SIZE = 1 << 24
MAX_BAND = 6  # MDRangePolicy's largest rank
# reasons a loop is not proven parallel that a port removes (induction variables computed
# from the index, pure calls, a max/min-location reduction, atomics for scattered updates,
# a parallel version where a condition such as a non-zero stride holds): such a loop may
# still run in parallel in a port
PARALLEL_AFTER_ALL = {"induction-variable", "call-in-loop", "loc-reduction", "scattered-update",
                      "conditional-independence"}


@dataclass
class ParallelDim:
    """One dimension of a parallel loop nest as a port runs it."""

    do: ir.Do
    position: int  # 0 = fastest (the contiguous index) within its band
    rank: int  # loops in the band
    kind: str  # 'range' (1-D policy) | 'tile' (MDRange) | 'team' (an inner reduction over a team)
    blocks: tuple[int, ...]  # block extents a port may use here, ascending

    @property
    def block(self) -> int:
        return self.blocks[-1]

    @property
    def wanted(self) -> int:
        """Iterations that cross every block here and are a multiple of none: two tiles and
        3 more, or past one GPU block (no GPU block splits a 1-D range in a pattern two
        blocks would show and one does not)."""
        tiles = [b for b in self.blocks if b != GPU_BLOCK]
        w = 2 * max(tiles) + 3 if tiles else 0
        return max(w, GPU_BLOCK + 3) if GPU_BLOCK in self.blocks else w

    @property
    def avoid(self) -> set[int]:
        """Blocks a trip count here should not be a multiple of: the largest tile, and a
        GPU block (smaller tiles divide counts the small cases leave remainders of)."""
        tiles = [b for b in self.blocks if b != GPU_BLOCK]
        return ({max(tiles)} if tiles else set()) | ({GPU_BLOCK} & set(self.blocks))

    def why(self) -> str:
        return f"past a GPU block of {GPU_BLOCK}" if self.wanted == GPU_BLOCK + 3 else f"2 x tile {self.block} + 3"

    def where(self) -> str:
        return f"line {self.do.line} do {self.do.var}"


@dataclass
class CrossCase:
    sizes: dict[str, int]
    dims: list[tuple[ParallelDim, Optional[int]]]  # each dimension with its trip count at ``sizes``
    notes: list[str] = field(default_factory=list)  # dimensions left short or not reachable, and why

    def describe(self) -> str:
        """One line: the sizes and what they cross (for verdicts and the CLI)."""
        crossed = [f"{d.where()}: {t}" + (f" > {d.block}" if t is not None and t > d.block else "")
                   for d, t in self.dims if t is not None]
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        return f"{sizes} ({'; '.join(crossed)})" if crossed else sizes


# --------------------------------------------------------------------------- the loops


def parallel_body(kernel: ir.Kernel, source: Optional[ir.SourceFile] = None) -> tuple[list[ir.Stmt], list[str]]:
    """The kernel's statements with array syntax lowered to loops as the translator lowers
    them (each such loop is a parallel dimension of a port); the statements as they are,
    with a note, when the lowering refuses."""
    from ..translate.lower import lower_arrays
    from ..translate.symbols import Refusal, build_symbols

    try:
        return lower_arrays(copy.deepcopy(kernel.body), build_symbols(kernel, source)), []
    except Refusal as exc:
        return kernel.body, [f"array syntax not lowered ({exc}): its loops get no boundary-crossing size"]


def may_run_parallel(do: ir.Do) -> bool:
    """Whether a port may run ``do``'s iterations in parallel."""
    info = do.info
    return info.parallel or bool(info.reasons) and all(d.code in PARALLEL_AFTER_ALL for d in info.reasons)


def parallel_dims(body: list[ir.Stmt]) -> list[ParallelDim]:
    """Every parallel dimension: each outermost parallel loop with the parallel loops
    tightly nested in it (one MDRange band, ordered fastest first like the translator's),
    and each reduction loop inside a band's body (a TeamPolicy variant runs it over a
    team's threads). Loops nested deeper run inside one iteration: not a dimension."""
    out: list[ParallelDim] = []

    def visit(stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            if isinstance(s, ir.Do) and may_run_parallel(s):
                band = _band(s)
                rank = len(band)
                for pos, d in enumerate(fast_order(band)):
                    out.append(ParallelDim(d, pos, rank, "tile" if rank > 1 else "range",
                                           tuple(sorted(blocks_at(rank, pos)))))
                for x in ir.walk(band[-1].body):
                    if isinstance(x, ir.Do) and x.info.parallel and x.info.reductions:
                        out.append(ParallelDim(x, 0, 1, "team", tuple(sorted(team_blocks()))))
            else:
                visit(ir.children(s))

    visit(body)
    return out


def _band(do: ir.Do) -> list[ir.Do]:
    band = [do]
    cur = do
    while len(band) < MAX_BAND:
        body = [s for s in cur.body if not isinstance(s, ir.Continue)]
        if len(body) != 1 or not isinstance(body[0], ir.Do) or not may_run_parallel(body[0]):
            break
        inner = body[0]
        if (ir_facts.names_in(inner.start) | ir_facts.names_in(inner.end)) & {d.var for d in band}:
            break
        band.append(inner)
        cur = inner
    return band


def trip_count(do: ir.Do, env: dict[str, int]) -> Optional[int]:
    """Iterations of ``do`` with the scalars in ``env``; None when not computable."""
    try:
        lo, hi = ir.evaluate(do.start, env), ir.evaluate(do.end, env)
        st = ir.evaluate(do.step, env) if do.step is not None else 1
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi, st)) or st == 0:
        return None
    return max(0, (hi - lo + st) // st)


def _assigned_scalars(body: list[ir.Stmt], env: dict[str, int]) -> dict[str, int]:
    """``env`` plus the integer scalars the routine sets outside its loops, in order
    (``m = mod(n, 5)``, ``mp1 = m + 1``): enough to count the iterations of the loops
    that follow. Arguments are never overwritten."""
    env = dict(env)
    args = set(env)

    def visit(stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name not in args:
                try:
                    v = ir.evaluate(s.value, env)
                except (KeyError, ValueError, TypeError, ZeroDivisionError):
                    continue
                if isinstance(v, int) and not isinstance(v, bool):
                    env[s.target.name] = v
            elif not isinstance(s, (ir.Do, ir.DoWhile)):
                visit(ir.children(s))

    visit(body)
    return env


@dataclass
class Cost:
    nbytes: int  # array data
    flops: Optional[int]  # floating-point operations (None: not countable)
    iterations: Optional[int]  # loop iterations, inner trip counts bounded over the outer loops
    launches: Optional[int]  # parallel loops started (a parallel loop inside serial ones, each time)
    overshoot: dict  # (array, dim) -> how far the largest subscript passes the declared upper bound


class _Unknown(Exception):
    pass


def _work(body: list[ir.Stmt], ranges) -> Optional[tuple[int, int]]:
    """(loop iterations, parallel-kernel launches) of one call, each inner trip count
    bounded by interval evaluation over the enclosing loops (a triangular nest counts as
    its rectangle), the costliest arm of each IF / SELECT CASE; None when a trip count is
    not bounded."""

    def rec(stmts: list[ir.Stmt], lv: dict, in_par: bool) -> tuple[int, int]:
        iters = launches = 0
        for s in stmts:
            if isinstance(s, ir.Do):
                r, trips = ranges.loop_range(s, lv)
                if r is None:
                    raise _Unknown
                par = may_run_parallel(s)
                i, n = rec(s.body, {**lv, s.var: r}, in_par or par)
                iters += trips * (1 + i)
                launches += 1 if par and not in_par else trips * n
            elif isinstance(s, ir.DoWhile):
                raise _Unknown
            elif isinstance(s, (ir.If, ir.SelectCase)):
                arms = ([b for _, b in s.branches] + [s.else_body]) if isinstance(s, ir.If) else [c.body for c in s.cases]
                costs = [rec(arm, lv, in_par) for arm in arms] or [(0, 0)]
                iters += max(c[0] for c in costs)
                launches += max(c[1] for c in costs)
            else:
                i, n = rec(ir.children(s), lv, in_par)
                iters, launches = iters + i, launches + n
        return iters, launches

    try:
        return rec(body, {}, False)
    except _Unknown:
        return None


# --------------------------------------------------------------------------- the sizes


class _Model:
    """Trip counts and cost of a size set (the spec's layout rules, cached)."""

    def __init__(self, kernel: ir.Kernel, spec: Spec, body: list[ir.Stmt]):
        self.kernel, self.spec, self.body = kernel, spec, body
        self.names = spec.sizes()
        # a pointer's count held in a size argument follows its rows, the room of segments
        # their items (as inference sets them)
        self.nnz = following_sizes(spec.args)
        self._env: dict[tuple, Optional[dict]] = {}
        self._cost: dict[tuple, Optional[Cost]] = {}

    def complete(self, sizes: dict[str, int]) -> dict[str, int]:
        out = dict(sizes)
        for n, rule in self.nnz.items():
            try:
                out[n] = max(out.get(n, 0), follow(rule, out))
            except ValueError:
                pass
        return out

    def env(self, sizes: dict[str, int]) -> Optional[dict[str, int]]:
        key = tuple(sorted(sizes.items()))
        if key not in self._env:
            from .inputs import scalar_env
            try:
                _, ints = scalar_env(self.kernel, self.spec, sizes)
                self._env[key] = _assigned_scalars(self.body, ints)
            except (ValueError, KeyError):
                self._env[key] = None
        return self._env[key]

    def trip(self, d: ParallelDim, sizes: dict[str, int]) -> Optional[int]:
        env = self.env(sizes)
        return trip_count(d.do, env) if env is not None else None

    def drivers(self, d: ParallelDim, sizes: dict[str, int]) -> list[str]:
        """The size arguments the trip count of ``d`` grows with."""
        t0 = self.trip(d, sizes)
        if t0 is None:
            return []
        out = []
        for n in self.names:
            if n in self.nnz:
                continue
            t = self.trip(d, self.complete({**sizes, n: 2 * sizes[n] + 5}))
            if t is not None and t > t0:
                out.append(n)
        return out

    def cost(self, sizes: dict[str, int]) -> Optional["Cost"]:
        """What one call at ``sizes`` costs, or None when the spec cannot lay it out."""
        key = tuple(sorted(sizes.items()))
        if key in self._cost:
            return self._cost[key]
        from .extents import Ranges
        from .inputs import layout
        try:
            lay = layout(self.kernel, self.spec, sizes, rng=None)
        except (ValueError, KeyError):
            self._cost[key] = None
            return None
        nbytes = sum(x.nbytes for x in lay.arrays.values())
        ints = {k: v for k, v in lay.scalars.items() if isinstance(v, int) and not isinstance(v, bool)}
        values = dict(lay.index_ranges)
        values.update({n: (1, int(p[-1])) for n, p in lay.pointer_values.items()})
        ranges = Ranges(self.kernel, ints, values)
        work = _work(self.body, ranges)
        over = {}
        for a in self.kernel.args:  # subscripts past a declared (not 'auto') upper bound
            spec_dims = self.spec.args[a.name].dims or []
            if not a.rank or a.name not in lay.arrays:
                continue
            tops = ranges.max_subscripts(a.name, a.rank)
            for k, top in enumerate(tops):
                if k < len(spec_dims) and not str(spec_dims[k]).endswith("auto") and top is not None:
                    over[(a.name, k)] = max(0, top - lay.arrays[a.name].ubound[k])
        c = Cost(nbytes, ir_facts.count_flops(self.kernel, ints, branches="max"),
                 work[0] if work else None, work[1] if work else None, over)
        self._cost[key] = c
        return c

    def fits(self, sizes: dict[str, int], base: Optional[dict[str, int]] = None) -> bool:
        """Within the budget (launches: or no more than ``base`` launches already)."""
        c = self.cost(sizes)
        if c is None:
            return False
        b = self.cost(base) if base is not None else None
        launch_cap = max(CROSS_LAUNCHES, (b.launches or 0) if b is not None else 0)
        return (c.nbytes <= CROSS_BYTES and (c.flops is None or c.flops <= CROSS_FLOPS)
                and (c.iterations is None or c.iterations <= CROSS_ITERATIONS)
                and (c.launches is None or c.launches <= launch_cap))

    def in_bounds(self, sizes: dict[str, int], base: dict[str, int]) -> bool:
        """No subscript runs further past a declared array bound than at ``base`` (a size
        that only widens a loop, such as a halo ``depth`` beyond the arrays' halo, makes
        inputs the original itself would overrun)."""
        c, b = self.cost(sizes), self.cost(base)
        if c is None or b is None:
            return c is not None
        return all(v <= b.overshoot.get(k, 0) for k, v in c.overshoot.items())


def _raise(m: _Model, d: ParallelDim, sizes: dict[str, int], want: int) -> Optional[dict[str, int]]:
    """``sizes`` with one size argument raised to the smallest value giving ``d`` at least
    ``want`` iterations (the argument needing the smallest raise), or all of its drivers
    together when no single one suffices; None when none does."""
    drivers = m.drivers(d, sizes)
    best: Optional[dict[str, int]] = None
    for group in [[n] for n in drivers] + ([drivers] if len(drivers) > 1 else []):
        def at(x: int) -> dict[str, int]:
            return m.complete({**sizes, **{n: max(sizes[n], x) for n in group}})

        lo = max(sizes[n] for n in group)
        hi = max(lo, 1)
        while (m.trip(d, at(hi)) or 0) < want:
            if hi >= MAX_SIZE:
                break
            lo, hi = hi, min(MAX_SIZE, hi * 2)
        if (m.trip(d, at(hi)) or 0) < want:
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (m.trip(d, at(mid)) or 0) >= want:
                hi = mid
            else:
                lo = mid
        cand = at(hi)
        if not m.in_bounds(cand, sizes):
            continue
        if best is None or sum(cand.values()) < sum(best.values()):
            best = cand
    return best


def _solve(m: _Model, dims: list[ParallelDim], base: dict[str, int], wants: list[int]) -> dict[str, int]:
    sizes = m.complete(base)
    for _ in range(2 * len(dims) + 2):  # raises only grow trip counts: a few rounds settle
        changed = False
        for d, w in zip(dims, wants):
            t = m.trip(d, sizes)
            if t is None or t >= w:
                continue
            new = _raise(m, d, sizes, w)
            if new is not None and new != sizes:
                sizes, changed = new, True
        if not changed:
            break
    # a whole number of blocks hides a mishandled remainder: step past it where a few more
    # iterations of one driver do it for every dimension (else leave it: the small cases
    # and the other dimensions still leave remainders)
    def multiples(sz: dict[str, int]) -> list[ParallelDim]:
        return [d for d in dims if (t := m.trip(d, sz)) and t > 1 and any(t % b == 0 for b in d.avoid)]

    bad = multiples(sizes)
    if bad:
        for n in m.drivers(bad[0], sizes):
            cand = next((c for c in (m.complete({**sizes, n: sizes[n] + k}) for k in range(1, 9))
                         if not multiples(c) and m.in_bounds(c, sizes)), None)
            if cand is not None:
                sizes = cand
                break
    return sizes


def _ladder(wanted: int, floor: int) -> list[int]:
    """Wanted trip counts from the best down to ``floor``, the block halved at each step
    (1027, 515, 259, ...): still odd, still past the smaller blocks."""
    out = [wanted]
    while out[-1] > 5:
        out.append((out[-1] - 3) // 2 + 3)
    return [x for x in out if x > floor] or [out[0]]


def cross_case(kernel: ir.Kernel, spec: Spec, source: Optional[ir.SourceFile] = None) -> Optional[CrossCase]:
    """The boundary-crossing size set for ``kernel``, or None when it has no parallel loop
    whose trip count a size argument sets (then there is nothing to cross)."""
    names = spec.sizes()
    if not names or not spec.correctness:
        return None
    body, notes = parallel_body(kernel, source)
    dims = parallel_dims(body)
    if not dims:
        return None
    m = _Model(kernel, spec, body)
    sets = [dict(c) for c in spec.correctness if set(names) <= set(c)]
    if not sets:
        return None
    base = max(sets, key=lambda c: (sum(c.values()), spec.correctness.index(c)))
    reach = [d for d in dims if m.drivers(d, m.complete(base))]
    for d in dims:
        if d not in reach:
            why = ("its trip count is not computable from the scalar arguments"
                   if m.trip(d, m.complete(base)) is None else "no size argument sets its trip count")
            notes.append(f"{d.where()}: not crossed ({why})")
    if not reach:
        return CrossCase(m.complete(base), [], notes) if notes else None
    wants = [d.wanted for d in reach]
    base0 = m.complete(base)
    sizes = _solve(m, reach, base, wants)
    if not m.fits(sizes, base0):
        # the sizes that bound no parallel loop first: from the smallest correctness set
        driving = {n for d in reach for n in m.drivers(d, m.complete(base))}
        small = min((c for c in sets if all(v >= 2 for v in c.values())), default=None,
                    key=lambda c: sum(c.values()))
        if small is not None:
            base = {n: (base[n] if n in driving else small[n]) for n in base}
            sizes = _solve(m, reach, base, wants)
        ladders = [_ladder(d.wanted, m.trip(d, m.complete(base)) or 0) for d in reach]
        steps = [0] * len(reach)
        while not m.fits(sizes, base0):
            movable = [i for i in range(len(reach)) if steps[i] + 1 < len(ladders[i])]
            if not movable:
                notes.append(f"no boundary-crossing case within {BUDGET}: the correctness sizes alone are checked")
                return CrossCase(m.complete(base), [], notes)
            i = max(movable, key=lambda k: (ladders[k][steps[k]], k))
            steps[i] += 1
            wants = [ladders[k][steps[k]] for k in range(len(reach))]
            sizes = _solve(m, reach, base, wants)
    got = [(d, m.trip(d, sizes)) for d in reach]
    for d, t in got:
        if t is not None and t < d.wanted:
            notes.append(f"{d.where()}: {t} iterations, fewer than the {d.wanted} wanted ({d.why()}): "
                         f"the budget ({BUDGET}) or the arrays' declared bounds stop it there")
    return CrossCase(sizes, got, notes)
