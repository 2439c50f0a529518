"""Array syntax, WHERE and array reductions -> explicit DO loops (pure IR -> IR).

* ``a(1:n) = b(1:n) + c`` and whole-array assignments become nested DO loops (first
  dimension innermost), marked parallel: refused with ``array-overlap`` when the target
  array appears on the right-hand side with other subscripts (Fortran evaluates the whole
  right-hand side first; a loop would not).
* ``where (mask) ... elsewhere ... end where`` becomes the same loops around an IF.
* ``sum``, ``product``, ``maxval``, ``minval``, ``dot_product`` over arrays or sections are
  hoisted into a temporary computed by a reduction loop just before the statement.

The loops it makes carry a filled :class:`ir.LoopInfo` (the rewrites are exact, so the
parallel verdict is known). Loop variables and temporaries are added to the symbol table."""
from __future__ import annotations

import copy
import dataclasses
from typing import Optional

from ..fortran import ir
from .cexpr import ExprPrinter
from .symbols import Refusal, SymbolTable

ELEMENTAL = {"abs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
             "atan2", "sinh", "cosh", "tanh", "min", "max", "mod", "modulo", "sign", "int", "nint",
             "real", "dble", "float", "cmplx", "conjg", "aimag", "floor", "ceiling", "dabs", "dsqrt",
             "dexp", "dlog", "dsin", "dcos", "dmax1", "dmin1", "amax1", "amin1", "dsign", "iabs",
             "aint", "anint", "dint", "dnint"}
REDUCE_OP = {"sum": "sum", "product": "prod", "maxval": "max", "minval": "min", "dot_product": "sum"}

ONE = ir.Literal(1, "1", ftype=ir.INTEGER)


def _lit(v: int) -> ir.Literal:
    return ir.Literal(v, str(v), ftype=ir.INTEGER)


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Literal) and b.value == 0:
        return a
    return ir.BinOp("+", a, b, ftype=ir.INTEGER)


def _sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Literal) and b.value == 0:
        return a
    if isinstance(a, ir.Literal) and isinstance(b, ir.Literal):
        return _lit(a.value - b.value)
    return ir.BinOp("-", a, b, ftype=ir.INTEGER)


def _same(a: Optional[ir.Expr], b: Optional[ir.Expr]) -> bool:
    return ir.to_dict(a) == ir.to_dict(b)


