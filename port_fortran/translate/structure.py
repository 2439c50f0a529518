"""Structuring rewrites: GOTOs and arithmetic IFs -> IF blocks and loops (pure IR -> IR).

Handled, each an exact rewrite:

* forward GOTO within one statement list (``if (c) go to 20 ... 20 continue``): the
  statements jumped over become ``if (.not. c) then ... end if``; an unconditional forward
  GOTO drops the unreachable statements (refused when one of them is a jump target); a
  GOTO from inside an IF block to the statement right after it jumps to the end of its
  branch (the IF/ELSE IF chains of GOTOs in FFTPACK's drivers nest this way);
* GOTO to the terminating ``CONTINUE`` of the enclosing labelled DO, from inside nested IF
  blocks: ``CYCLE``;
* backward conditional GOTO (``10 continue ... if (c) go to 10``): a ``DO WHILE (.true.)``
  that ends with ``if (.not. c) exit``;
* arithmetic IF: one conditional GOTO per label besides the next statement's
  (``if (e) 10, 20, 20`` followed by ``20 ...`` is ``if (e < 0) go to 10``;
  ``if (e) 107, 105, 102`` followed by ``102 ...`` is ``if (e < 0) go to 107`` then
  ``if (e == 0) go to 105``), which the forward-GOTO rule turns into IF blocks;
* SELECT CASE -> IF / ELSE IF chains (simple values and ranges).

Anything else raises ``Refusal('unstructured-goto', ..., line)``."""
from __future__ import annotations

import copy
from collections import Counter

from ..fortran import ir
from .symbols import Refusal

TRUE = ir.Literal(True, ".true.", ftype=ir.LOGICAL)


