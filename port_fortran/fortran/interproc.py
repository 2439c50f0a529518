"""Facts that need the whole program (``program.Program``), computed once after linking.

* Argument intents through callees defined in other files of the tree (``argfacts``
  infers them per file; an argument passed to a routine it cannot see is taken as read
  and written).
* Extents of assumed-size dummies (``x(*)``, ``a(lda, *)``, legacy ``x(1)``) that the
  kernel's subscripts cannot bound: stated in the configuration
  (``routines.<name>.args.<arg>.extent``), else taken from the actual arguments at every
  call site in the tree (the largest, in terms of the dummy's other arguments where the
  caller passes them). The extent becomes the dimension's upper bound in the IR, so the
  translator and the harness use it like a declared one; a diagnostic on the kernel says
  where it came from, or, when neither exists, exactly what to write in the configuration.

Pure over the IR, except that it updates the program's kernels in place (the program owns
them).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from . import affine, ir
from .argfacts import argument_facts, infer_intents, legacy_dims
from .rewrite import replace_names

if TYPE_CHECKING:
    from .program import Program

MAX_DEPTH = 3  # call-site extents through callers' own assumed-size dummies


def refine(prog: "Program") -> None:
    check_config(prog)
    refine_intents(prog)
    calls = reanalyse_calls(prog)
    apply_extents(prog, calls)


def check_config(prog: "Program") -> None:
    """Every argument the configuration names exists (a routine the run does not include is
    fine: one configuration may serve several runs)."""
    from ..errors import UserError
    for name, entry in prog.config.items():
        for r in prog.routines.get(name, []):
            k = prog.kernel_of(r)
            known = [a.name for a in k.args]
            for a in (entry.get("args") or {}):
                if a not in known:
                    raise UserError(f"configuration key routines.{name}.args.{a}: {name} ({r.where}) has no argument "
                                    f"'{a}' (arguments: {', '.join(known) or 'none'})")


# --------------------------------------------------------------------------- intents


def refine_intents(prog: "Program") -> None:
    """Intents again, with every resolved callee of the tree (a fixpoint over the program)."""
    todo = [(r, prog.kernel_of(r)) for r in prog.all_routines()]
    todo = [(r, k) for r, k in todo if any(c.routine is not None and c.routine.file != r.file
                                           for c in prog.reaches(r))]
    for _ in range(8):
        changed = False
        for r, k in todo:
            before = [a.intent for a in k.args]
            try:
                infer_intents(k, prog.callable_from(k))
            except Exception as exc:  # analysis bug: the kernel keeps its per-file intents, flagged
                k.diagnostics.append(ir.Diagnostic("analysis-error", f"argument analysis over the tree failed: "
                                                   f"{type(exc).__name__}: {exc}", k.line_start, k.file))
                continue
            changed |= before != [a.intent for a in k.args]
        if not changed:
            return


# --------------------------------------------------------------------------- calls


def reanalyse_calls(prog: "Program"):
    """Loops and argument facts again, with the effects of callees of every file of the
    tree (``effects.Calls``), for each routine that reaches a routine of another file (the
    per-file analysis saw only its own file's callees). Callees first, so that a callee's
    loops are analysed before its effects are summarised. Returns the ``Calls``."""
    from .dependence import analyse_loops
    from .effects import Calls

    calls = Calls(prog)
    todo = []
    for r in prog.all_routines():
        k = prog.kernel_of(r)
        if isinstance(k, ir.Kernel) and k.calls and any(c.routine is not None and c.routine.file != r.file
                                                        for c in prog.reaches(r)):
            todo.append(k)
    for k in calls.callee_first(todo):
        try:
            legacy_dims(k, calls)
            analyse_loops(k, calls)
            argument_facts(k, calls)
        except Exception as exc:  # analysis bug: the kernel keeps its per-file analysis, flagged
            k.diagnostics.append(ir.Diagnostic("analysis-error", f"loop analysis over the tree failed: "
                                               f"{type(exc).__name__}: {exc}", k.line_start, k.file))
    return calls


# --------------------------------------------------------------------------- extents


def config_key(k: ir.Kernel, arg: str) -> str:
    return f"routines.{k.name}.args.{arg}.extent"


def assumed_dim(a: ir.Argument) -> Optional[int]:
    """Index of the assumed-size dimension (the last one, ``*``), or None."""
    if a.dims and a.dims[-1].upper is None and not a.dims[-1].assumed_shape:
        return len(a.dims) - 1
    return None


def apply_extents(prog: "Program", calls=None) -> None:
    memo: dict = {}
    for r in prog.all_routines():
        k = prog.kernel_of(r)
        if not isinstance(k, ir.Kernel):  # a stand-in front end's record: nothing to size
            continue
        changed = False
        cfg_args = (prog.routine_config(k.name).get("args") or {})
        for a in k.args:
            d = assumed_dim(a)
            cfg = cfg_args.get(a.name) or {}
            if d is None:
                continue
            text = _configured_extent(cfg)
            if text is not None:
                try:
                    e = parse_extent(text, k)
                except ValueError as exc:
                    from ..errors import UserError
                    raise UserError(f"configuration key {config_key(k, a.name)}: {exc}") from None
                _set_extent(prog, k, a, d, e, "extent-from-config",
                            f"extent of assumed-size '{a.name}' (dimension {d + 1}) from the configuration "
                            f"({config_key(k, a.name)}: {text})")
                changed = True
                continue
            if d < len(a.access_bounds) and a.access_bounds[d] is not None:
                continue  # the subscripts bound it
            e, sites, why = call_site_extent(prog, k, a, memo, 0)
            if e is not None:
                _set_extent(prog, k, a, d, e, "extent-from-call-sites",
                            f"extent of assumed-size '{a.name}' (dimension {d + 1}) taken from the actual "
                            f"argument{'s' if len(sites) > 1 else ''} at {', '.join(sites)}")
                changed = True
            else:
                k.diagnostics.append(ir.Diagnostic(
                    "extent-unknown", f"the extent of assumed-size '{a.name}' (dimension {d + 1}) cannot be bounded "
                    f"from the subscripts the kernel uses, and {why}; state it in the run configuration "
                    f"(--config FILE): {config_key(k, a.name)}: '<upper bound, in terms of "
                    f"{', '.join(x.name for x in k.args if not x.dims and x.ftype.base == 'integer') or 'constants'}>'",
                    a.line, k.file))
        if changed:
            argument_facts(k, calls)


def _configured_extent(cfg: dict) -> Optional[str]:
    if cfg.get("extent") is not None:
        return str(cfg["extent"])
    dims = cfg.get("dims")
    if isinstance(dims, list) and dims:
        last = str(dims[-1])
        hi = last.split(":", 1)[1] if ":" in last else last
        if hi.strip() and hi.strip() != "auto":
            return hi.strip()
    return None


def _set_extent(prog, k: ir.Kernel, a: ir.Argument, d: int, e: ir.Expr, code: str, msg: str) -> None:
    a.dims[d] = ir.Dim(lower=a.dims[d].lower, upper=e, extent_given=True)
    diag = ir.Diagnostic(code, msg, a.line, k.file)
    k.diagnostics.append(diag)
    prog.notes.append(diag)


def parse_extent(text: str, k: ir.Kernel) -> ir.Expr:
    """An integer expression of the routine's scalar arguments and constants (``n*m``,
    ``max(1, lda*n)``) as IR. Raises ValueError naming what is wrong."""
    try:
        tree = ast.parse(str(text).strip().lower(), mode="eval")
    except SyntaxError:
        raise ValueError(f"cannot parse {text!r} (write an expression such as 'n*m' or 'lda*(n-1)+1')") from None
    scalars = {a.name: a for a in k.args if not a.dims}
    params = {n: v.parameter for n, v in k.locals.items() if isinstance(v.parameter, int)}
    I = ir.INTEGER

    def conv(n: ast.AST) -> ir.Expr:
        if isinstance(n, ast.Expression):
            return conv(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return ir.Literal(n.value, str(n.value), ftype=I)
        if isinstance(n, ast.Name):
            if n.id in scalars:
                if scalars[n.id].ftype.base != "integer":
                    raise ValueError(f"'{n.id}' is not an integer argument of {k.name}")
                return ir.Name(n.id, ftype=scalars[n.id].ftype)
            if n.id in params:
                return ir.Literal(params[n.id], str(params[n.id]), ftype=I)
            raise ValueError(f"'{n.id}' is not a scalar argument or constant of {k.name} "
                             f"(arguments: {', '.join(scalars) or 'none'})")
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = conv(n.operand)
            return ir.UnaryOp("-", v, ftype=I) if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/"}
            op = ops.get(type(n.op))
            if op is None:
                raise ValueError(f"operator {type(n.op).__name__} is not allowed in {text!r} (use + - * /)")
            return ir.BinOp(op, conv(n.left), conv(n.right), ftype=I)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("max", "min", "abs") \
                and not n.keywords and n.args:
            return ir.FuncCall(n.func.id, [conv(x) for x in n.args], True, ftype=I)
        raise ValueError(f"{text!r}: only integers, arguments, + - * / and max/min/abs are allowed")

    return conv(tree)


# -- call sites


def _lit(v: int) -> ir.Expr:
    return ir.Literal(int(v), str(int(v)), ftype=ir.INTEGER)


def _var(k: ir.Kernel, name: str) -> Optional[ir.Variable]:
    for a in k.args:
        if a.name == name:
            return a
    return k.locals.get(name) or k.module_vars.get(name)


def _params(k: ir.Kernel) -> dict[str, int]:
    return {n: v.parameter for n, v in k.locals.items() if isinstance(v.parameter, int)
            and not isinstance(v.parameter, bool)}


def _simplify(e: ir.Expr, env: dict) -> ir.Expr:
    p = affine.poly_of(e, env)
    return affine.to_expr(p) if p is not None else e


def _extent_of_dim(prog, k: ir.Kernel, v: ir.Variable, d: int, memo, depth) -> tuple[Optional[ir.Expr], str]:
    dim = v.dims[d]
    if dim.assumed_shape:
        return None, f"'{v.name}' is assumed-shape"
    upper = dim.upper
    if upper is None:
        if not isinstance(v, ir.Argument) or depth >= MAX_DEPTH:
            return None, f"'{v.name}' of {k.name} is itself assumed-size"
        upper, _, why = call_site_extent(prog, k, v, memo, depth + 1)
        if upper is None:
            ab = v.access_bounds[d] if d < len(v.access_bounds) else None
            if ab is None:
                return None, f"'{v.name}' of {k.name} is itself assumed-size ({why})"
            upper = ab[1]
    lo = dim.lower if dim.lower is not None else _lit(1)
    return _simplify(ir.BinOp("+", ir.BinOp("-", upper, lo, ftype=ir.INTEGER), _lit(1), ftype=ir.INTEGER),
                     _params(k)), ""


def actual_size(prog, caller: ir.Kernel, act: ir.Expr, memo, depth) -> tuple[Optional[ir.Expr], str]:
    """Elements available from the actual argument on, in the caller's names (None, why)."""
    if not isinstance(act, (ir.Name, ir.ArrayRef)):
        return None, "the actual argument is an expression"
    v = _var(caller, act.name)
    if v is None:
        return None, f"'{act.name}' is not declared in {caller.name}"
    if not v.dims:
        return (_lit(1), "") if isinstance(act, ir.Name) else (None, f"'{act.name}' is not an array")
    exts = []
    for d in range(len(v.dims)):
        e, why = _extent_of_dim(prog, caller, v, d, memo, depth)
        if e is None:
            return None, why
        exts.append(e)
    I = ir.INTEGER
    total: ir.Expr = exts[0]
    for e in exts[1:]:
        total = ir.BinOp("*", total, e, ftype=I)
    if isinstance(act, ir.Name):
        return _simplify(total, _params(caller)), ""
    subs = act.subscripts
    if len(subs) != len(v.dims) or any(isinstance(s, ir.Slice) for s in subs):
        return None, f"the actual argument {act.name}(...) is an array section"
    # the element's offset in the array: sum over dims of (sub - lower) * stride
    offset: ir.Expr = _lit(0)
    stride: ir.Expr = _lit(1)
    for d, s in enumerate(subs):
        lo = v.dims[d].lower if v.dims[d].lower is not None else _lit(1)
        offset = ir.BinOp("+", offset, ir.BinOp("*", ir.BinOp("-", s, lo, ftype=I), stride, ftype=I), ftype=I)
        stride = ir.BinOp("*", stride, exts[d], ftype=I)
    return _simplify(ir.BinOp("-", total, offset, ftype=I), _params(caller)), ""


