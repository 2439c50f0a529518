"""Dataflow over a routine's control flow: the one place that answers "is this value read
later" (liveness), "which reads happen before any write" (exposed reads) and "which
assignments can reach this point" (reaching definitions).

Every later stage asks these questions here: the dependence analysis (last values,
privatisable scalars), the planner (what a kernel copies in and out), the emitter.

The control-flow graph follows the Fortran semantics of every statement the IR models,
GOTO included: a labelled jump goes to the statement carrying the label wherever it is;
arithmetic and computed GOTOs branch to each of their labels; EXIT/CYCLE go to the exit
and the increment of their loop (by construct name when given); a DO may run zero times;
RETURN leaves the routine (the names live at its end are read there), STOP ends the
program (nothing is read after it); an ENTRY statement is a second start (values there may
come from outside). Conservative where the IR cannot see: a CALL or a user
function reads every global name (COMMON, module and SAVE variables) and the names it is
passed; an ``Unsupported`` statement reads every name, unless the front end listed what it
reads (I/O statements: the names they mention; their ERR=/END=/EOR= labels are jumps). A call never
*kills* a value (it may leave it alone), so it never makes a value dead -- except a scalar
variable passed to a dummy the callee surely assigns before reading it (``outs``: from the
interprocedural effects, ``effects.Calls``): the CALL assigns it and does not read it.

Pure: builds a graph from a statement list, computes fixed points with bit sets.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Iterable, Optional

from . import ir
from .rewrite import replace_names

ALL = "*"  # in a node's uses: every name (an unsupported statement may read anything)


@dataclass
class Node:
    """One point of the flow graph. ``stmt`` is the statement it evaluates (None for the
    routine's entry/exit and for join points); ``role`` says which part of it."""

    id: int
    role: str  # entry | exit | stop | stmt | cond | do-head | do-incr | join
    stmt: Optional[ir.Stmt] = None
    uses: frozenset = frozenset()
    defs: frozenset = frozenset()  # certain (killing) definitions
    succ: list[int] = field(default_factory=list)


def _names(e: Optional[ir.Expr]) -> set[str]:
    if e is None:
        return set()
    out = set()
    for x in ir.walk_expr(e):
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            out.add(x.name)
    return out


def _calls_user_function(exprs: Iterable[ir.Expr]) -> bool:
    return any(isinstance(x, ir.FuncCall) and not x.intrinsic for e in exprs if e is not None
               for x in ir.walk_expr(e))


def stmt_uses_defs(s: ir.Stmt, globals_: frozenset = frozenset(),
                   outs: Optional[dict] = None) -> tuple[set[str], set[str]]:
    """(names the statement itself may read, names it certainly assigns) — its own
    expressions only, not those of nested statements. Array element writes assign nothing
    (the rest of the array keeps its value); a whole-array assignment assigns the array.
    ``outs``: called name -> positions of scalar dummies the callee surely assigns first."""
    if isinstance(s, ir.Assign):
        uses = _names(s.value)
        defs: set[str] = set()
        if isinstance(s.target, ir.ArrayRef):
            for sub in s.target.subscripts:
                uses |= _names(sub)
        else:
            defs.add(s.target.name)
        if _calls_user_function([s.value]):
            uses |= globals_
        return uses, defs
    if isinstance(s, ir.CallStmt):
        uses = set(globals_)
        defs = set()
        assigned = (outs or {}).get(s.name, ())
        for q, a in enumerate(s.args):
            if q in assigned and isinstance(a, ir.Name):
                defs.add(a.name)
            else:
                uses |= _names(a)
        return uses, defs - uses
    if isinstance(s, ir.Unsupported):
        # what the front end could tell (I/O statements: the names they mention); else anything
        return ({ALL} if s.reads is None else set(s.reads)), set()
    if isinstance(s, ir.Return):
        return set(), set()
    exprs = ir.stmt_exprs(s)
    uses = set()
    for e in exprs:
        uses |= _names(e)
    if _calls_user_function(exprs):
        uses |= globals_
    return uses, set()


class FlowGraph:
    """The control-flow graph of a statement list with liveness and reaching definitions.

    ``live_at_end``: names read after the list completes (a routine's outputs: arguments,
    COMMON and module variables, the function result). ``globals_``: names a call may read
    (COMMON, module, SAVE variables); the arguments of the routine are passed explicitly
    to calls, so they need not be listed."""

    def __init__(self, body: list[ir.Stmt], live_at_end: Iterable[str] = (), globals_: Iterable[str] = (),
                 outs: Optional[dict] = None, consts: Optional[dict] = None):
        self.nodes: list[Node] = []
        # named constants: an IF whose condition they decide has one way out (a dead branch
        # of `if (data_spec == DATA_SPEC_COLLISION) call collision(...)` reads nothing)
        self.consts = consts or {}
        self.globals_ = frozenset(globals_)
        self.outs = outs or {}
        self.live_at_end = frozenset(live_at_end)
        self._first: dict[int, int] = {}  # id(stmt) -> node the statement starts at
        self._after: dict[int, int] = {}  # id(stmt) -> node reached when the statement completes
        self._labels: dict[int, ir.Stmt] = {}
        self._gotos: list[tuple[Node, list[int]]] = []
        self.entry = self._node("entry")
        self.exit = self._node("exit", uses=self.live_at_end)
        self.stop = self._node("stop")
        for s in ir.walk(body):
            if s.label is not None:
                self._labels.setdefault(s.label, s)
        first = self._block(body, self.exit.id, [])
        self.entry.succ.append(first)
        for n in list(self.nodes):  # ENTRY statements: the routine can also start there
            if isinstance(n.stmt, ir.Unsupported) and n.stmt.construct == "entry":
                self.entry.succ.append(n.id)
        for node, labels in self._gotos:
            for lab in labels:
                target = self._labels.get(lab)
                # a jump to a label outside the list leaves it (the caller's code continues)
                node.succ.append(self._first[id(target)] if target is not None else self.exit.id)
        self._live: Optional[list[int]] = None
        self._bits: dict[str, int] = {}

    # ------------------------------------------------------------------ construction
    def _node(self, role: str, stmt: Optional[ir.Stmt] = None, uses=(), defs=()) -> Node:
        n = Node(len(self.nodes), role, stmt, frozenset(uses), frozenset(defs))
        self.nodes.append(n)
        return n

    def _constant(self, cond: ir.Expr) -> Optional[bool]:
        """The condition's value when named constants alone decide it, else None."""
        if not self.consts:
            return None
        try:
            v = ir.evaluate(cond, self.consts)
        except (KeyError, ValueError, TypeError, ZeroDivisionError, AttributeError):
            return None
        return v if isinstance(v, bool) else None

    def _block(self, stmts: list[ir.Stmt], nxt: int, loops: list) -> int:
        """Nodes for ``stmts`` flowing to node ``nxt`` at the end; returns the first node."""
        for s in reversed(stmts):
            nxt = self._stmt(s, nxt, loops)
        return nxt

    def _stmt(self, s: ir.Stmt, nxt: int, loops: list) -> int:
        """Nodes of one statement whose successor is ``nxt``; returns its first node.
        ``loops`` holds (construct name, loop statement, exit node, continue node)."""
        self._after[id(s)] = nxt
        if isinstance(s, ir.Do):
            uses = set()
            for e in (s.start, s.end, s.step):
                uses |= _names(e)
            head = self._node("do-head", s, uses, {s.var})
            incr = self._node("do-incr", s, {s.var} | _names(s.step), {s.var})
            body = self._block(s.body, incr.id, loops + [(s.construct_name, s, nxt, incr.id)])
            head.succ += [body, nxt]  # zero trips possible
            incr.succ += [body, nxt]
            first = head.id
        elif isinstance(s, ir.DoWhile):
            head = self._node("cond", s, _names(s.cond) | (self.globals_ if _calls_user_function([s.cond]) else set()))
            body = self._block(s.body, head.id, loops + [(s.construct_name, s, nxt, head.id)])
            head.succ += [body, nxt]
            first = head.id
        elif isinstance(s, ir.If):
            other = self._block(s.else_body, nxt, loops) if s.else_body else nxt
            for cond, body in reversed(s.branches):
                c = self._node("cond", s, _names(cond) | (self.globals_ if _calls_user_function([cond]) else set()))
                known = self._constant(cond)
                taken = self._block(body, nxt, loops)
                c.succ += [taken] if known is True else [other] if known is False else [taken, other]
                other = c.id
            first = other
        elif isinstance(s, ir.SelectCase):
            uses = _names(s.expr)
            for c in s.cases:
                for v in c.values:
                    uses |= _names(v)
            head = self._node("cond", s, uses)
            for c in s.cases:
                head.succ.append(self._block(c.body, nxt, loops))
            if not any(not c.values for c in s.cases):
                head.succ.append(nxt)
            first = head.id
        elif isinstance(s, ir.Where):
            head = self._node("cond", s, _names(s.mask))
            rest = self._block(s.elsewhere, nxt, loops)
            head.succ.append(self._block(s.body, rest, loops))
            first = head.id
        else:
            uses, defs = stmt_uses_defs(s, self.globals_, self.outs)
            n = self._node("stmt", s, uses, defs)
            first = n.id
            if isinstance(s, ir.Goto):
                self._gotos.append((n, [s.target]))
            elif isinstance(s, ir.ComputedGoto):
                self._gotos.append((n, list(s.targets)))
                n.succ.append(nxt)
            elif isinstance(s, ir.ArithmeticIf):
                self._gotos.append((n, list(dict.fromkeys(s.labels))))
            elif isinstance(s, ir.Unsupported) and s.targets:  # ERR=, END=, EOR= of an I/O statement
                self._gotos.append((n, list(dict.fromkeys(s.targets))))
                n.succ.append(nxt)
            elif isinstance(s, (ir.Exit, ir.Cycle)):
                loop = self._loop(loops, s.construct_name)
                if loop is None:  # not inside a loop of this list: leaves it
                    n.succ.append(self.exit.id)
                else:
                    n.succ.append(loop[2] if isinstance(s, ir.Exit) else loop[3])
            elif isinstance(s, ir.Return):
                n.succ.append(self.exit.id)
            elif isinstance(s, ir.Stop):
                n.succ.append(self.stop.id)
            else:
                n.succ.append(nxt)
        self._first[id(s)] = first
        return first

    @staticmethod
    def _loop(loops: list, name: Optional[str]):
        for lp in reversed(loops):
            if name is None or lp[0] == name:
                return lp
        return None

    # ------------------------------------------------------------------ liveness
    def _bit(self, name: str) -> int:
        b = self._bits.get(name)
        if b is None:
            b = self._bits[name] = 1 << len(self._bits)
        return b

    def _mask(self, names: Iterable[str]) -> int:
        m = 0
        for n in names:
            m |= self._bit(n)
        return m

    def _solve_liveness(self) -> list[int]:
        for n in self.nodes:  # every name gets a bit first, so ALL can be a full mask
            for x in n.uses | n.defs:
                if x != ALL:
                    self._bit(x)
        full = (1 << len(self._bits)) - 1
        use = [full if ALL in n.uses else self._mask(n.uses) for n in self.nodes]
        kill = [self._mask(n.defs) for n in self.nodes]
        preds: list[list[int]] = [[] for _ in self.nodes]
        for n in self.nodes:
            for s in n.succ:
                preds[s].append(n.id)
        live_in = [0] * len(self.nodes)
        work = list(range(len(self.nodes)))
        queued = [True] * len(self.nodes)
        while work:
            i = work.pop()
            queued[i] = False
            out = 0
            for s in self.nodes[i].succ:
                out |= live_in[s]
            new = use[i] | (out & ~kill[i])
            if new != live_in[i]:
                live_in[i] = new
                for p in preds[i]:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        return live_in

    def _names_of(self, mask: int) -> frozenset:
        return frozenset(n for n, b in self._bits.items() if mask & b)

    def _live_in(self, node: int) -> int:
        if self._live is None:
            self._live = self._solve_liveness()
        return self._live[node]

    def live_before(self, s: ir.Stmt) -> frozenset:
        """Names whose value on entry to ``s`` may be read (by ``s`` or later)."""
        return self._names_of(self._live_in(self._first[id(s)]))

    def live_after(self, s: ir.Stmt) -> frozenset:
        """Names whose value when ``s`` completes normally may be read later. For a loop:
        after it ends (by its own test; EXIT jumps land at the same point)."""
        return self._names_of(self._live_in(self._after[id(s)]))

    def is_live_after(self, s: ir.Stmt, name: str) -> bool:
        if self._live is None:
            self._live = self._solve_liveness()
        b = self._bits.get(name)
        if b is None:  # mentioned nowhere: live only where an unsupported statement may read it
            return self._reaches_unsupported(self._after[id(s)])
        return bool(self._live[self._after[id(s)]] & b)

    def use_after(self, s: ir.Stmt, name: str) -> Optional[ir.Stmt]:
        """A statement that may read the value ``name`` has when ``s`` completes (the first
        found on a path from there), or None. For messages: "used at line N"."""
        start = self._after[id(s)]
        seen, queue = {start}, [start]
        while queue:
            n = self.nodes[queue.pop(0)]
            if name in n.uses or ALL in n.uses:
                return n.stmt
            if name in n.defs:
                continue
            for x in n.succ:
                if x not in seen:
                    seen.add(x)
                    queue.append(x)
        return None

    def follows(self, s: ir.Stmt, later: ir.Stmt) -> bool:
        """Can ``later`` run after ``s`` has started (through an enclosing loop's next
        iteration, a backward GOTO, or plainly later in the list)?"""
        start, goal = self._first[id(s)], self._first[id(later)]
        seen, stack = set(), list(self.nodes[start].succ)
        while stack:
            i = stack.pop()
            if i == goal:
                return True
            if i not in seen:
                seen.add(i)
                stack.extend(self.nodes[i].succ)
        return False

    def _reaches_unsupported(self, start: int) -> bool:
        seen, stack = {start}, [start]
        while stack:
            n = self.nodes[stack.pop()]
            if ALL in n.uses:
                return True
            for x in n.succ:
                if x not in seen:
                    seen.add(x)
                    stack.append(x)
        return False

    def exposed(self) -> frozenset:
        """Names read before any certain assignment on some path from the start of the list
        (or from an ENTRY statement in it)."""
        mask = 0
        for s in self.entry.succ:
            mask |= self._live_in(s)
        return self._names_of(mask)

    # ------------------------------------------------------------------ reaching definitions
    def reaching_defs(self, s: ir.Stmt, name: str) -> Optional[list[ir.Stmt]]:
        """The statements whose assignment of ``name`` may be the value seen on entry to
        ``s``; None when the value may come from before the list (an argument, a global, an
        uninitialised local)."""
        target = self._first[id(s)]
        # backward search from the target to the nearest definitions of the name
        preds: list[list[int]] = [[] for _ in self.nodes]
        for n in self.nodes:
            for x in n.succ:
                preds[x].append(n.id)
        found: list[ir.Stmt] = []
        from_outside = False
        seen = set()
        stack = list(preds[target])
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            n = self.nodes[i]
            if name in n.defs:
                if n.stmt is not None and not any(n.stmt is f for f in found):
                    found.append(n.stmt)
                continue
            if n.role == "entry":
                from_outside = True
                continue
            stack.extend(preds[i])
        return None if from_outside else found


def exposed_reads(stmts: list[ir.Stmt], globals_: Iterable[str] = (), outs: Optional[dict] = None,
                  consts: Optional[dict] = None) -> frozenset:
    """Names ``stmts`` may read before assigning them, on some path through them (GOTOs
    followed; a jump out of the list ends it)."""
    return FlowGraph(stmts, (), globals_, outs, consts).exposed()


class IterationValues:
    """"Where is it defined" for the scalars one iteration of a loop computes: in the
    body of a loop, the expression a scalar surely holds at a statement because one
    assignment earlier in the same iteration gave it (``index = offset + j + k*depth``
    before ``buf(index) = ...``), spelled in values the iteration does not change --
    names the body never assigns and the variables of the loops that enclose both the
    assignment and the statement. The dependence test and the access bounds substitute
    it, so a subscript through such a temporary is analysed as the expression it is.

    Sound by construction: the assignment must be the only definition reaching the
    statement in the body's own flow graph (so no path from the iteration's start avoids
    it), the scalar must be assigned nowhere else in the body than by assignments (a CALL
    may change it where the graph cannot see), and the body must hold no statement the IR
    does not model (a READ may assign anything). ``globals_``: names a call may change
    without being passed them (COMMON, module, host and SAVE variables): in a body with a
    call they are not values the iteration keeps."""

    def __init__(self, body: list[ir.Stmt], globals_: Iterable[str] = ()):
        self.body = body
        walked = list(ir.walk(body))
        self.opaque = any(isinstance(s, ir.Unsupported) for s in walked)
        self.assigned: dict[str, list[ir.Stmt]] = {}  # scalar -> statements that may change it
        self.enclosing: dict[int, list[ir.Do]] = {}
        self._graph: Optional[FlowGraph] = None
        for s in walked:
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name):
                self.assigned.setdefault(s.target.name, []).append(s)
            elif isinstance(s, ir.Do):
                self.assigned.setdefault(s.var, []).append(s)
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):  # anything passed to a procedure may come back changed
                    if isinstance(x, ir.FuncCall) and not x.intrinsic:
                        for a in x.args:
                            if isinstance(a, ir.Name):
                                self.assigned.setdefault(a.name, []).append(s)
            if isinstance(s, ir.CallStmt):
                for a in s.args:
                    if isinstance(a, ir.Name):
                        self.assigned.setdefault(a.name, []).append(s)
            if isinstance(s, ir.CallStmt) or any(isinstance(x, ir.FuncCall) and not x.intrinsic
                                                 for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)):
                for g in globals_:
                    self.assigned.setdefault(g, []).append(s)

        def rec(stmts, stack):
            for s in stmts:
                self.enclosing[id(s)] = stack
                rec(ir.children(s), stack + [s] if isinstance(s, ir.Do) else stack)

        rec(body, [])

    @property
    def graph(self) -> FlowGraph:
        if self._graph is None:
            self._graph = FlowGraph(self.body)
        return self._graph

    def value(self, s: ir.Stmt, name: str, depth: int = 0) -> Optional[ir.Expr]:
        """The expression ``name`` holds on entry to ``s`` (a statement of the body), or
        None when no single assignment of this iteration surely gives it."""
        writers = self.assigned.get(name)
        if self.opaque or not writers or depth > 4 or id(s) not in self.enclosing:
            return None
        if not all(isinstance(w, ir.Assign) and isinstance(w.target, ir.Name) for w in writers):
            return None
        defs = self.graph.reaching_defs(s, name)
        if not defs or len(defs) != 1:
            return None
        d = defs[0]
        common = [lp for lp in self.enclosing[id(d)] if any(lp is x for x in self.enclosing[id(s)])]
        return self._spelled(d.value, d, {lp.var for lp in common}, depth)

    def _spelled(self, e: ir.Expr, at: ir.Stmt, loop_vars: set[str], depth: int) -> Optional[ir.Expr]:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.ArrayRef) or (isinstance(x, ir.FuncCall) and not x.intrinsic):
                return None
        table: dict[str, ir.Expr] = {}
        for x in ir.walk_expr(e):
            if not isinstance(x, ir.Name) or x.name not in self.assigned or x.name in loop_vars:
                continue
            if x.name in table:
                continue
            inner = self.value(at, x.name, depth + 1)
            if inner is None:
                return None
            table[x.name] = inner
        return replace_names(e, table) if table else copy.deepcopy(e)

    def substituted(self, e: ir.Expr, s: ir.Stmt) -> ir.Expr:
        """``e`` (an expression of statement ``s``) with every scalar the iteration
        assigns replaced by the value it surely holds there, where one is known."""
        table: dict[str, ir.Expr] = {}
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Name) and x.name in self.assigned and x.name not in table \
                    and not any(isinstance(w, ir.Do) for w in self.assigned[x.name]):
                v = self.value(s, x.name)
                if v is not None:
                    table[x.name] = v
        return replace_names(e, table) if table else e

