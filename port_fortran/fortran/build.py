"""fparser2 parse tree of a file -> ``ir.SourceFile``: program units (modules, routines,
main programs, internal procedures) built by the visitors of ``scope``, ``exprs``,
``decls`` and ``stmts``. Anything not modelled becomes an ``ir.Unsupported`` with a
construct code, a reason and the line; nothing is dropped."""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Optional

from fparser.two import Fortran2003

from . import ftypes, ir
from .reader import LineOrigin, SourceText
from .decls import DeclBuilder
from .exprs import eval_const
from .ftree import children, find_nodes, list_items, lname, raw_line, stmt_children, stmt_line
from .scope import ModuleScopes, Scope, Sym, Unsup, interface_of, internal_error
from .stmts import StmtBuilder, expr_names, first_use_line, referenced_names


_OMP_RE = re.compile(r"^\s*[!cC*]\$omp", re.IGNORECASE)


def module_entities(u, scope: Scope) -> dict[str, str]:
    """A module's names for the program model: variables, parameters, procedures (its own
    and interface bodies) and generic interfaces with their specific procedures."""
    from fparser.two.utils import walk
    out: dict[str, str] = {}
    for s in scope.syms.values():
        out[s.name] = "parameter" if s.is_parameter else ("procedure" if s.external else "variable")
    spec = [c for c in stmt_children(u) if type(c).__name__ == "Specification_Part"]
    for ib in walk(spec, (Fortran2003.Interface_Block,)):
        head = stmt_children(ib)[0] if stmt_children(ib) else None
        gen = head.items[0] if head is not None and type(head).__name__ == "Interface_Stmt" else None
        if gen is None or type(gen).__name__ != "Name":
            continue
        specific = [lname(x) for st in walk(ib, (Fortran2003.Procedure_Stmt,)) for x in list_items(st.items[0])]
        specific += [lname(st.items[1]) for st in walk(ib, (Fortran2003.Subroutine_Stmt, Fortran2003.Function_Stmt))]
        out[lname(gen)] = "generic:" + ",".join(dict.fromkeys(specific))
    for c in stmt_children(u):
        if type(c).__name__ == "Module_Subprogram_Part":
            for p in children(c):
                if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                    out.setdefault(lname(stmt_children(p)[0].items[1]), "procedure")
    return out