def _slab(prog, caller, act: ir.ArrayRef, memo, depth) -> Optional[ir.Expr]:
    """For ``a(lo1, ..., loj, x, ...)`` (the leading subscripts at their lower bounds): at
    least the product of the leading j extents is available from that element on."""
    v = _var(caller, act.name)
    if v is None or len(act.subscripts) != len(v.dims):
        return None
    env = _params(caller)
    out: Optional[ir.Expr] = None
    for d, s in enumerate(act.subscripts):
        lo = v.dims[d].lower if v.dims[d].lower is not None else _lit(1)
        if affine.poly_of(s, env) is None or affine.poly_of(s, env) != affine.poly_of(lo, env):
            break
        e, _ = _extent_of_dim(prog, caller, v, d, memo, depth)
        if e is None:
            return None
        out = e if out is None else ir.BinOp("*", out, e, ftype=ir.INTEGER)
    return _simplify(out, env) if out is not None else None


def _to_callee(e: ir.Expr, caller: ir.Kernel, callee: ir.Kernel, actuals: list[ir.Expr]) -> tuple[Optional[ir.Expr], str]:
    """A caller expression in the callee's names: scalars the caller passes become the
    dummies they are passed to; constants are folded."""
    table: dict[str, ir.Expr] = {}
    for q, act in enumerate(actuals):
        if q < len(callee.args) and isinstance(act, ir.Name) and not callee.args[q].dims:
            v = _var(caller, act.name)
            if (v is None or not v.dims) and act.name not in table:
                table[act.name] = ir.Name(callee.args[q].name, ftype=callee.args[q].ftype)
    for n, val in _params(caller).items():
        table.setdefault(n, _lit(val))
    out = replace_names(e, table)
    dummies = {a.name for a in callee.args if not a.dims}
    left = sorted({x.name for x in ir.walk_expr(out) if isinstance(x, (ir.Name, ir.ArrayRef))} - dummies)
    if left:
        return None, f"its size depends on {', '.join(left)} of {caller.name}, which {caller.name} does not pass"
    return _simplify(out, {}), ""


