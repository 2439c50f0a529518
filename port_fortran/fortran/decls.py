"""fparser2 specification parts -> the symbols of a scope (``DeclBuilder``): types and
kinds, dimensions, PARAMETER, DATA, COMMON, EQUIVALENCE, USE, attributes; what the IR
does not model becomes an ``ir.Unsupported`` with its line."""
from __future__ import annotations

import re
from typing import Any, Optional

from fparser.two import Fortran2003

from . import ftypes, ir
from .ir import FType
from .reader import SourceText
from .exprs import ExprBuilder, eval_const
from .ftree import children, find_nodes, list_items, lname, stmt_label, stmt_line
from .scope import ModuleScopes, Scope, Sym, Unsup, internal_error, unknown_name_reason
from .stmts import StmtBuilder, expr_names


class DeclBuilder:
    """Fills a ``Scope`` from a specification part; collects spec-level unsupported nodes."""

    def __init__(self, scope: Scope, src: SourceText, modules: dict[str, Scope], user_functions: set[str]):
        self.scope = scope
        self.src = src
        self.modules = modules
        self.user_functions = user_functions
        self.unsupported: list[ir.Unsupported] = []
        self.commons: list[ir.CommonBlock] = []
        self.uses: list[str] = []
        self.diagnostics: list[ir.Diagnostic] = []
        self.data_values: dict[str, Any] = {}
        # DATA: (targets, values, node); a target is a name or (name, constant subscripts)
        self.data_sets: list[tuple[list, list, Any]] = []
        self.stmt_functions: list = []  # Stmt_Function_Stmt nodes, decided after the spec part
        # a module's accessibility: the default (a bare PRIVATE / PUBLIC) and named entities
        self.access_default = "public"
        self.access: dict[str, str] = {}
        self.equivalences: list[list[str]] = []  # EQUIVALENCE classes (names), merged

    def eb(self) -> ExprBuilder:
        return ExprBuilder(self.scope, self.user_functions)

    def unsup(self, node, construct, reason):
        self.unsupported.append(ir.Unsupported(construct, reason, str(node), line=stmt_line(node, self.src),
                                               label=stmt_label(node)))

    def type_spec(self, ts, entity_len=None) -> FType:
        cls = type(ts).__name__
        if cls != "Intrinsic_Type_Spec":
            raise Unsup("derived-type", f"declaration with {ts} is not modelled")
        base_s, sel = ts.items
        base_s = str(base_s).upper()
        if base_s == "DOUBLE PRECISION":
            return ftypes.double_real()
        if base_s == "DOUBLE COMPLEX":
            return ftypes.double_complex()
        base = base_s.lower()
        if base == "character":
            return FType("character", 1, self.char_len(sel) if sel is not None else 1)
        kind = ftypes.current_kinds()[0] if base in ("real", "complex") else 4
        if sel is not None:
            items = sel.items
            star = str(items[0]) == "*"
            kind = ftypes.normalise_kind(base, self.kind_value(items[1]), star)
            try:
                ftypes.check_kind(base, kind)
            except ftypes.KindError as exc:
                raise Unsup("unknown-kind", f"{ts}: {exc}")
        return FType(base, kind)

    def kind_value(self, kexpr) -> int:
        """The value of a kind selector, as the compiler computes it; Unsup('unknown-kind')
        with the reason when it cannot be known here (never a default)."""
        what = f"kind {kexpr}"
        try:
            e = self.eb().expr(kexpr)
        except Unsup as u:
            raise Unsup("unknown-kind", f"{what}: {u.reason}")
        try:
            v = eval_const(e, self.scope.params())
        except KeyError as exc:
            raise Unsup("unknown-kind", unknown_name_reason(str(exc.args[0]), self.scope, what))
        except Exception as exc:  # not a constant expression the front end evaluates
            names = [x for x in expr_names(e) if x not in self.scope.params()]
            if names:
                raise Unsup("unknown-kind", unknown_name_reason(names[0], self.scope, what))
            raise Unsup("unknown-kind", f"{what} could not be evaluated ({exc})")
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not isinstance(v, int) or isinstance(v, bool):
            raise Unsup("unknown-kind", f"{what} evaluates to {v!r}, not an integer")
        return v

    def char_len(self, sel) -> Optional[int]:
        s = str(sel).replace(" ", "").lower()
        if s in ("*(*)", "(*)", "*", "(len=*)") or s.endswith("=*)") or s.endswith("(*)"):
            return None
        # a literal length alone (*8, (8), *(8), (len=8), (8,kind=1), (kind=1,len=8)), never a
        # digit of an expression (len=n+2 is computed at run time: decls._runtime_len)
        m = re.fullmatch(r"\*?\(?(?:len=)?(\d+)(?:,(?:kind=)?\w+)?\)?", s) or \
            re.fullmatch(r"\((?:kind=)?\w+,len=(\d+)\)", s)
        if m:
            return int(m.group(1))
        try:
            v = eval_const(self.eb().expr(sel.items[1]), self.scope.params())
            return int(v)
        except Exception:
            return None

    def dims(self, spec) -> list[ir.Dim]:
        cls = type(spec).__name__
        eb = self.eb()
        out: list[ir.Dim] = []
        if cls in ("Assumed_Shape_Spec_List", "Deferred_Shape_Spec_List"):
            for x in list_items(spec):
                lo = x.items[0] if getattr(x, "items", None) else None
                out.append(ir.Dim(eb.expr(lo) if lo is not None else None, None, assumed_shape=True))
            return out
        if cls == "Assumed_Size_Spec":
            shape_list, last_lo = spec.items[0], spec.items[1]
            if shape_list is not None:
                out += self.dims(shape_list)
            out.append(ir.Dim(eb.expr(last_lo) if last_lo is not None else None, None))
            return out
        if cls in ("Explicit_Shape_Spec_List",):
            for x in list_items(spec):
                out += self.dims(x)
            return out
        if cls == "Explicit_Shape_Spec":
            lo, hi = spec.items
            return [ir.Dim(eb.expr(lo) if lo is not None else None, eb.expr(hi))]
        if cls in ("Assumed_Shape_Spec", "Deferred_Shape_Spec"):
            lo = spec.items[0] if getattr(spec, "items", None) else None
            return [ir.Dim(eb.expr(lo) if lo is not None else None, None, assumed_shape=True)]
        raise Unsup("unsupported-construct", f"array specification {spec} is not modelled")

    def declare(self, name: str, line: int) -> Sym:
        s = self.scope.local(name)
        if not s.line:
            s.line = line
        return s

    # ------------------------------------------------------------------ statements
    def visit(self, node):
        for c in children(node):
            cls = type(c).__name__
            if cls in ("Implicit_Part", "Specification_Part"):
                self.visit(c)
                continue
            meth = getattr(self, "s_" + cls, None)
            try:
                if meth is not None:
                    meth(c)
                elif cls == "Comment":
                    continue
                else:
                    self.unsup(c, "unsupported-construct", f"{cls.replace('_', ' ')} is not modelled")
            except Unsup as u:
                self.unsup(c, u.construct, u.reason)
                self._mark_declared(c, u.construct, u.reason)
            except Exception as exc:  # a bug of this visitor, not a Fortran limitation: kept, explained
                why = internal_error(cls, exc)
                self.unsup(c, "internal-error", why)
                self._mark_declared(c, "internal-error", why)

    def _mark_declared(self, n, construct: str, reason: str) -> None:
        """The names a declaration that could not be read declares: marked with why, so that
        a use elsewhere (a module's user, an internal procedure, an assignment that looks
        like a statement function) is refused for that reason, not as an untyped name."""
        if type(n).__name__ != "Type_Declaration_Stmt":
            return
        line = stmt_line(n, self.src)
        for ent in list_items(n.items[2]):
            try:
                sym = self.declare(lname(ent.items[0]), line)
            except (AttributeError, IndexError, TypeError):
                continue
            if not sym.bad:
                sym.bad, sym.bad_code = f"{reason} (declared at line {line})", construct

    def s_Enum_Def(self, n):
        """``ENUM, BIND(C)``: each enumerator a named integer(c_int) constant, counting from
        0 or from the value given."""
        line = stmt_line(n, self.src)
        nxt = 0
        for st in children(n):
            if type(st).__name__ != "Enumerator_Def_Stmt":
                continue
            for e in list_items(st.items[1]):
                if type(e).__name__ == "Enumerator":
                    name = lname(e.items[0])
                    nxt = int(eval_const(self.eb().expr(e.items[2]), self.scope.params()))
                else:
                    name = lname(e)
                sym = self.declare(name, line)
                sym.ftype, sym.typed, sym.is_parameter, sym.parameter = ir.INTEGER, True, True, nxt
                nxt += 1

    def s_Implicit_Stmt(self, n):
        spec = n.items[0]
        if str(spec).upper() == "NONE" or spec is None:
            self.scope.implicit_none = True
            for k in self.scope.implicit:
                self.scope.implicit[k] = None
            return
        for isp in list_items(spec):
            ts, letters = isp.items
            t = self.type_spec(ts)
            for ls in list_items(letters):
                a, b = ls.items
                a = str(a).lower()
                b = str(b).lower() if b is not None else a
                for o in range(ord(a), ord(b) + 1):
                    self.scope.implicit[chr(o)] = t

    def s_Use_Stmt(self, n):
        modname = lname(n.items[2])
        line = stmt_line(n, self.src)
        self.uses.append(modname)
        mscope = self.modules.get(modname)
        lst = n.items[4] if len(n.items) > 4 else None
        is_only = len(n.items) > 3 and "ONLY" in str(n.items[3]).upper()
        names = [] if is_only else None  # None: every public name of the module
        renames = {}
        for o in list_items(lst):
            if type(o).__name__ == "Rename":
                renames[lname(o.items[1])] = lname(o.items[2])
            elif is_only:
                names.append(lname(o))
        if mscope is None:
            note = self.modules.notes.get(modname) if isinstance(self.modules, ModuleScopes) else None
            self.scope.missing_modules.setdefault(modname, (line, is_only, note or ""))
            if isinstance(self.modules, ModuleScopes):
                self.modules.missing.setdefault(modname, line)
            self.diagnostics.append(ir.Diagnostic("unknown-module", f"module {modname} is neither in this file nor in "
                                                  "the files given: the names it provides are unknown"
                                                  + (f" ({note})" if note else ""), line))
            why = (f"comes from module {modname} (USE at line {line}), which was not found: "
                   + (f"{note}; " if note else "") + "give port-fortran the file that defines it too")
            for local in list(names or []) + list(renames):
                self.scope.imported[local] = Sym(local, bad=f"{local} {why}", bad_code="unknown-module", module=modname,
                                                 line=line)
            return
        pool = dict(mscope.syms)
        pool.update(mscope.imported)
        if names is None:
            for k, s in pool.items():
                if k not in renames.values():
                    self.scope.imported[k] = s
        else:
            for k in names:
                if k in pool:
                    self.scope.imported[k] = pool[k]
        for local, remote in renames.items():
            if remote in pool:
                self.scope.imported[local] = pool[remote]
        self.scope.derived_types |= mscope.derived_types

    def s_Type_Declaration_Stmt(self, n):
        ts, attrs, entities = n.items
        line = stmt_line(n, self.src)
        kind_error = None
        try:
            base_t = self.type_spec(ts)
        except Unsup as u:
            if u.construct != "unknown-kind":
                raise
            # the names are still declared (arrays stay arrays), marked: their users are
            # refused with this reason; the statement itself is reported below
            kind_error, base_t = u, None
        dims_attr = None
        flags = {}
        flags_access = None
        for a in list_items(attrs):
            s = str(a).upper().replace(" ", "")
            if type(a).__name__ == "Dimension_Attr_Spec":
                dims_attr = self.dims(a.items[1])
            elif s.startswith("INTENT"):
                flags["intent"] = s[s.index("(") + 1:s.index(")")].lower().replace("inout", "inout")
            elif s == "PARAMETER":
                flags["parameter"] = True
            elif s == "ALLOCATABLE":
                flags["allocatable"] = True
            elif s == "SAVE":
                flags["save"] = True
            elif s == "VALUE":
                flags["value"] = True
            elif s == "OPTIONAL":
                flags["optional"] = True
            elif s == "EXTERNAL":
                flags["external"] = True
            elif s == "INTRINSIC":
                flags["intrinsic"] = True
            elif s == "POINTER":
                flags["pointer"] = True
            elif s in ("PUBLIC", "PRIVATE"):
                flags_access = s.lower()  # as an access statement naming each entity
            elif s in ("TARGET", "CONTIGUOUS", "VOLATILE", "ASYNCHRONOUS", "PROTECTED"):
                pass
            else:
                self.unsup(n, "unsupported-construct", f"attribute {a} is not modelled")
        for ent in list_items(entities):
            name = lname(ent.items[0])
            sym = self.declare(name, line)
            if flags_access is not None:
                self.access[name] = flags_access
            t = base_t
            clen = ent.items[2] if len(ent.items) > 2 else None
            if t is None:  # unknown kind: declared, marked, never typed by default
                sym.bad = f"{kind_error.reason} (declared at line {line})"
                sym.dims = self.dims(ent.items[1]) if ent.items[1] is not None else \
                    (list(dims_attr) if dims_attr is not None else None)
                sym.is_parameter = bool(flags.get("parameter"))
                for k in ("intent", "allocatable", "pointer", "value", "optional", "save"):
                    if k in flags:
                        setattr(sym, k, flags[k])
                continue
            if clen is not None and t.base == "character":
                t = FType("character", 1, self.char_len(clen))
            elif clen is not None:
                try:
                    k = int(str(clen).strip().lstrip("*"))
                    t = FType(t.base, ftypes.normalise_kind(t.base, k, True))
                except ValueError:
                    pass
            sym.ftype = t
            sym.typed = True
            if t.base == "character" and t.char_len is None:
                sym.len_runtime = _runtime_len(clen if clen is not None else ts)
                if sym.len_runtime:
                    try:
                        sym.len_expr = self.eb().expr(Fortran2003.Expr(sym.len_runtime))
                    except Exception:  # the text alone: refused where it is needed
                        sym.len_expr = None
            if ent.items[1] is not None:
                sym.dims = self.dims(ent.items[1])
            elif dims_attr is not None:
                sym.dims = list(dims_attr)
            for k, v in flags.items():
                setattr(sym, "is_parameter" if k == "parameter" else k, v)
            if flags.get("pointer"):
                self.unsup(n, "pointer", f"POINTER variable {name} is not modelled")
            init = ent.items[3] if len(ent.items) > 3 else None
            if init is not None:
                expr_node = init.items[1]
                e = self.eb().expr(expr_node)
                if flags.get("parameter"):
                    sym.parameter = self._const(e, t, name, line)
                else:
                    sym.save = True
                    try:
                        self.data_values[name] = eval_const(e, self.scope.params())
                    except Exception:
                        self.data_values[name] = None
                    if self.scope.module is None or self.scope.parent is not None:
                        value = self.data_values[name]
                        if value is None:
                            self.unsup(n, "unsupported-construct",
                                       f"initialised local {name} (implicit SAVE) with a value that is not constant")
                        else:  # like DATA: a constant table unless the routine assigns it (then SAVE state)
                            self.data_sets.append(([name], value if isinstance(value, list) else [value], n))
        if kind_error is not None:
            raise kind_error

    def _const(self, e, t, name, line):
        try:
            v = eval_const(e, self.scope.params())
        except Exception:
            self.diagnostics.append(ir.Diagnostic("unresolved-parameter", f"PARAMETER {name} could not be evaluated", line))
            return None
        if isinstance(v, list) and t is not None:
            conv = {"integer": int, "real": float, "complex": complex}.get(t.base)
            return [conv(x) for x in v] if conv else v
        if t is not None:
            if t.base == "integer" and isinstance(v, (int, float)):
                v = int(v)
            elif t.base == "real" and isinstance(v, (int, float)):
                v = float(v)
            elif t.base == "complex" and isinstance(v, (int, float, complex)):
                v = complex(v)
        return v

    def s_Parameter_Stmt(self, n):
        line = stmt_line(n, self.src)
        for d in list_items(n.items[1]):
            name = lname(d.items[0])
            sym = self.declare(name, line)
            sym.is_parameter = True
            e = self.eb().expr(d.items[1])
            t = sym.ftype or self.scope.type_of(name)
            if sym.ftype is None:
                sym.ftype = t
            sym.parameter = self._const(e, t, name, line)

    def s_Dimension_Stmt(self, n):
        line = stmt_line(n, self.src)
        for name, spec in n.items[0]:
            self.declare(lname(name), line).dims = self.dims(spec)

    def s_Intent_Stmt(self, n):
        intent = str(n.items[0]).lower().replace(" ", "")
        for x in list_items(n.items[1]):
            self.declare(lname(x), stmt_line(n, self.src)).intent = intent

    def s_Optional_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).optional = True

    def s_Value_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).value = True

    def s_Save_Stmt(self, n):
        for x in list_items(n.items[-1]) if n.items[-1] is not None else []:
            if type(x).__name__ == "Name":
                self.declare(lname(x), stmt_line(n, self.src)).save = True

    def s_External_Stmt(self, n):
        for x in list_items(n.items[-1]):
            name = lname(x)
            self.declare(name, stmt_line(n, self.src)).external = True
            self.user_functions.add(name)

    def s_Intrinsic_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).intrinsic = True

    def s_Allocatable_Stmt(self, n):
        for x in list_items(n.items[-1]):
            if type(x).__name__ == "Name":
                self.declare(lname(x), stmt_line(n, self.src)).allocatable = True
            else:
                s = self.declare(lname(x.items[0]), stmt_line(n, self.src))
                s.allocatable = True
                s.dims = self.dims(x.items[1])

    def s_Target_Stmt(self, n):
        pass

    def s_Access_Stmt(self, n):
        spec, ids = n.items
        if ids is None:
            self.access_default = str(spec).lower()
            return
        for x in list_items(ids):
            if type(x).__name__ == "Name":
                self.access[lname(x)] = str(spec).lower()

    def s_Common_Stmt(self, n):
        line = stmt_line(n, self.src)
        for blk, objs in n.items[0]:
            bname = lname(blk) if blk is not None else ""
            names = []
            for o in list_items(objs):
                if type(o).__name__ == "Common_Block_Object":
                    name = lname(o.items[0])
                    sym = self.declare(name, line)
                    sym.dims = self.dims(o.items[1])
                else:
                    name = lname(o)
                    sym = self.declare(name, line)
                sym.common = bname
                names.append(name)
            existing = [c for c in self.commons if c.name == bname]
            if existing:
                existing[0].variables += names
            else:
                self.commons.append(ir.CommonBlock(bname, names, line))

    def s_Equivalence_Stmt(self, n):
        self.unsup(n, "equivalence", "EQUIVALENCE makes variables share storage; the IR cannot model the aliasing")
        for eset in list_items(n.items[1]):
            objs = [eset.items[0]] + list_items(eset.items[1])
            names = {lname(o) if type(o).__name__ == "Name" else lname(o.items[0]) for o in objs}
            for cls in [c for c in self.equivalences if names & set(c)]:  # sets sharing a name: one class
                names |= set(cls)
                self.equivalences.remove(cls)
            self.equivalences.append(sorted(names))

    def s_Cray_Pointer_Stmt(self, n):
        self.unsup(n, "cray-pointer", "Cray POINTER is not modelled")

    def s_Pointer_Stmt(self, n):
        for x in list_items(n.items[-1]):
            nm = lname(x.items[0]) if getattr(x, "items", None) and type(x).__name__ != "Name" else lname(x)
            self.declare(nm, stmt_line(n, self.src)).pointer = True
        self.unsup(n, "pointer", "POINTER variables are not modelled")

    def s_Derived_Type_Def(self, n):
        """A type definition alone does nothing at run time (``omp_lib.h`` defines some):
        every use of the type -- a declaration, a constructor, a component -- is refused
        where it is (``derived-type``)."""
        for c in children(n):
            if type(c).__name__ == "Derived_Type_Stmt":
                self.scope.derived_types.add(lname(c.items[1]))

    def s_Data_Stmt(self, n):
        """DATA with constant values, kept for the kernel to decide (a table never assigned
        in the kernel is a constant; otherwise SAVE state). Targets are whole variables
        (``str``) or elements with constant subscripts (``(name, (i, j, ...))``), implied DO
        lists unrolled: the F77 idiom ``DATA NTRYH(1),NTRYH(2) /4,2/``."""
        eb = self.eb()
        params = self.scope.params()
        for dset in list_items(n.items[0]) if type(n.items[0]).__name__ != "Data_Stmt_Set" else list(n.items):
            objs, vals = dset.items
            targets: list = []
            try:
                for o in list_items(objs):
                    targets += self._data_targets(o, eb, dict(params))
            except (Unsup, ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
                why = exc.reason if isinstance(exc, Unsup) else f"{type(exc).__name__}: {exc}"
                self.unsup(n, "unsupported-construct", f"DATA target {objs} is not constant ({why})")
                return
            values = []
            for v in list_items(vals):
                if type(v).__name__ == "Data_Stmt_Value":
                    rep, const = v.items
                    count = int(eval_const(eb.expr(rep), params)) if rep is not None else 1
                    values += [eval_const(eb.expr(const), params)] * count
                else:
                    values.append(eval_const(eb.expr(v), params))
            self.data_sets.append((targets, values, n))

    def _data_targets(self, o, eb, env: dict) -> list:
        """The targets one DATA object stands for, in order (``env``: named constants and
        the implied-DO variables around it)."""
        kind = type(o).__name__
        if kind == "Name":
            return [lname(o)]
        if kind in ("Part_Ref", "Array_Element"):
            name = lname(o.items[0])
            subs = tuple(int(eval_const(eb.expr(x), env)) for x in list_items(o.items[1]))
            return [(name, subs)]
        if kind == "Data_Implied_Do":
            inner, var, start, end, step = o.items
            v = lname(var)
            lo, hi = int(eval_const(eb.expr(start), env)), int(eval_const(eb.expr(end), env))
            st = int(eval_const(eb.expr(step), env)) if step is not None else 1
            if st == 0:
                raise ValueError("implied DO with step 0")
            out: list = []
            for i in range(lo, hi + (1 if st > 0 else -1), st):
                for x in list_items(inner):
                    out += self._data_targets(x, eb, {**env, v: i})
            return out
        raise Unsup("unsupported-construct", f"DATA for {o} ({kind})")

    def s_Format_Stmt(self, n):
        self.unsup(n, "io-in-kernel", "FORMAT statement (I/O) inside a kernel")

    def s_Namelist_Stmt(self, n):
        self.unsup(n, "io-in-kernel", "NAMELIST (I/O) inside a kernel")

    def s_Entry_Stmt(self, n):
        self.unsup(n, "entry", "ENTRY gives the routine a second entry point; not modelled")

    def s_Interface_Block(self, n):
        for st in find_nodes(n, (Fortran2003.Subroutine_Stmt, Fortran2003.Function_Stmt)):
            name = lname(st.items[1])
            self.declare(name, stmt_line(n, self.src)).external = True
            self.user_functions.add(name)

    def s_Stmt_Function_Stmt(self, n):
        """``f(i, j) = expr`` among the declarations: a statement function, or the first
        assignment to an array the parser could not know (one from a module). Decided by
        the symbol table once the whole specification part is read."""
        self.stmt_functions.append(n)

    def statement_functions(self, sb: "StmtBuilder") -> list[ir.Stmt]:
        """Assignments for the statement-function look-alikes whose name is an array (in
        order, they run first), Unsupported nodes for the rest."""
        out: list[ir.Stmt] = []
        for n in self.stmt_functions:
            name = lname(n.items[0])
            s = self.scope.lookup(name)
            line = stmt_line(n, self.src)
            if s is not None and s.dims:
                subs = [ir.Name(lname(a), ftype=self.scope.type_of(lname(a))) for a in list_items(n.items[1])]
                try:
                    value = sb.e(n.items[2])
                except Unsup as u:
                    out.append(ir.Unsupported(u.construct, u.reason, str(n).strip(), line=line, label=stmt_label(n)))
                    continue
                target = ir.ArrayRef(name, subs, ftype=s.ftype or self.scope.type_of(name))
                out.append(ir.Assign(target, value, line=line, label=stmt_label(n)))
            elif s is not None and s.bad:
                out.append(ir.Unsupported(s.bad_code, f"{name}(...) = ... cannot be read: {s.bad}", str(n).strip(),
                                          line=line))
            else:
                problem = sb.statement_function(name, n.items[1], n.items[2])
                if problem is not None:
                    out.append(ir.Unsupported(problem.construct, problem.reason, str(n).strip(), line=line,
                                              label=stmt_label(n)))
        return out


# --------------------------------------------------------------------------- statements


def _runtime_len(sel) -> Optional[str]:
    """The text of a CHARACTER length that is neither a constant nor ``*`` (``len=n``,
    ``len=len_trim(s)``: known only at run time), else None."""
    s = str(sel).replace(" ", "").lower()
    if s.endswith("*)") or s in ("*", "(*)") or s.endswith("=*"):
        return None
    if "len=" in s:
        s = s.split("len=", 1)[1]
        s = s[:-1] if s.count(")") > s.count("(") else s
    else:
        s = s.lstrip("*")
        s = s[1:-1] if s.startswith("(") and s.endswith(")") else s
    return s or None
