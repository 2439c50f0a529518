"""fparser2 execution parts -> the IR's statement tree (``StmtBuilder``): assignments,
DO loops (block, labelled, shared termination), IF/SELECT CASE/WHERE, jumps, calls; I/O and
other constructs the IR does not model become ``ir.Unsupported`` in place."""
from __future__ import annotations

import re
from typing import Optional

from . import ir, strings
from .ir import FType
from .reader import SourceText
from .exprs import ExprBuilder
from .ftree import last_raw_line, list_items, lname, raw_line, stmt_children, stmt_label, stmt_line
from .scope import Scope, Unsup, internal_error


_IO = {"Write_Stmt", "Read_Stmt", "Print_Stmt", "Open_Stmt", "Close_Stmt", "Inquire_Stmt", "Rewind_Stmt",
       "Backspace_Stmt", "Endfile_Stmt", "Flush_Stmt", "Format_Stmt", "Wait_Stmt"}
_DO_CONSTRUCTS = {"Block_Nonlabel_Do_Construct", "Block_Label_Do_Construct", "Action_Term_Do_Construct",
                  "Nonblock_Do_Construct"}


class StmtBuilder:
    """Execution part -> list of ``ir.Stmt``."""

    def __init__(self, scope: Scope, src: SourceText, user_functions: set[str]):
        self.scope = scope
        self.src = src
        self.eb = ExprBuilder(scope, user_functions)
        self.calls: list[str] = []
        self.started = False  # an executable statement has been seen (statement functions come first)
        self.has_internal = False  # the routine CONTAINS procedures (they see its locals)

    def line(self, n) -> int:
        return stmt_line(n, self.src)

    def unsup(self, n, construct, reason) -> ir.Unsupported:
        return ir.Unsupported(construct, reason, str(n).strip(), line=self.line(n), label=stmt_label(n))

    def block(self, nodes: list) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        i = 0
        nodes = [n for n in nodes if n is not None]
        while i < len(nodes):
            n = nodes[i]
            cls = type(n).__name__
            if cls in ("Label_Do_Stmt", "Nonlabel_Do_Stmt"):
                # a DO sharing its terminating statement with an enclosing one: fparser
                # flattens it; the rest of the list is its body
                out.append(self.do_loop(n, nodes[i + 1:]))
                break
            out.extend(self.stmt(n))
            i += 1
        return out

    def stmt(self, n) -> list[ir.Stmt]:
        cls = type(n).__name__
        if cls == "Comment":
            return []
        raw = raw_line(n)
        if cls == "Continue_Stmt" and raw in self.src.replaced:
            construct, reason, text = self.src.replaced[raw]
            return [ir.Unsupported(construct, reason, text, line=self.line(n), label=stmt_label(n))]
        if cls in _IO:
            u = self.unsup(n, "io-in-kernel", f"{cls.split('_')[0].upper()} statement (I/O) inside a kernel")
            u.reads, u.writes, u.targets = self.io_effects(n)
            return [u]
        meth = getattr(self, "s_" + cls, None)
        if meth is None:
            return [self.unsup(n, "unsupported-construct", f"{cls.replace('_', ' ')} is not modelled")]
        try:
            res = meth(n)
        except Unsup as u:
            out = self.unsup(n, u.construct, u.reason)
            if cls in ("Allocate_Stmt", "Deallocate_Stmt"):  # reads its bounds, (re)defines its objects
                out.reads, out.writes, out.targets = self.io_effects(n)
            elif cls == "Assignment_Stmt":  # a component or substring assignment kept as it is
                out.reads, out.writes = self.assignment_effects(n)
            elif cls == "Entry_Stmt":  # reads nothing when control falls through it (the flow graph
                out.reads = []         # adds the entry from outside)
            return [out]
        except Exception as exc:  # a bug of this visitor, not a Fortran limitation: kept, explained
            return [self.unsup(n, "internal-error", internal_error(cls, exc))]
        self.started = self.started or res != []  # a statement function defines, it does not start
        res = res if isinstance(res, list) else [res]
        line = self.line(n)
        for r in res:
            for x in ir.walk([r]):
                if not x.line:
                    x.line = line
        return res

    def statement_function(self, name: str, dummy_list, body) -> Optional[Unsup]:
        """Registers the statement function ``name(dummies) = body`` for inlining at every
        reference; the body is built once here, its dummies standing for themselves, so that
        what cannot be read is refused at the definition's line."""
        t = self.scope.type_of(name)
        if t is None or t.base == "character":
            return Unsup("statement-function", f"statement function {name} of type "
                         f"{'unknown' if t is None else 'character'} is not modelled (if {name} is an array of a "
                         "module, give port-fortran the file of that module)")
        dummies = [lname(a) for a in list_items(dummy_list)]
        self.eb.stmt_funcs[name] = (dummies, body)
        called = list(self.eb.called)  # functions the body calls are called where it is referenced, not here
        try:
            self.eb.inline(name, [ir.Name(d, ftype=self.scope.type_of(d)) for d in dummies], {})
        except Unsup as u:
            del self.eb.stmt_funcs[name]
            return u
        finally:
            self.eb.called = called
        return None

    def e(self, n) -> ir.Expr:
        return self.eb.expr(n)

    _IO_WRITTEN_SPECS = {"IOSTAT", "IOMSG", "SIZE", "NEWUNIT", "ID"}

    def io_effects(self, n) -> tuple[Optional[list[str]], Optional[list[str]], list[int]]:
        """(names an I/O (or ALLOCATE/DEALLOCATE) statement may read, names it may assign,
        labels it may jump to).
        A function it references reads its arguments (mentioned) and what the routine
        shares (:meth:`shared_names`), unless it is a statement function or an internal
        procedure of the routine: then, as with a namelist, reads are None (unknown, it may
        read anything). FORMAT does nothing when executed."""
        from fparser.two.utils import walk as fwalk
        cls = type(n).__name__
        if cls == "Format_Stmt":
            return [], [], []
        names: list[str] = []
        writes: list[str] = []
        targets: list[int] = []
        unknown = calls = False
        # an implied DO's variable, in its control and its items, is its own: no read of the
        # variable's value before the statement (`write(0, *) (a(j, i), j = 1, n)`)
        bound: set[int] = set()
        for x in fwalk(n):
            if type(x).__name__ == "Io_Implied_Do" and len(x.items) == 2:
                var = x.items[1].items[0]
                bound.add(id(var))
                bound |= {id(y) for y in fwalk(x.items[0]) if type(y).__name__ == "Name" and lname(y) == lname(var)}
        for x in fwalk(n):
            t = type(x).__name__
            if t in ("Part_Ref", "Function_Reference", "Structure_Constructor"):
                kind = self._reference(x)
                unknown = unknown or kind == "unknown"
                calls = calls or kind == "call"  # a substring reads only its variable, mentioned
            elif t == "Name" and id(x) not in bound:
                names.append(lname(x))
            elif t == "Io_Implied_Do_Control":
                writes.append(lname(x.items[0]))
            elif t == "Io_Control_Spec":
                kw = (x.items[0] or "").upper()
                if kw in ("ERR", "END", "EOR"):
                    try:
                        targets.append(int(str(x.items[1])))
                    except ValueError:
                        unknown = True
                elif kw == "NML":
                    unknown = True
                elif kw in self._IO_WRITTEN_SPECS or (kw in ("", "UNIT") and cls == "Write_Stmt"):
                    # IOSTAT= and the like; an internal file written
                    writes += [lname(y) for y in fwalk(x.items[1]) if type(y).__name__ == "Name"]
        if cls in ("Read_Stmt", "Inquire_Stmt", "Open_Stmt", "Allocate_Stmt", "Deallocate_Stmt"):
            writes = list(names)  # what a READ fills, what INQUIRE reports, what ALLOCATE defines
        if calls:  # what the functions may read and write besides their arguments
            shared = self.shared_names()
            names += shared
            writes += shared
        names = list(dict.fromkeys(names))
        return (None if unknown else names), list(dict.fromkeys(writes)), targets

    def assignment_effects(self, n) -> tuple[Optional[list[str]], list[str]]:
        """(names an assignment the IR cannot model may read, names it may assign): every
        name it mentions (component names too: more than it reads, never less) and the
        variable its target belongs to (``mg_perf`` of ``mg_perf%num_adds = ...``). A
        function it calls reads and may write no local of the routine but through its
        arguments (mentioned already): only the COMMON, module and host variables the
        routine sees -- unless the function is a statement function or an internal
        procedure of the routine, which see its locals: then it may read anything."""
        from fparser.two.utils import walk as fwalk
        names: list[str] = []
        unknown = calls = False
        for x in fwalk(n):
            t = type(x).__name__
            if t in ("Part_Ref", "Function_Reference", "Structure_Constructor"):
                kind = self._reference(x)
                unknown = unknown or kind == "unknown"
                calls = calls or kind in ("call", "substring")
            elif t == "Name":
                names.append(lname(x))
        target = next((lname(y) for y in fwalk(n.items[0]) if type(y).__name__ == "Name"), None)
        writes = [target] if target else []
        if unknown:
            return None, writes
        if calls:
            shared = self.shared_names()
            names += shared
            writes += shared
        return list(dict.fromkeys(names)), list(dict.fromkeys(writes))

    def _reference(self, x) -> str:
        """What the reference ``x`` (``f(...)``) is to the names a statement may read: ''
        (an element of an array), 'substring' (of a CHARACTER variable), 'unknown' (a
        statement function or a procedure the routine CONTAINS: they see its locals) or
        'call' (any other function: it sees only what the routine shares)."""
        name = lname(x.items[0])
        s = self.scope.lookup(name)
        if s is not None and s.dims:
            return ""
        if name in self.eb.stmt_funcs or self.has_internal:
            return "unknown"
        if s is not None and s.ftype is not None and s.ftype.base == "character" and not s.external:
            return "substring"
        return "call"

    def shared_names(self) -> list[str]:
        """Variables the routine shares with the routines it calls other than through
        arguments: COMMON members, module variables, host variables."""
        out = []
        scope: Optional[Scope] = self.scope
        seen: set[str] = set()
        while scope is not None:
            for name, s in list(scope.syms.items()) + list(scope.imported.items()):
                if name in seen:
                    continue
                seen.add(name)
                if s.is_parameter:
                    continue
                if s.common is not None or s.module is not None or s.save or self.scope.is_host(name):
                    out.append(name)
            scope = scope.parent
        return out

    def _stamp(self, s: ir.Stmt, n) -> ir.Stmt:
        s.line = self.line(n)
        s.label = stmt_label(n)
        return s

    # -- simple statements
    def s_Assignment_Stmt(self, n):
        lhs, _, rhs = n.items
        if type(lhs).__name__ in ("Part_Ref", "Intrinsic_Function_Reference", "Structure_Constructor"):
            name = lname(lhs.items[0])
            s = self.scope.lookup(name)
            if s is not None and s.bad and not s.dims:
                raise Unsup(s.bad_code, f"{name}(...) = ... cannot be read: {s.bad}")
            if not (s is not None and s.dims):
                t = self.scope.type_of(name)
                ranged = any(type(a).__name__ in ("Subscript_Triplet", "Substring_Range")
                             for a in list_items(lhs.items[1]))
                if t is not None and t.base == "character" and s is not None and s.typed and (ranged or self.started):
                    return self._substring_store(self.e(lhs), rhs, n)
                if self.started:
                    raise Unsup("statement-function", f"{name}(...) = ... after the first executable statement: "
                                f"{name} is not an array (if {name} is an array of a module, give port-fortran the "
                                "file of that module)")
                problem = self.statement_function(name, lhs.items[1], rhs)
                if problem is not None:
                    raise problem
                return []
        target = self.e(lhs)
        if isinstance(target, strings.Substring):
            return self._substring_store(target, rhs, n)
        if not isinstance(target, (ir.Name, ir.ArrayRef)):
            raise Unsup("unsupported-construct", f"assignment target {lhs} is not modelled")
        return self._stamp(ir.Assign(target, self.e(rhs)), n)

    def _substring_store(self, target: ir.Expr, rhs, n):
        """``s(lo:hi) = v``: the string ``s`` assigned its value with those characters replaced
        (fortran/strings.py says why this form)."""
        if not isinstance(target, strings.Substring):
            raise Unsup("unsupported-construct", f"assignment target {n.items[0]} is not modelled")
        base = target.base
        return self._stamp(ir.Assign(base, strings.make_store(base, target, self.e(rhs))), n)

    def s_Continue_Stmt(self, n):
        return self._stamp(ir.Continue(), n)

    def s_Goto_Stmt(self, n):
        return self._stamp(ir.Goto(int(str(n.items[0]))), n)

    def s_Computed_Goto_Stmt(self, n):
        return self._stamp(ir.ComputedGoto([int(str(x)) for x in list_items(n.items[0])], self.e(n.items[1])), n)

    def s_Arithmetic_If_Stmt(self, n):
        e, a, b, c = n.items
        return self._stamp(ir.ArithmeticIf(self.e(e), (int(str(a)), int(str(b)), int(str(c)))), n)

    def s_Cycle_Stmt(self, n):
        nm = n.items[1] if len(n.items) > 1 else None
        return self._stamp(ir.Cycle(lname(nm) if nm is not None else None), n)

    def s_Exit_Stmt(self, n):
        nm = n.items[1] if len(n.items) > 1 else None
        return self._stamp(ir.Exit(lname(nm) if nm is not None else None), n)

    def s_Return_Stmt(self, n):
        if n.items and n.items[0] is not None:
            raise Unsup("unsupported-construct", f"alternate RETURN {n} is not modelled")
        return self._stamp(ir.Return(), n)

    def s_Stop_Stmt(self, n):
        code = n.items[1] if len(n.items) > 1 else None
        ce = None
        if code is not None:
            txt = str(code).strip()
            if txt.isdigit():
                ce = ir.Literal(int(txt), txt, ftype=ir.INTEGER)
            elif txt[:1] in "'\"":
                ce = ir.Literal(txt[1:-1], txt, ftype=FType("character", 1, len(txt) - 2))
            else:
                try:
                    ce = self.e(code)
                except Unsup:
                    ce = ir.Literal(txt, txt)
        return self._stamp(ir.Stop(ce), n)

    def s_Error_Stop_Stmt(self, n):
        return self._stamp(ir.Stop(None), n)

    def s_Call_Stmt(self, n):
        name = lname(n.items[0])
        if type(n.items[0]).__name__ != "Name":
            raise Unsup("derived-type", f"type-bound procedure call {n} is not modelled")
        args, kws = self.eb.args(n.items[1])
        if kws:
            # keyword args kept positionally after the positional ones (names lost) would be a guess
            raise Unsup("unsupported-construct", f"CALL with keyword arguments {n} is not modelled")
        if name not in self.calls:
            self.calls.append(name)
        return self._stamp(ir.CallStmt(name, args), n)

    def s_Entry_Stmt(self, n):
        raise Unsup("entry", "ENTRY gives the routine a second entry point; not modelled")

    def s_Pointer_Assignment_Stmt(self, n):
        raise Unsup("pointer", "pointer assignment is not modelled")

    def s_Nullify_Stmt(self, n):
        raise Unsup("pointer", "NULLIFY is not modelled")

    def s_Allocate_Stmt(self, n):
        raise Unsup("unsupported-construct", "ALLOCATE inside a kernel is not modelled")

    def s_Deallocate_Stmt(self, n):
        raise Unsup("unsupported-construct", "DEALLOCATE inside a kernel is not modelled")

    def s_Data_Stmt(self, n):
        raise Unsup("unsupported-construct", "DATA initialises variables with implicit SAVE; not modelled")

    def s_Format_Stmt(self, n):
        raise Unsup("io-in-kernel", "FORMAT statement (I/O) inside a kernel")

    # -- IF
    def s_If_Stmt(self, n):
        cond, action = n.items
        body = self.stmt(action)
        return self._stamp(ir.If([(self.e(cond), body)]), n)

    def s_If_Construct(self, n):
        kids = stmt_children(n)
        node = ir.If()
        cur_body: list = []
        cur_cond = None
        else_mode = False
        end_label = None
        for c in kids:
            cls = type(c).__name__
            if cls == "If_Then_Stmt":
                cur_cond = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Else_If_Stmt":
                node.branches.append((cur_cond, self.block(cur_body)))
                cur_body = []
                cur_cond = self.e(c.items[0])
            elif cls == "Else_Stmt":
                node.branches.append((cur_cond, self.block(cur_body)))
                cur_body = []
                else_mode = True
            elif cls == "End_If_Stmt":
                end_label = stmt_label(c)
            else:
                cur_body.append(c)
        if else_mode:
            node.else_body = self.block(cur_body)
        else:
            node.branches.append((cur_cond, self.block(cur_body)))
        out = [node]
        if end_label is not None:
            out.append(ir.Continue(line=self.line(kids[-1]), label=end_label))
        return out

    # -- SELECT CASE
    def s_Case_Construct(self, n):
        kids = stmt_children(n)
        node = ir.SelectCase(ir.Literal(0))
        cur = None
        body: list = []
        end_label = None
        for c in kids:
            cls = type(c).__name__
            if cls == "Select_Case_Stmt":
                node.expr = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Case_Stmt":
                if cur is not None:
                    cur.body = self.block(body)
                    node.cases.append(cur)
                body = []
                cur = ir.Case(self.case_values(c.items[0]), [])
            elif cls == "End_Select_Stmt":
                end_label = stmt_label(c)
            else:
                body.append(c)
        if cur is not None:
            cur.body = self.block(body)
            node.cases.append(cur)
        out = [node]
        if end_label is not None:
            out.append(ir.Continue(line=self.line(kids[-1]), label=end_label))
        return out

    def case_values(self, sel) -> list[ir.Expr]:
        if sel is None or str(sel).strip().upper() == "DEFAULT":
            return []
        lst = sel.items[0]
        vals = []
        for v in list_items(lst):
            if type(v).__name__ == "Case_Value_Range":
                lo, hi = v.items
                vals.append(ir.Slice(self.e(lo) if lo is not None else None, self.e(hi) if hi is not None else None))
            else:
                vals.append(self.e(v))
        return vals

    # -- WHERE
    def s_Where_Stmt(self, n):
        mask, assign = n.items
        return self._stamp(ir.Where(self.e(mask), self.stmt(assign)), n)

    def s_Where_Construct(self, n):
        node = ir.Where(ir.Literal(True))
        body: list = []
        els = False
        for c in stmt_children(n):
            cls = type(c).__name__
            if cls == "Where_Construct_Stmt":
                node.mask = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Masked_Elsewhere_Stmt":
                raise Unsup("unsupported-construct", "ELSEWHERE (mask) is not modelled")
            elif cls == "Elsewhere_Stmt":
                node.body = self.block(body)
                body = []
                els = True
            elif cls == "End_Where_Stmt":
                pass
            else:
                body.append(c)
        if els:
            node.elsewhere = self.block(body)
        else:
            node.body = self.block(body)
        return node

    # -- DO
    def _do_construct(self, n):
        kids = stmt_children(n)
        return [self.do_loop(kids[0], kids[1:])]

    s_Block_Nonlabel_Do_Construct = _do_construct
    s_Block_Label_Do_Construct = _do_construct
    s_Action_Term_Do_Construct = _do_construct
    s_Nonblock_Do_Construct = _do_construct

    def do_loop(self, head, rest: list) -> ir.Stmt:
        cls = type(head).__name__
        line = self.line(head)
        label = stmt_label(head)
        cname = getattr(head.item, "name", None) if getattr(head, "item", None) is not None else None
        cname = cname.lower() if cname else None
        end_label = None
        if cls == "Label_Do_Stmt":
            end_label = int(str(head.items[1]))
            ctl = head.items[2]
        else:
            ctl = head.items[1]
        body_nodes = list(rest)
        last_raw = last_raw_line(body_nodes[-1]) if body_nodes else 0
        if body_nodes and type(body_nodes[-1]).__name__ == "End_Do_Stmt":
            end = body_nodes.pop()
            lab = stmt_label(end)
            if lab is not None:
                # `10 end do`: the label belongs to the loop's last statement
                body_nodes.append(end)
        body: list[ir.Stmt] = []
        for s in self.block_with_enddo(body_nodes):
            body.append(s)
        try:
            if ctl is None:
                node = ir.DoWhile(ir.Literal(True, ".true.", ftype=ir.LOGICAL), body, cname)
            elif ctl.items[0] is not None:
                node = ir.DoWhile(self.e(ctl.items[0]), body, cname)
            elif ctl.items[1] is None:
                node = self.do_concurrent(ctl, body, cname, end_label, line, label, last_raw)
                if node is None:
                    return ir.Unsupported("unsupported-construct", "DO CONCURRENT header is not modelled",
                                          str(head).strip(), line=line, label=label)
                return node
            else:
                var, bounds = ctl.items[1]
                start, end_ = self.e(bounds[0]), self.e(bounds[1])
                step = self.e(bounds[2]) if len(bounds) > 2 and bounds[2] is not None else None
                vname = lname(var)
                node = ir.Do(vname, start, end_, step, body, cname, end_label)
        except Unsup as u:
            return ir.Unsupported(u.construct, u.reason, str(head), line=line, label=label)
        node.line = line
        node.label = label
        if isinstance(node, ir.Do) and last_raw:
            node.end_line = self.src.origin(last_raw).main_line
        return node

    def do_concurrent(self, ctl, body, cname, end_label, line, label, last_raw):
        """``DO CONCURRENT (i = a:b[:s], j = ..., mask)`` as DO loops nested in the order of the
        header (the last index innermost), the mask an IF around the body. Any order of the
        iterations is a valid execution of DO CONCURRENT, so the nest means the same; whether
        it runs in parallel is still the dependence test's call, not the header's claim. The
        indices' construct scope is not modelled: the proof catches a program that reads an
        outer variable of the same name after the construct."""
        hdr = ctl.items[3] if len(ctl.items) > 3 else None
        if hdr is None or type(hdr).__name__ != "Forall_Header":
            return None
        specs, mask = hdr.items[0], hdr.items[1] if len(hdr.items) > 1 else None
        if specs is None or type(specs).__name__ != "Forall_Triplet_Spec_List":
            return None
        trips = list(specs.items)
        if mask is not None:
            body = [ir.If([(self.e(mask), body)], line=line)]
        end = self.src.origin(last_raw).main_line if last_raw else 0
        node = None
        for k, t in enumerate(reversed(trips)):
            var, lo, hi, st = t.items
            node = ir.Do(lname(var), self.e(lo), self.e(hi), self.e(st) if st is not None else None, body,
                         cname if k == 0 else None, end_label if k == 0 else None)
            node.line, node.end_line = line, end
            node.label = label if k == len(trips) - 1 else None
            body = [node]
        return node

    def block_with_enddo(self, nodes):
        out = []
        for s in self.block([n for n in nodes if type(n).__name__ != "End_Do_Stmt"]):
            out.append(s)
        for n in nodes:
            if type(n).__name__ == "End_Do_Stmt":
                out.append(ir.Continue(line=self.line(n), label=stmt_label(n)))
        return out

    # -- constructs the IR does not model
    def s_Forall_Construct(self, n):
        raise Unsup("unsupported-construct", "FORALL is not modelled")

    def s_Forall_Stmt(self, n):
        raise Unsup("unsupported-construct", "FORALL is not modelled")

    def s_Associate_Construct(self, n):
        raise Unsup("unsupported-construct", "ASSOCIATE is not modelled")

    def s_Block_Construct(self, n):
        raise Unsup("unsupported-construct", "BLOCK construct is not modelled")

    def s_Select_Type_Construct(self, n):
        raise Unsup("derived-type", "SELECT TYPE is not modelled")


# --------------------------------------------------------------------------- program units

_OMP_RE = re.compile(r"^\s*[!cC*]\$omp", re.IGNORECASE)


def expr_names(e: ir.Expr):
    for x in ir.walk_expr(e):
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            yield x.name


def first_use_line(body: list[ir.Stmt], names: set[str]) -> int:
    """Line of the first statement that mentions one of ``names`` (0 if none does)."""
    for s in ir.walk(body):
        if isinstance(s, ir.Do) and s.var in names:
            return s.line
        for e in ir.stmt_exprs(s):
            if any(nm in names for nm in expr_names(e)):
                return s.line
    return 0


def referenced_names(body: list[ir.Stmt]) -> list[str]:
    seen: dict[str, None] = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Do):
            seen.setdefault(s.var)
        for e in ir.stmt_exprs(s):
            for nm in expr_names(e):
                seen.setdefault(nm)
    return list(seen)