class Lowerer:
    def __init__(self, tab: SymbolTable):
        self.tab = tab
        self.loop_count = 0

    # ------------------------------------------------------------------ sections
    def sections(self, e: ir.Expr, line: int) -> list[tuple[str, int, ir.Expr, ir.Expr]]:
        """(array, dim, lower, upper) of each section dimension of ``e`` (a Name of an
        array or an ArrayRef with Slices), in order."""
        if isinstance(e, ir.Name) and self.tab.is_array(e.name):
            sym = self.tab[e.name]
            out = []
            for d, dim in enumerate(sym.dims):
                if dim.upper is None:
                    raise Refusal("unknown-extent", f"whole assumed-size array '{e.name}' in array syntax", line)
                out.append((e.name, d, sym.lower(d), dim.upper))
            return out
        if isinstance(e, ir.ArrayRef) and self.tab.is_array(e.name):
            sym = self.tab[e.name]
            out = []
            for d, s in enumerate(e.subscripts):
                if isinstance(s, ir.Slice):
                    if s.step is not None and not (isinstance(s.step, ir.Literal) and s.step.value == 1):
                        raise Refusal("unsupported-section", f"section of '{e.name}' with a stride", line)
                    lo = s.lower if s.lower is not None else sym.lower(d)
                    hi = s.upper if s.upper is not None else sym.dims[d].upper
                    if hi is None:
                        raise Refusal("unknown-extent", f"open section of assumed-size '{e.name}'", line)
                    out.append((e.name, d, lo, hi))
            return out
        return []

    def is_array_valued(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.Name):
            return self.tab.is_array(e.name)
        if isinstance(e, ir.ArrayRef):
            return self.tab.is_array(e.name) and any(isinstance(s, ir.Slice) for s in e.subscripts)
        if isinstance(e, ir.FuncCall) and (e.name in REDUCE_OP or not e.intrinsic):
            return False  # a user function returns a scalar (array results are refused); its array arguments are whole
        return any(self.is_array_valued(c) for c in ir.expr_children(e))

    def elemental(self, e: ir.Expr, loop_vars: list[str], los: list[ir.Expr], line: int) -> ir.Expr:
        """``e`` with every section replaced by the element at the loop variables."""
        if isinstance(e, (ir.Name, ir.ArrayRef)) and self.sections(e, line):
            secs = self.sections(e, line)
            if len(secs) != len(loop_vars):
                raise Refusal("array-shape", f"'{e.name}' does not conform to the assignment's shape", line)
            sym = self.tab[e.name]
            subs = []
            k = 0
            src = e.subscripts if isinstance(e, ir.ArrayRef) else [ir.Slice() for _ in sym.dims]
            for d, s in enumerate(src):
                if isinstance(s, ir.Slice):
                    _, _, lo, _ = secs[k]
                    v = ir.Name(loop_vars[k], ftype=ir.INTEGER)
                    subs.append(v if _same(lo, los[k]) else _add(lo, _sub(v, los[k])))
                    k += 1
                else:
                    subs.append(s)
            return ir.ArrayRef(e.name, subs, ftype=sym.ftype)
        if isinstance(e, ir.FuncCall):
            if e.name in REDUCE_OP:
                return e
            if not e.intrinsic:
                if any(isinstance(a, ir.ArrayRef) and any(isinstance(x, ir.Slice) for x in a.subscripts)
                       for a in e.args):
                    raise Refusal("unsupported-expression", f"function {e.name} applied to an array section in array "
                                  "syntax", line)
                return e
            if self.is_array_valued(e) and e.name not in ELEMENTAL:
                raise Refusal("unsupported-intrinsic", f"array-valued {e.name} in array syntax", line)
            return dataclasses.replace(e, args=[self.elemental(a, loop_vars, los, line) for a in e.args])
        if isinstance(e, ir.BinOp):
            return dataclasses.replace(e, left=self.elemental(e.left, loop_vars, los, line),
                                       right=self.elemental(e.right, loop_vars, los, line))
        if isinstance(e, ir.UnaryOp):
            return dataclasses.replace(e, operand=self.elemental(e.operand, loop_vars, los, line))
        if isinstance(e, ir.ArrayConstructor):
            raise Refusal("unsupported-expression", "array constructor", line)
        return e

    def nest(self, bounds: list[tuple[ir.Expr, ir.Expr]], body: list[ir.Stmt], line: int,
             info: Optional[ir.LoopInfo] = None) -> tuple[list[str], ir.Do]:
        """Nested DO loops over ``bounds`` (dimension 1 innermost)."""
        self.loop_count += 1
        names = [self.tab.new_temp("i", ir.INTEGER).name for _ in bounds]
        inner = body
        loop = None
        for k, (lo, hi) in enumerate(bounds):
            li = copy.deepcopy(info) if info is not None else ir.LoopInfo(parallel=True)
            li.tightly_nested_parallel = k + 1 if li.parallel and not li.reductions else 1
            li.private = list(li.private) + names[:k]
            loop = ir.Do(names[k], lo, hi, body=inner, line=line, info=li)
            inner = [loop]
        return names, loop

    # ------------------------------------------------------------------ statements
    def lower(self, body: list[ir.Stmt], privates: Optional[list[ir.LoopInfo]] = None) -> list[ir.Stmt]:
        privates = privates or []
        out: list[ir.Stmt] = []
        for s in body:
            pre, s = self.hoist_reductions(s, privates)
            out += pre
            if isinstance(s, ir.Assign) and self.is_array_valued(s.target):
                out.append(self.array_assign(s))
            elif isinstance(s, ir.Assign) and self.is_array_valued(s.value):
                raise Refusal("array-shape", "array value assigned to a scalar", s.line)
            elif isinstance(s, ir.Where):
                out.append(self.where(s))
            elif isinstance(s, ir.Do):
                s = copy.copy(s)
                s.info = copy.copy(s.info)
                s.info.private = list(s.info.private)
                s.body = self.lower(s.body, privates + [s.info])
                out.append(s)
            elif isinstance(s, ir.DoWhile):
                s = copy.copy(s)
                s.body = self.lower(s.body, privates)
                out.append(s)
            elif isinstance(s, ir.If):
                s = copy.copy(s)
                s.branches = [(c, self.lower(b, privates)) for c, b in s.branches]
                s.else_body = self.lower(s.else_body, privates)
                out.append(s)
            else:
                out.append(s)
        return out

    def array_assign(self, s: ir.Assign) -> ir.Do:
        secs = self.sections(s.target, s.line)
        target = s.target
        # the target may appear on the right only with the same subscripts
        for e in ir.walk_expr(s.value):
            if isinstance(e, (ir.Name, ir.ArrayRef)) and e.name == target.name:
                if not _same(e, target):
                    raise Refusal("array-overlap", f"'{target.name}' is assigned and read with other subscripts in one array assignment", s.line)
        los = [lo for _, _, lo, _ in secs]
        bounds = [(lo, hi) for _, _, lo, hi in secs]
        names, loop = self.nest(bounds, [], s.line)
        elem = ir.Assign(self.elemental(s.target, names, los, s.line),
                         self.elemental(s.value, names, los, s.line), line=s.line)
        self._set_innermost(loop, [elem])
        return loop

    @staticmethod
    def _set_innermost(loop: ir.Do, body: list[ir.Stmt]):
        while loop.body and isinstance(loop.body[0], ir.Do):
            loop = loop.body[0]
        loop.body = body

    def where(self, w: ir.Where) -> ir.Do:
        assigns = list(w.body) + list(w.elsewhere)
        if not assigns or not all(isinstance(a, ir.Assign) and self.is_array_valued(a.target) for a in assigns):
            raise Refusal("unsupported-where", "WHERE body other than array assignments", w.line)
        secs = self.sections(assigns[0].target, w.line)
        los = [lo for _, _, lo, _ in secs]
        targets = {a.target.name for a in assigns}
        for e in ir.walk_expr(w.mask):
            if isinstance(e, (ir.Name, ir.ArrayRef)) and e.name in targets:
                raise Refusal("array-overlap", "WHERE assigns an array its mask reads", w.line)
        for a in assigns:
            for e in ir.walk_expr(a.value):
                if isinstance(e, (ir.Name, ir.ArrayRef)) and e.name in targets and not _same(e, a.target):
                    raise Refusal("array-overlap", f"'{e.name}' assigned and read with other subscripts in WHERE", a.line)
        names, loop = self.nest([(lo, hi) for _, _, lo, hi in secs], [], w.line)

        def el(stmts):
            return [ir.Assign(self.elemental(a.target, names, los, a.line),
                              self.elemental(a.value, names, los, a.line), line=a.line) for a in stmts]

        cond = self.elemental(w.mask, names, los, w.line)
        self._set_innermost(loop, [ir.If(branches=[(cond, el(w.body))], else_body=el(w.elsewhere), line=w.line)])
        return loop

    # ------------------------------------------------------------------ reductions
    def _own_exprs(self, s: ir.Stmt) -> list[tuple[object, str]]:
        if isinstance(s, ir.Assign):
            return [(s, "value")]
        if isinstance(s, ir.If):
            return [(s, "cond0")]
        if isinstance(s, ir.Do):
            return [(s, "start"), (s, "end")]
        return []

    def hoist_reductions(self, s: ir.Stmt, privates: list[ir.LoopInfo]):
        pre: list[ir.Stmt] = []
        calls = []
        own: list[ir.Expr] = []
        if isinstance(s, ir.Assign):
            own = [s.value] + (list(s.target.subscripts) if isinstance(s.target, ir.ArrayRef) else [])
        elif isinstance(s, ir.If):
            own = [c for c, _ in s.branches[:1]]
            if any(any(isinstance(x, ir.FuncCall) and x.name in REDUCE_OP for x in ir.walk_expr(c))
                   for c, _ in s.branches[1:]):
                raise Refusal("unsupported-intrinsic", "array reduction in an ELSE IF condition", s.line)
        elif isinstance(s, ir.Do):
            own = [s.start, s.end] + ([s.step] if s.step is not None else [])
        elif isinstance(s, ir.CallStmt):
            own = list(s.args)
        for e in own:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and x.name in REDUCE_OP and x.intrinsic is not False:
                    calls.append(x)
        if not calls:
            return pre, s
        repl = {}
        for call in calls:
            if call.keywords or (call.name != "dot_product" and len(call.args) != 1):
                raise Refusal("unsupported-intrinsic", f"{call.name} with dim= or mask=", s.line)
            pre_stmts, temp = self.reduction_loop(call, s.line)
            for info in privates:
                info.private.append(temp)
            pre += pre_stmts
            repl[id(call)] = ir.Name(temp, ftype=self.tab[temp].ftype)
        s = copy.copy(s)
        if isinstance(s, ir.Assign):
            s.value = _replace(s.value, repl)
            if isinstance(s.target, ir.ArrayRef):
                s.target = _replace(s.target, repl)
        elif isinstance(s, ir.If):
            s.branches = [(_replace(s.branches[0][0], repl), s.branches[0][1])] + list(s.branches[1:])
        elif isinstance(s, ir.Do):
            s.start, s.end = _replace(s.start, repl), _replace(s.end, repl)
        elif isinstance(s, ir.CallStmt):
            s.args = [_replace(a, repl) for a in s.args]
        return pre, s

    def reduction_loop(self, call: ir.FuncCall, line: int):
        op = REDUCE_OP[call.name]
        if call.name == "dot_product":
            if len(call.args) != 2:
                raise Refusal("unsupported-intrinsic", "dot_product needs two arguments", line)
            arg: ir.Expr = ir.BinOp("*", call.args[0], call.args[1])
        else:
            arg = call.args[0]
        secs = []
        for e in ir.walk_expr(arg):
            if isinstance(e, (ir.Name, ir.ArrayRef)):
                secs = self.sections(e, line)
                if secs:
                    break
        if not secs:
            raise Refusal("unsupported-intrinsic", f"{call.name} of something that is not an array", line)
        los = [lo for _, _, lo, _ in secs]
        probe_names = []
        for _ in secs:
            probe_names.append(self.tab.new_temp("i", ir.INTEGER).name)
        elem = self.elemental(arg, probe_names, los, line)
        t = ExprPrinter(self.tab, line=line).type_of(elem)
        if t.base == "complex" and call.name == "dot_product":
            raise Refusal("unsupported-intrinsic", "dot_product of complex arrays (conjugates its first argument)", line)
        if t.base == "complex" and op in ("min", "max"):
            raise Refusal("unsupported-intrinsic", f"{call.name} of complex values", line)
        temp = self.tab.new_temp(call.name, t).name
        acc = ir.Name(temp, ftype=t)
        if op == "sum":
            init = ir.Literal(0, "0", ftype=ir.INTEGER)
            upd: ir.Expr = ir.BinOp("+", acc, elem, ftype=t)
        elif op == "prod":
            init = ir.Literal(1, "1", ftype=ir.INTEGER)
            upd = ir.BinOp("*", acc, elem, ftype=t)
        else:
            init = ir.FuncCall("huge", [acc], intrinsic=True, ftype=t)
            if op == "max":
                init = ir.UnaryOp("-", init, ftype=t)
            upd = ir.FuncCall(op, [acc, elem], intrinsic=True, ftype=t)
        info = ir.LoopInfo(parallel=True, reductions=[ir.Reduction(temp, op, line)])
        bounds = [(lo, hi) for _, _, lo, hi in secs]
        # build the nest with the probe names as loop variables
        inner: list[ir.Stmt] = [ir.Assign(acc, upd, line=line)]
        loop = None
        for k, (lo, hi) in enumerate(bounds):
            li = copy.deepcopy(info)
            li.private = probe_names[:k] if k else []
            loop = ir.Do(probe_names[k], lo, hi, body=inner, line=line, info=li)
            inner = [loop]
        return [ir.Assign(acc, init, line=line), loop], temp


def _replace(e: ir.Expr, repl: dict) -> ir.Expr:
    if id(e) in repl:
        return repl[id(e)]
    if isinstance(e, ir.BinOp):
        return dataclasses.replace(e, left=_replace(e.left, repl), right=_replace(e.right, repl))
    if isinstance(e, ir.UnaryOp):
        return dataclasses.replace(e, operand=_replace(e.operand, repl))
    if isinstance(e, ir.FuncCall):
        return dataclasses.replace(e, args=[_replace(a, repl) for a in e.args])
    if isinstance(e, ir.ArrayRef):
        return dataclasses.replace(e, subscripts=[_replace(a, repl) for a in e.subscripts])
    return e


def lower_arrays(body: list[ir.Stmt], tab: SymbolTable) -> list[ir.Stmt]:
    return Lowerer(tab).lower(body)