class FileBuilder:
    def __init__(self, src: SourceText, original_lines: list[str], modules: Optional[dict] = None,
                 module_notes: Optional[dict] = None):
        """``modules``: interfaces (``ir.ModuleInterface``) of modules defined in other files;
        ``module_notes``: why some USEd module was not taken (ambiguous, cyclic)."""
        self.src = src
        self.whole = src  # self.src is the unit being built (a slice of it)
        self.lines = original_lines
        self.modules = ModuleScopes(modules, module_notes)
        self._module_lines: dict[str, int] = {}
        self._module_uses: dict[str, list[str]] = {}
        self._module_access: dict[str, tuple[str, dict[str, str]]] = {}  # module -> (default, named)
        # module -> {PRIVATE variable initialised in its declaration: its constant value}
        self._module_inits: dict[str, dict[str, Any]] = {}
        self.user_functions: set[str] = set()
        self.out = ir.SourceFile(path=src.path, form=src.form, fixed_length=src.fixed_length,
                                 includes=list(src.includes),
                                 preprocessed=src.preprocessed)

    def build(self, tree) -> ir.SourceFile:
        return self.build_units([(self.src, tree)])

    def build_units(self, units: list) -> ir.SourceFile:
        """The IR of a file from the parse trees of its parts (``[(source slice, tree)]``,
        see ``parse.parse_units``): modules first, so USE in any unit resolves."""
        whole = self.src
        for _part, tree in units:
            for st in find_nodes(tree, (Fortran2003.Function_Stmt,)):
                self.user_functions.add(lname(st.items[1]))
        for part, tree in units:
            self.src = part
            for u in children(tree):
                if type(u).__name__ == "Module":
                    self._guard(u, self.module_scope)
        for part, tree in units:
            self.src = part
            for u in children(tree):
                cls = type(u).__name__
                if cls == "Module":
                    self._guard(u, self.module_procs)
                elif cls in ("Subroutine_Subprogram", "Function_Subprogram"):
                    self._guard(u, lambda x: self.kernel(x, Scope(), None))
                elif cls in ("Main_Program", "Main_Program0"):
                    self._guard(u, self.program)
                elif cls in ("Comment", "Block_Data"):
                    continue
                else:
                    self.out.errors.append(ir.Diagnostic("unsupported-construct", f"{cls} at file level is not modelled",
                                                         stmt_line(u, self.src), self.src.path))
        self.src = whole
        for name, scope in self.modules.own.items():
            procs = [k for k in self.out.kernels if k.module == name and k.host is None]
            self.out.interfaces[name] = interface_of(name, scope, procs, self.src.path, self._module_lines.get(name, 0),
                                                     self._module_uses.get(name, ()))
        self.out.missing_modules = dict(self.modules.missing)
        return self.out

    def _guard(self, u, fn) -> None:
        try:
            fn(u)
        except Exception as exc:  # one bad unit must not lose the others
            self.out.errors.append(ir.Diagnostic("internal-error", internal_error(type(u).__name__, exc),
                                                 stmt_line(u, self.src), self.src.path))

    def module_scope(self, u):
        kids = stmt_children(u)
        name = lname(kids[0].items[1])
        self.out.modules.append(name)
        self._module_lines[name] = stmt_line(kids[0], self.src)
        scope = Scope(None, module=name)
        for c in kids:
            if type(c).__name__ == "Specification_Part":
                db = DeclBuilder(scope, self.src, self.modules, self.user_functions)
                db.visit(c)
                self._module_uses[name] = list(db.uses)
                self._module_access[name] = (db.access_default, dict(db.access))
                self._module_inits[name] = {
                    v: val for v, val in db.data_values.items()
                    if val is not None and db.access.get(v, db.access_default) == "private"}
                for targets, _values, _node in db.data_sets:  # module state initialised by DATA
                    for t in targets:
                        scope.local(t if isinstance(t, str) else t[0]).save = True
        for s in scope.syms.values():
            s.module = name
        self.modules[name] = scope
        self.out.module_entities[name] = module_entities(u, scope)

    def module_procs(self, u):
        kids = stmt_children(u)
        name = lname(kids[0].items[1])
        scope = self.modules[name]
        for c in kids:
            if type(c).__name__ == "Module_Subprogram_Part":
                for p in children(c):
                    if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                        k = self.kernel(p, Scope(scope, module=None), name)
                        default, named = self._module_access.get(name, ("public", {}))
                        k.private = named.get(k.name, default) == "private"
        self._private_constants(name)

    def _private_constants(self, module: str) -> None:
        """A PRIVATE module variable initialised in its declaration that no procedure of the
        module assigns (only they could) is a constant table, not state (TeaLeaf's
        ``CONDUCTIVITY = 1``): its value goes to ``Variable.parameter`` in every procedure."""
        procs = [k for k in self.out.kernels if k.module == module]
        default, named = self._module_access.get(module, ("public", {}))
        for k in procs:
            for n, v in k.module_vars.items():
                v.private = v.module == module and named.get(n, default) == "private"
        inits = self._module_inits.get(module) or {}
        if not inits:
            return
        written: set[str] = set()
        for k in procs:
            written |= assigned_names(k.body, through_functions=True)
            if k.unsupported and any(u.construct not in ("save-variable",) for u in k.unsupported):
                # a statement the IR did not model (a READ, a pointer) might assign any of them
                written |= {n for n in inits if any(n in (u.text or "").lower() for u in k.unsupported)}
        for k in procs:
            for n, val in inits.items():
                v = k.module_vars.get(n)
                if v is None or n in written or v.allocatable:
                    continue
                del k.module_vars[n]
                v.parameter = list(val) if isinstance(val, list) else val
                v.save = True
                k.locals[n] = v

    def program(self, u):
        """A main program is not a kernel: its IR goes to ``program_units`` (hybrid ports
        outline its loops); its internal procedures are kernels, with the program's variables
        as host variables. A program without a PROGRAM statement is named ``main``
        (gfortran's MAIN__)."""
        kids = stmt_children(u)
        head = kids[0]
        pname = lname(head.items[1]) if type(head).__name__ == "Program_Stmt" else "main"
        self.out.programs.append(pname)
        for c in kids:
            if type(c).__name__ == "Internal_Subprogram_Part":
                for p in stmt_children(c):
                    if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                        self.out.internal_procedures.append(f"{pname}:{lname(stmt_children(p)[0].items[1])}")
        try:
            self.kernel(u, Scope(), None, program=pname)
        except Exception as exc:  # the program stays listed; what failed is its IR, kept as the reason
            line = stmt_line(head, self.src)
            why = ir.Unsupported("internal-error", internal_error("the main program", exc), line=line)
            self.out.program_units.append(ir.Kernel(pname, "program", self.src.path, line, line, unsupported=[why]))

    def _missing_include_hint(self) -> str:
        """Why a name may have no type: an INCLUDE of the file was not found."""
        names = [re.search(r"'([^']+)'", msg) for (_f, _l, code, msg) in self.whole.errors if code == "include-not-found"]
        names = list(dict.fromkeys(m.group(1) for m in names if m))
        if names:
            return (f"; it may come from include file {', '.join(names)}, which was not found (add -I DIR)")
        return ": the routine would not compile"

    def _apply_data(self, k: ir.Kernel, db: DeclBuilder, scope: Scope) -> None:
        """Locals initialised by DATA or in their declaration and never assigned in the
        kernel are constants (their values go to ``Variable.parameter``); assigned ones are
        SAVE state: Unsupported (code ``save-variable``)."""
        written = assigned_names(k.body)
        env = scope.params()
        for targets, values, node in db.data_sets:
            line = stmt_line(node, self.src)

            def refuse(code: str, why: str) -> None:
                k.unsupported.append(ir.Unsupported(code, why, str(node).strip(), line=line))

            elements: dict[str, dict[tuple, Any]] = {}  # DATA A(2), A(1) / ... /: per array
            pos = 0
            for t in targets:
                nm = t if isinstance(t, str) else t[0]
                v = k.locals.get(nm)
                if v is None or nm in written or v.common is not None:
                    state = v is not None and v.common is None  # assigned: it keeps its value between calls
                    why = "is assigned in the routine, so it keeps its value between calls (SAVE)" if state else \
                        "is an argument or COMMON variable"
                    refuse("save-variable" if state else "unsupported-construct",
                           f"{nm}, initialised (DATA or in its declaration), {why}")
                    return
                try:
                    bounds = [(int(eval_const(d.lower, env)) if d.lower is not None else 1, int(eval_const(d.upper, env)))
                              for d in v.dims]
                except Exception:
                    refuse("unsupported-construct", f"DATA for {nm} of unknown size")
                    return
                size = 1
                for lo, hi in bounds:
                    size *= hi - lo + 1
                if not isinstance(t, str):  # one element
                    subs = t[1]
                    if len(subs) != len(bounds) or any(not lo <= x <= hi for x, (lo, hi) in zip(subs, bounds)):
                        refuse("unsupported-construct", f"DATA for {nm}{list(subs)}: outside its bounds {bounds}")
                        return
                    if pos >= len(values):
                        refuse("unsupported-construct", f"DATA for {nm}: fewer values than targets")
                        return
                    elements.setdefault(nm, {})[subs] = values[pos]
                    pos += 1
                    continue
                if len(targets) == 1 and len(values) == 1 and size > 1:
                    values = values * size  # REAL :: A(10) = 0.0: every element
                chunk = values[pos:pos + size]
                pos += size
                if len(chunk) != size:
                    refuse("unsupported-construct", f"DATA for {nm}: {len(chunk)} values for {size} elements")
                    return
                _data_value(v, chunk)
            for nm, got in elements.items():
                v = k.locals[nm]
                bounds = [(int(eval_const(d.lower, env)) if d.lower is not None else 1, int(eval_const(d.upper, env)))
                          for d in v.dims]
                order = _column_major(bounds)
                if len(got) != len(order):
                    refuse("unsupported-construct", f"DATA sets {len(got)} of the {len(order)} elements of {nm}: the "
                                                    "others are undefined")
                    return
                _data_value(v, [got[ix] for ix in order])

    def kernel(self, u, scope: Scope, module: Optional[str], host: Optional[str] = None,
               host_kind: str = "routine", program: Optional[str] = None) -> ir.Kernel:
        """The IR of a subroutine or function (appended to ``kernels``), or with ``program``
        of a main program of that name (appended to ``program_units``); internal procedures
        become kernels with this unit as their host. A routine whose whole text comes from a
        file the unit includes (a header ``#include``d into a module) gets that header's
        lines and ``text_file`` (a hybrid port edits the header)."""
        header = self._header_of(u)
        if header is None:
            return self._kernel(u, scope, module, host, host_kind, program)
        saved = self.src, self.lines
        try:
            self.lines = Path(header).read_text(errors="replace").split("\n")
        except OSError:
            return self._kernel(u, scope, module, host, host_kind, program)
        self.src = _HeaderLines(self.src, header)
        try:
            k = self._kernel(u, scope, module, host, host_kind, program)
        finally:
            self.src, self.lines = saved
        k.text_file = header
        return k

    def _module_dims(self, dims: list, module: str) -> list:
        """``dims`` of a variable of ``module`` with the bounds its module's constants fix
        folded to numbers (the constants are the module's, not the routine's)."""
        ms = self.modules.get(module)
        env = ms.params() if ms is not None else {}
        if not env or not dims:
            return dims

        def fold(e):
            if e is None or isinstance(e, ir.Literal):
                return e
            try:
                val = ir.evaluate(e, env)
            except (KeyError, ValueError, TypeError, ZeroDivisionError):
                return e
            return ir.Literal(val, str(val), ftype=ir.INTEGER) if isinstance(val, int) and not isinstance(val, bool) else e

        return [dataclasses.replace(d, lower=fold(d.lower), upper=fold(d.upper)) for d in dims]

    def _header_of(self, u) -> Optional[str]:
        """The included file the unit's first and last statements both come from (None: the
        file itself, or text from several files)."""
        kids = stmt_children(u)
        first = getattr(kids[0], "item", None) if kids else None
        last = getattr(kids[-1], "item", None) if kids else None
        if first is None or last is None or not getattr(first, "span", None) or not getattr(last, "span", None):
            return None
        a, b = self.src.origin(first.span[0]), self.src.origin(last.span[1])
        if a.file != b.file or os.path.abspath(a.file) == os.path.abspath(self.src.path) or not a.main_line:
            return None
        return a.file

    def _kernel(self, u, scope: Scope, module: Optional[str], host: Optional[str], host_kind: str,
                program: Optional[str]) -> ir.Kernel:
        kids = stmt_children(u)
        head = kids[0]
        kind = "function" if type(head).__name__ == "Function_Stmt" else "subroutine"
        arg_names = []
        alt_return = False
        if program is not None:
            kind, name = "program", program
        else:
            name = lname(head.items[1])
            for a in list_items(head.items[2]):
                if str(a).strip() == "*":
                    alt_return = True
                    continue
                arg_names.append(lname(a))
        start = stmt_line(head, self.src)
        end_node = kids[-1]
        end_raw = end_node.item.span[1] if getattr(end_node, "item", None) is not None else raw_line(end_node)
        end = self.src.origin(end_raw).main_line
        k = ir.Kernel(name=name, kind=kind, file=self.src.path, line_start=start, line_end=end, module=module,
                      host=host)
        db = DeclBuilder(scope, self.src, self.modules, self.user_functions)
        result_name = name
        prefix_type = None
        if kind == "function":
            prefix, suffix = head.items[0], head.items[3]
            if prefix is not None:
                for p in prefix.items if hasattr(prefix, "items") else []:
                    for q in (p if isinstance(p, tuple) else (p,)):
                        if type(q).__name__ == "Intrinsic_Type_Spec":
                            prefix_type = q
                        elif type(q).__name__ == "Declaration_Type_Spec":
                            k.unsupported.append(ir.Unsupported("derived-type", "function of derived type", str(head), line=start))
            if suffix is not None and suffix.items and suffix.items[0] is not None:
                result_name = lname(suffix.items[0])
        for c in kids:
            if type(c).__name__ == "Specification_Part":
                db.visit(c)
        if prefix_type is not None:
            try:
                rs = scope.local(result_name)
                rs.ftype = db.type_spec(prefix_type)
                rs.typed = True
            except Unsup as u2:
                k.unsupported.append(ir.Unsupported(u2.construct, u2.reason, str(head), line=start))
        sb = StmtBuilder(scope, self.src, self.user_functions)
        sb.has_internal = any(type(c).__name__ == "Internal_Subprogram_Part" for c in kids)
        body: list[ir.Stmt] = db.statement_functions(sb)
        internal = []
        for c in kids:
            cls = type(c).__name__
            if cls == "Execution_Part":
                body = body + sb.block(children(c))
            elif cls == "Internal_Subprogram_Part":
                internal = [p for p in children(c) if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram")]
        k.body = body
        k.implicit_none = scope.implicit_none
        k.uses = db.uses
        k.commons = db.commons
        k.equivalences = [list(c) for c in db.equivalences]
        k.diagnostics = list(db.diagnostics)
        if alt_return:
            k.unsupported.append(ir.Unsupported("unsupported-construct", "alternate return argument (*)", str(head), line=start))
        k.unsupported += db.unsupported
        k.unsupported += [s for s in ir.walk(body) if isinstance(s, ir.Unsupported)]
        # arguments
        for pos, an in enumerate(arg_names):
            s = scope.syms.get(an) or Sym(an)
            t = s.ftype or scope.type_of(an)
            if t is None:
                k.diagnostics.append(ir.Diagnostic("untyped", f"argument {an} has no type (IMPLICIT NONE)", start))
                t = ftypes.default_real()
            if s.external or (an in sb.calls and not s.dims):
                k.unsupported.append(ir.Unsupported("unsupported-construct", f"procedure argument {an} is not modelled",
                                                    str(head), line=start))
            arg = ir.Argument(name=an, ftype=t, dims=list(s.dims or []), allocatable=s.allocatable, save=s.save,
                              line=s.line or start, position=pos, intent=s.intent or "inout",
                              intent_declared=s.intent is not None, value=s.value, optional=s.optional)
            if s.len_runtime:  # read by the translator (translate/checks.py), which refuses it
                arg.len_runtime = s.len_runtime
            if s.allocatable:
                k.unsupported.append(ir.Unsupported("unsupported-construct", f"allocatable argument {an} is not modelled",
                                                    str(head), line=start))
            k.args.append(arg)
        if kind == "function":
            rs = scope.syms.get(result_name) or Sym(result_name)
            rt = rs.ftype or scope.type_of(result_name)
            k.result = ir.Variable(result_name, rt or ftypes.default_real(), list(rs.dims or []), line=start)
            if rs.len_runtime:  # len=len(s): the caller computes it (translate/cstrings.result_string)
                k.result.len_runtime = rs.len_runtime
        # locals, module variables
        dim_names = []
        for sym in scope.syms.values():
            for d in sym.dims or []:
                for e in (d.lower, d.upper):
                    if e is not None:
                        dim_names += list(expr_names(e))
        names = list(scope.syms) + [n for n in referenced_names(body) + dim_names if n not in scope.syms]
        names = list(dict.fromkeys(names))
        unknown: dict[str, tuple[str, str]] = {}  # name -> (construct, reason): refused, never guessed
        wildcard = {m: ln for m, (ln, only, _note) in scope.all_missing_modules().items() if not only}
        for nm in names:
            if nm in arg_names or nm == result_name:
                continue
            s = scope.lookup(nm)
            if s is not None and s.bad and nm not in scope.syms:  # a local's bad declaration is reported already
                unknown[nm] = (s.bad_code, s.bad)
                continue
            if s is not None and (s.external or (s.intrinsic and not s.dims)):
                continue
            if s is None:
                t = scope.type_of(nm)
                if wildcard:
                    mods = ", ".join(f"{m} (USE at line {ln})" for m, ln in sorted(wildcard.items()))
                    unknown[nm] = ("unknown-module", f"{nm} is not declared here and may come from module {mods}, "
                                   "which was not found: give port-fortran the file that defines it too")
                    continue
                if t is None:
                    unknown[nm] = ("untyped", f"{nm} has no type (IMPLICIT NONE)" + self._missing_include_hint())
                    continue
                k.locals[nm] = ir.Variable(nm, t, line=start)
                continue
            t = s.ftype or scope.type_of(nm) or ftypes.default_real()
            v = ir.Variable(nm, t, list(s.dims or []), parameter=s.parameter if s.is_parameter else None,
                            allocatable=s.allocatable, save=s.save, common=s.common, module=s.module, line=s.line)
            if s.len_runtime:
                v.len_runtime = s.len_runtime
                v.len_expr = s.len_expr
            if nm in scope.syms:
                k.locals[nm] = v
            elif s.module is not None:
                if s.is_parameter:
                    k.locals[nm] = v
                else:  # its bounds name its module's constants (ipsite(ndim - 1)): their values
                    v.dims = self._module_dims(v.dims, s.module)
                    k.module_vars[nm] = v
            elif s.is_parameter:  # a host's constant: a constant here too
                k.locals[nm] = v
            else:  # host association (internal procedure): shared state, like a module variable
                k.host_vars[nm] = v
        for nm, (construct, why) in unknown.items():
            k.unsupported.append(ir.Unsupported(construct, why, nm, line=first_use_line(body, {nm}) or start))
        if k.host_vars:
            names = sorted(k.host_vars)
            k.unsupported.append(ir.Unsupported(
                "host-association", f"uses {', '.join(names)} of its host {host_kind} {host} (host association): "
                "the port cannot reach the host's variables yet; pass them as arguments",
                ", ".join(names), line=first_use_line(body, set(names)) or start))
        self._apply_data(k, db, scope)
        calls = []
        for c in sb.calls + sb.eb.called:
            if c not in calls:
                calls.append(c)
        k.calls = calls
        lines = self.lines[start - 1:end] if start and end else []
        k.source_text = "\n".join(lines)
        k.has_openmp = any(_OMP_RE.match(ln) for ln in lines)
        if host is not None:
            k.diagnostics.append(ir.Diagnostic("internal-procedure", f"{name} is an internal procedure of {host_kind} "
                                               f"{host}", start))
        if program is not None:  # a main program: not a kernel (its internal procedures are)
            self.out.program_units.append(k)
        else:
            self.out.kernels.append(k)
        if internal:
            # the routine's implicitly typed variables are host variables of its internal
            # procedures too (they are not in the scope until now)
            for nm, v in k.locals.items():
                if nm not in scope.syms:
                    sym = scope.local(nm)
                    sym.ftype = v.ftype
        for p in internal:
            self._guard(p, lambda x: self.kernel(x, Scope(scope), module, host=name, host_kind=kind))
        return k


def assigned_names(body: list[ir.Stmt], through_functions: bool = False) -> set[str]:
    """Names a body may assign: targets, DO variables, actual arguments of CALLs (the callee
    may assign its dummy), what READs and the like write; with ``through_functions`` the
    actual arguments of user functions too."""
    written: set[str] = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign):
            written.add(s.target.name)
        elif isinstance(s, ir.CallStmt):
            written |= {a.name for a in s.args if isinstance(a, (ir.Name, ir.ArrayRef))}
        elif isinstance(s, ir.Do):
            written.add(s.var)
        elif isinstance(s, ir.Unsupported) and s.writes:  # READ into it, and the like
            written |= set(s.writes)
        if through_functions:
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.FuncCall) and not x.intrinsic:
                        written |= {a.name for a in x.args if isinstance(a, (ir.Name, ir.ArrayRef))}
    return written


def _data_value(v: ir.Variable, chunk: list) -> None:
    """A variable initialised by DATA and never assigned: a constant (a table for arrays,
    in array element order)."""
    conv = {"integer": int, "real": float, "complex": complex, "logical": bool}.get(v.ftype.base, lambda x: x)
    vals = [conv(x) for x in chunk]
    v.parameter = vals if v.dims else vals[0]
    v.save = True


def _column_major(bounds: list[tuple[int, int]]) -> list[tuple]:
    """Every subscript tuple of an array with these bounds, in array element order."""
    import itertools
    ranges = [range(lo, hi + 1) for lo, hi in bounds]
    return [tuple(reversed(ix)) for ix in itertools.product(*reversed(ranges))]


class _HeaderLines:
    """The unit's text with the lines an included ``header`` brings numbered as in the
    header (``LineOrigin.main_line`` = the header's line): what a routine defined there is
    built with, so its statements carry the lines a hybrid port edits."""

    def __init__(self, src, header: str):
        self._src = src
        self._header = header

    def origin(self, line: int):
        o = self._src.origin(line)
        return LineOrigin(o.file, o.line, o.line) if o.file == self._header else o

    def __getattr__(self, name):
        return getattr(self._src, name)