def _divide(total: ir.Expr, by: list[ir.Expr]) -> ir.Expr:
    """``total / product(by)``, exactly when the product divides the polynomial."""
    I = ir.INTEGER
    if not by:
        return total
    pt = affine.poly_of(total)
    prod = None
    for e in by:
        p = affine.poly_of(e)
        prod = None if p is None else (p if prod is None else affine.mul(prod, p))
        if prod is None:
            break
    if pt is not None and prod is not None and len(prod) == 1:
        (mono, coef), = prod.items()
        q = {}
        ok = coef != 0
        for m, c in pt.items():
            rest = list(m)
            for x in mono:
                if x in rest:
                    rest.remove(x)
                else:
                    ok = False
            if not ok or c % coef:
                ok = False
                break
            q[tuple(rest)] = c // coef
        if ok:
            return affine.to_expr(q)
    den: ir.Expr = by[0]
    for e in by[1:]:
        den = ir.BinOp("*", den, e, ftype=I)
    return ir.BinOp("/", total, den, ftype=I)


def call_site_extent(prog, k: ir.Kernel, a: ir.Argument, memo: dict, depth: int):
    """(upper bound of ``a``'s assumed-size dimension as IR in ``k``'s arguments, the call
    sites it came from, why not when None). Every call site must give a size: an extent
    that fits only some callers would let the port read past the arrays of the others."""
    key = (k.file, k.name, a.name)
    if key in memo:
        return memo[key] if memo[key] is not None else (None, [], "the call sites depend on each other")
    memo[key] = None
    sites = prog.call_sites(k)
    if not sites:
        res = (None, [], "no routine of the tree calls it")
        memo[key] = res
        return res
    d = len(a.dims) - 1
    others = []
    for j in range(d):
        lo = a.dims[j].lower if a.dims[j].lower is not None else _lit(1)
        up = a.dims[j].upper
        if up is None:
            res = (None, [], f"dimension {j + 1} has no upper bound")
            memo[key] = res
            return res
        others.append(_simplify(ir.BinOp("+", ir.BinOp("-", up, lo, ftype=ir.INTEGER), _lit(1), ftype=ir.INTEGER),
                                _params(k)))
    lo_last = a.dims[d].lower if a.dims[d].lower is not None else _lit(1)
    found: list[ir.Expr] = []
    where: list[str] = []
    for caller, actuals, line in sites:
        site = f"{caller.file}:{line}"
        if a.position >= len(actuals):
            continue  # an optional argument left out: nothing passed, nothing touched
        act = actuals[a.position]
        size, why = actual_size(prog, caller, act, memo, depth)
        if size is None and isinstance(act, ir.ArrayRef):
            size = _slab(prog, caller, act, memo, depth)
        if size is None:
            res = (None, [], f"the call at {site} passes an array of unknown size ({why})")
            memo[key] = res
            return res
        mine, why = _to_callee(size, caller, k, actuals)
        if mine is None:
            res = (None, [], f"at {site} {why}")
            memo[key] = res
            return res
        upper = _simplify(ir.BinOp("-", ir.BinOp("+", _divide(mine, others), lo_last, ftype=ir.INTEGER), _lit(1),
                                   ftype=ir.INTEGER), _params(k))
        if repr(ir.to_dict(upper)) not in [repr(ir.to_dict(x)) for x in found]:
            found.append(upper)
        if site not in where:
            where.append(site)
    if not found:
        res = (None, [], "no call passes it")
        memo[key] = res
        return res
    consts = [x.value for x in found if isinstance(x, ir.Literal)]
    if len(consts) == len(found):
        e: ir.Expr = _lit(max(consts))
    elif len(found) == 1:
        e = found[0]
    else:
        exprs = [x for x in found if not isinstance(x, ir.Literal)]
        if consts:
            exprs.append(_lit(max(consts)))
        e = ir.FuncCall("max", exprs, True, ftype=ir.INTEGER)
    res = (e, where, "")
    memo[key] = res
    return res