def negate(c: ir.Expr) -> ir.Expr:
    if isinstance(c, ir.UnaryOp) and c.op == "not":
        return c.operand
    inverse = {"==": "/=", "/=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
    if isinstance(c, ir.BinOp) and c.op in inverse:
        lt = getattr(c.left, "ftype", None)
        rt = getattr(c.right, "ftype", None)
        # NaN makes .not.(a < b) differ from a >= b for reals: only flip integer/character tests
        if all(t is not None and t.base in ("integer", "character") for t in (lt, rt)):
            return ir.BinOp(inverse[c.op], c.left, c.right, ftype=ir.LOGICAL)
    return ir.UnaryOp("not", c, ftype=ir.LOGICAL)


def goto_targets(body: list[ir.Stmt]) -> Counter:
    c: Counter = Counter()
    for s in ir.walk(body):
        if isinstance(s, ir.Goto):
            c[s.target] += 1
        elif isinstance(s, ir.ComputedGoto):
            for t in s.targets:
                c[t] += 1
        elif isinstance(s, ir.ArithmeticIf):
            for t in set(s.labels):
                c[t] += 1
    return c


def _cond_goto(s: ir.Stmt):
    """(condition, label) when ``s`` is ``go to L`` or ``if (c) go to L``; else None."""
    if isinstance(s, ir.Goto):
        return TRUE, s.target
    if (isinstance(s, ir.If) and len(s.branches) == 1 and not s.else_body
            and len(s.branches[0][1]) == 1 and isinstance(s.branches[0][1][0], ir.Goto)):
        return s.branches[0][0], s.branches[0][1][0].target
    return None


def _arith_if(s: ir.ArithmeticIf, next_label) -> list[ir.Stmt]:
    """Rewrite an arithmetic IF as conditional GOTOs, one per label other than the next
    statement's (``if (e) 107, 105, 102`` before ``102 ...``: ``if (e < 0) go to 107``,
    ``if (e == 0) go to 105``); when no label is the next statement the last target is an
    unconditional GOTO. The forward-GOTO rule then makes IF blocks of them. ``e`` is
    evaluated once per test, so it must be free of user function calls."""
    zero = ir.Literal(0, "0", ftype=ir.INTEGER)
    l1, l2, l3 = s.labels
    targets = []
    for lab in (l1, l2, l3):
        if lab != next_label and lab not in targets:
            targets.append(lab)
    if len(targets) > 1 and any(isinstance(x, ir.FuncCall) and not x.intrinsic for x in ir.walk_expr(s.expr)):
        raise Refusal("unstructured-goto", "arithmetic IF with more than one jump target whose expression calls "
                      "a function (it would be evaluated more than once)", s.line)
    conds = {("<",): "<", ("==",): "==", (">",): ">", ("<", "=="): "<=", ("==", ">"): ">=", ("<", ">"): "/="}
    out: list[ir.Stmt] = []
    for n, target in enumerate(targets):
        if n == len(targets) - 1 and next_label not in (l1, l2, l3):
            out.append(ir.Goto(target, line=s.line))  # every remaining sign goes there
            break
        ops = [op for op, lab in (("<", l1), ("==", l2), (">", l3)) if lab == target]
        cond = ir.BinOp(conds[tuple(ops)], s.expr, zero, ftype=ir.LOGICAL)
        out.append(ir.If(branches=[(cond, [ir.Goto(target, line=s.line)])], line=s.line))
    if not out:
        out = [ir.Continue(line=s.line)]
    out[0].label = s.label
    return out


def _select_to_if(s: ir.SelectCase) -> ir.If:
    branches = []
    default: list[ir.Stmt] = []
    for case in s.cases:
        if not case.values:
            default = case.body
            continue
        terms = []
        for v in case.values:
            if isinstance(v, ir.Slice):
                parts = []
                if v.lower is not None:
                    parts.append(ir.BinOp(">=", s.expr, v.lower, ftype=ir.LOGICAL))
                if v.upper is not None:
                    parts.append(ir.BinOp("<=", s.expr, v.upper, ftype=ir.LOGICAL))
                t = parts[0]
                for p in parts[1:]:
                    t = ir.BinOp("and", t, p, ftype=ir.LOGICAL)
                terms.append(t)
            else:
                terms.append(ir.BinOp("==", s.expr, v, ftype=ir.LOGICAL))
        cond = terms[0]
        for t in terms[1:]:
            cond = ir.BinOp("or", cond, t, ftype=ir.LOGICAL)
        branches.append((cond, case.body))
    if not branches:
        return ir.If(branches=[(TRUE, default)], line=s.line, label=s.label)
    return ir.If(branches=branches, else_body=default, line=s.line, label=s.label)


def _labels_in(stmts: list[ir.Stmt]) -> set:
    return {s.label for s in ir.walk(stmts) if s.label is not None}


def _rewrite_list(stmts: list[ir.Stmt], all_targets: Counter, loop_end: list, follow=None) -> list[ir.Stmt]:
    """``follow``: the label of the statement control reaches when it falls off the end of
    this list (an IF branch is followed by the statement after the IF); a GOTO to it is a
    jump to the end of the list."""
    body: list[ir.Stmt] = []
    # arithmetic IF and SELECT CASE first
    for i, s in enumerate(stmts):
        if isinstance(s, ir.ArithmeticIf):
            nxt = stmts[i + 1].label if i + 1 < len(stmts) else None
            new = _arith_if(s, nxt)
            for lab in set(s.labels):
                all_targets[lab] -= 1
            for g in ir.walk(new):
                if isinstance(g, ir.Goto):
                    all_targets[g.target] += 1
            body += new
        elif isinstance(s, ir.SelectCase):
            body.append(_select_to_if(s))
        else:
            body.append(s)
    changed = True
    while changed:
        changed = False
        for i, s in enumerate(body):
            # L: if (c) then ... go to L end if  ->  do while (c) ... end do
            if (isinstance(s, ir.If) and s.label is not None and len(s.branches) == 1 and not s.else_body
                    and s.branches[0][1] and isinstance(s.branches[0][1][-1], ir.Goto)
                    and s.branches[0][1][-1].target == s.label and all_targets[s.label] == 1):
                all_targets[s.label] -= 1
                body[i] = ir.DoWhile(s.branches[0][0], body=list(s.branches[0][1][:-1]), line=s.line)
                changed = True
                break
            cg = _cond_goto(s)
            if cg is None:
                continue
            cond, label = cg
            pos = {t.label: j for j, t in enumerate(body) if t.label is not None}
            if follow is not None and follow not in pos:
                pos[follow] = len(body)  # the end of the list: control goes on there
            j = pos.get(label)
            if j is None:
                continue
            if j > i:  # forward
                between = body[i + 1:j]
                inside = goto_targets(between)
                for lab in _labels_in(between):
                    if all_targets[lab] > inside[lab]:
                        raise Refusal("unstructured-goto", f"a GOTO jumps into the statements skipped by the GOTO at line {s.line}", s.line)
                all_targets[label] -= 1
                for t, n in inside.items():
                    all_targets[t] -= n
                # if (c) go to A; S1; go to B; A: S2; B: ...  ->  if (.not. c) S1 else S2
                tail = between[-1] if between else None
                if cond is not TRUE and isinstance(tail, ir.Goto):
                    k = pos.get(tail.target)
                    if k is not None and k > j:
                        inner2 = goto_targets(body[j:k])
                        ok = (all(all_targets[lab] <= inner2[lab] for lab in _labels_in(body[j:k]) - {label})
                              and all_targets[label] == 0 and inside[label] == 0)
                        if ok:
                            all_targets[tail.target] -= 1
                            new = [ir.If(branches=[(negate(cond), between[:-1])], else_body=body[j:k],
                                         line=s.line, label=s.label)]
                            for t, n in inside.items():
                                all_targets[t] += n
                            body[i:k] = new
                            changed = True
                            break
                if cond is TRUE:
                    if any(t.label is not None and t.label in all_targets and all_targets[t.label] > 0 for t in ir.walk(between)):
                        raise Refusal("unstructured-goto", "unreachable statements are jump targets", s.line)
                    new = []
                else:
                    new = [ir.If(branches=[(negate(cond), between)], line=s.line, label=s.label)]
                    for t, n in inside.items():
                        all_targets[t] += n
                body[i:j] = new
                changed = True
                break
            if j <= i and cond is not TRUE and all_targets[label] == 1:  # backward, conditional
                loop_body = body[j:i]
                exit_if = ir.If(branches=[(negate(cond), [ir.Exit(line=s.line)])], line=s.line)
                loop = ir.DoWhile(TRUE, body=loop_body + [exit_if], line=body[j].line)
                all_targets[label] -= 1
                body[j:i + 1] = [loop]
                changed = True
                break
    # recurse into nested statements
    out = []
    for n, s in enumerate(body):
        after = body[n + 1].label if n + 1 < len(body) else follow
        s = copy.copy(s)
        if isinstance(s, ir.Do):
            ends = loop_end + [(s.end_label, s)]
            s.body = _rewrite_list(s.body, all_targets, ends)
            s.body = _gotos_to_cycle(s.body, s, all_targets)
        elif isinstance(s, ir.DoWhile):
            s.body = _rewrite_list(s.body, all_targets, loop_end + [(None, s)])
        elif isinstance(s, ir.If):
            s.branches = [(c, _rewrite_list(b, all_targets, loop_end, after)) for c, b in s.branches]
            s.else_body = _rewrite_list(s.else_body, all_targets, loop_end, after)
        elif isinstance(s, ir.Where):
            pass
        out.append(s)
    return out


def _gotos_to_cycle(body: list[ir.Stmt], loop: ir.Do, all_targets: Counter) -> list[ir.Stmt]:
    """``go to L`` nested in IF blocks of a DO whose last statement is ``L continue``:
    CYCLE (only where no inner loop lies between the GOTO and the DO)."""
    if loop.end_label is None or not body or body[-1].label != loop.end_label or not isinstance(body[-1], ir.Continue):
        return body

    def fix(stmts):
        res = []
        for s in stmts:
            if isinstance(s, ir.Goto) and s.target == loop.end_label:
                all_targets[s.target] -= 1
                res.append(ir.Cycle(line=s.line, label=s.label))
                continue
            if isinstance(s, ir.If):
                s = copy.copy(s)
                s.branches = [(c, fix(b)) for c, b in s.branches]
                s.else_body = fix(s.else_body)
            res.append(s)
        return res

    return fix(body[:-1]) + [body[-1]]


def restructure(body: list[ir.Stmt], tab=None) -> list[ir.Stmt]:
    """Return an equivalent statement list without GOTO / arithmetic IF / SELECT CASE, or
    raise :class:`Refusal` naming the first jump that cannot be structured. With ``tab``
    (the symbol table, for a new integer local) jumps between statements of the routine's
    own statement list that the rules above cannot structure become a dispatch loop
    (:func:`dispatch`)."""
    try:
        out = _structured(body)
    except Refusal as r:
        if tab is None or r.diagnostic.code != "unstructured-goto":
            raise
        loop = dispatch(body, tab)
        if loop is None:
            raise
        out = _structured(loop)
    # drop a trailing RETURN (the routine ends there anyway)
    while out and isinstance(out[-1], ir.Return) and out[-1].label is None:
        out = out[:-1]
    return out


def _structured(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """The rules above over ``body``; its statements are left as they were (new lists and
    copies of the compound statements), so a refusal can fall back to :func:`dispatch`."""
    targets = goto_targets(body)
    out = _rewrite_list(body, targets, [])
    for s in ir.walk(out):
        if isinstance(s, (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)):
            raise Refusal("unstructured-goto", "a GO TO that the rules cannot turn into structured code", s.line)
    return out


def dispatch(body: list[ir.Stmt], tab) -> list[ir.Stmt] | None:
    """Jumps among the statements of ``body`` itself (the routine's top level), from
    anywhere but inside a loop, as a loop over numbered blocks (F77 search loops entered
    at several labels: FFTPACK's factorisation ``101 ... IF (NR) 101,105,101``). The loop
    spans the statements from the first jump or target to the last; those before and after
    stay as they are::

        pf_go = 0
        do while (.true.)
           if (pf_go == 0) then;  <statements before the first target>;  pf_go = 1; cycle
           else if (pf_go == 1) then;  <from label L1 on>;  pf_go = 2; cycle
           ...
           else;  <the last block>;  exit
        end do

    ``go to Lk`` is ``pf_go = k; cycle``; an arithmetic IF or computed GO TO becomes an IF
    chain of such jumps (its expression must then call no user function: it is evaluated
    once per test). Jumps to labels inside a loop or an IF block, and jumps out of a loop,
    are left to the rules (None when any remains: the caller refuses)."""
    top = {s.label: i for i, s in enumerate(body) if s.label is not None}
    wanted = {t for t in goto_targets(body) if t in top}
    if not wanted or _jumps_out_of_loops(body, set(top)):
        return None

    def jumps(s: ir.Stmt) -> bool:
        return bool(set(goto_targets([s])) & wanted)

    ends = [i for i, s in enumerate(body) if jumps(s)] + [top[t] for t in wanted]
    first, last = min(ends), max(ends)
    prefix, suffix, body = body[:first], body[last + 1:], body[first:last + 1]
    top = {s.label: i for i, s in enumerate(body) if s.label is not None}
    starts = sorted({0} | {top[t] for t in wanted})
    block_of = {body[i].label: n for n, i in enumerate(starts) if body[i].label in wanted}
    go = tab.new_temp("go", ir.INTEGER).name
    lit = lambda v: ir.Literal(v, str(v), ftype=ir.INTEGER)  # noqa: E731

    def jump(n: int, line: int) -> list[ir.Stmt]:
        return [ir.Assign(ir.Name(go, ftype=ir.INTEGER), lit(n), line=line), ir.Cycle(line=line)]

    def conv(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        res: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.Goto) and s.target in block_of:
                res += jump(block_of[s.target], s.line)
                if s.label is not None:
                    res[-2].label = s.label
            elif isinstance(s, ir.ArithmeticIf) and set(s.labels) & set(block_of):
                if not set(s.labels) <= set(block_of) or any(
                        isinstance(x, ir.FuncCall) and not x.intrinsic for x in ir.walk_expr(s.expr)):
                    raise Refusal("unstructured-goto", "an arithmetic IF whose targets the rules cannot reach", s.line)
                zero = lit(0)
                branches = [(ir.BinOp(op, s.expr, zero, ftype=ir.LOGICAL), jump(block_of[lab], s.line))
                            for op, lab in (("<", s.labels[0]), ("==", s.labels[1]))]
                res.append(ir.If(branches=branches, else_body=jump(block_of[s.labels[2]], s.line),
                                 line=s.line, label=s.label))
            elif isinstance(s, ir.ComputedGoto) and set(s.targets) & set(block_of):
                if not set(s.targets) <= set(block_of) or any(
                        isinstance(x, ir.FuncCall) and not x.intrinsic for x in ir.walk_expr(s.expr)):
                    raise Refusal("unstructured-goto", "a computed GO TO whose targets the rules cannot reach", s.line)
                branches = [(ir.BinOp("==", s.expr, lit(n + 1), ftype=ir.LOGICAL), jump(block_of[t], s.line))
                            for n, t in enumerate(s.targets)]
                res.append(ir.If(branches=branches, line=s.line, label=s.label))
            elif isinstance(s, ir.If):
                s = copy.copy(s)
                s.branches = [(c, conv(b)) for c, b in s.branches]
                s.else_body = conv(s.else_body)
                res.append(s)
            else:
                res.append(s)
        return res

    branches = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(body)
        last_stmt = body[end - 1]
        tail = jump(n + 1, last_stmt.line) if n + 1 < len(starts) else [ir.Exit(line=body[-1].line)]
        if isinstance(last_stmt, (ir.Goto, ir.ArithmeticIf, ir.Return)):
            tail = []  # it never falls through
        cond = ir.BinOp("==", ir.Name(go, ftype=ir.INTEGER), lit(n), ftype=ir.LOGICAL)
        branches.append((cond, conv(copy.deepcopy(body[start:end])) + tail))
    leaves = [x for b in branches for x in ir.walk(b[1]) if isinstance(x, (ir.Return, ir.Stop))]
    if not leaves and not isinstance(branches[-1][1][-1], ir.Exit):
        return None  # no way out: the original never ends (left to the refusal)
    line = body[0].line
    inner = [ir.If(branches=branches[:-1], else_body=branches[-1][1], line=line)] if len(branches) > 1 \
        else branches[0][1]
    loop = ir.DoWhile(TRUE, body=inner, line=line)
    return prefix + [ir.Assign(ir.Name(go, ftype=ir.INTEGER), lit(0), line=line), loop] + suffix


def _jumps_out_of_loops(body: list[ir.Stmt], top: set) -> bool:
    """A jump inside a loop (at any depth) to a label of the top-level list."""
    for s in ir.walk(body):
        if isinstance(s, (ir.Do, ir.DoWhile)):
            for g in ir.walk(s.body):
                t = (g.target,) if isinstance(g, ir.Goto) else tuple(g.targets) if isinstance(g, ir.ComputedGoto) \
                    else tuple(g.labels) if isinstance(g, ir.ArithmeticIf) else ()
                if set(t) & top:
                    return True
    return False
