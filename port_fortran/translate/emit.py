"""Plan nodes -> C++ statements of the views-level function (and the helpers it needs:
reducer structs for loops with several reductions, KOKKOS_INLINE_FUNCTIONs for routines
of the same source). One job: print; every decision was taken by the planner."""
from __future__ import annotations

import json
from typing import Optional

from ..fortran import ir
from ..fortran.error_exits import ErrorStop
from ..fortran.render import expr_str
from ..records import TranslateOptions
from .access import names_in, scalars_written
from .blocks import fast_order
from .cexpr import ExprPrinter, function_cname
from ..fortran.fills import constant_bounds
from .plan import PHost, PIf, PKernel, PLoop, PVersion, PWhile, atomic_increment, constant_extents
from . import cstrings, last_private, outer_simd, reducers
from .work import launch_label
from .interchanged import host_form
from .scan import emit_scan
from .scatter import close_lines as scatter_close, open_lines as scatter_open, scatter_names
from .symbols import Refusal, SymbolTable, cname, const_int, cxx_type

IND = "  "


def zero_init(t: ir.FType) -> str:
    if t.base == "complex":
        return f"{cxx_type(t)}(0, 0)"
    if t.base == "character" and t.char_len != 1:
        return f"{cxx_type(t)}()"  # blank filled
    if t.base == "character":
        return "' '"
    if t.base == "real":
        return "0.0" + ("f" if t.kind == 4 else "")
    return "0"


class Emitter:
    def __init__(self, kernel: ir.Kernel, tab: SymbolTable, options: TranslateOptions,
                 callees: Optional[dict] = None):
        self.kernel = kernel
        self.tab = tab
        self.options = options
        self.p = ExprPrinter(tab)
        self.structs: list[str] = []
        self.host_used: set[str] = set()
        self.lambda_scopes: list[set[str]] = []
        self.lanes: list[ir.Do] = []  # 1-D kernels the host runs as SIMD lanes (outer_simd.py)
        self.callees = callees or {}  # name -> Kernel (same-source routines used)
        self.label = kernel.name

    # ------------------------------------------------------------------ name tracking
    def _collect(self):
        used = self.p.used
        self.p.used = set()
        if self.lambda_scopes:
            declared = set().union(*self.lambda_scopes)
            self.host_used |= {u for u in used if u not in declared}
        else:
            self.host_used |= used

    def ex(self, e: ir.Expr, want: Optional[ir.FType] = None, line: int = 0) -> str:
        self.p.line = line
        text = self.p.expr(e, want)
        self._collect()
        return text

    def cond(self, e: ir.Expr, line: int = 0) -> str:
        self.p.line = line
        text = self.p.cond(e)
        self._collect()
        return text

    def use(self, *names: str):
        self.p.used |= set(names)
        self._collect()

    # ------------------------------------------------------------------ plan nodes
    def nodes(self, nodes: list, ind: int, ctx: dict) -> list[str]:
        out: list[str] = []
        for n in nodes:
            out += self.node(n, ind, ctx)
        return out

    def node(self, n, ind: int, ctx: dict) -> list[str]:
        if isinstance(n, PHost):
            return self.stmt(n.stmt, ind, ctx)
        if isinstance(n, PIf):
            return self.if_lines(n.stmt, [lambda i, b=b: self.nodes(b, i, ctx) for b in n.branches],
                                 (lambda i: self.nodes(n.else_body, i, ctx)) if n.else_body else None, ind)
        if isinstance(n, PLoop):
            head, tail, pre = self.for_header(n.do, ind)
            inner = dict(ctx, loops=ctx.get("loops", []) + [("for", n.do.construct_name)])
            return ([IND * ind + f"// line {n.do.line}: {n.do.var} loop on the host (launches kernels)"] + head
                    + pre + self.nodes(n.body, ind + 1, inner) + tail)
        if isinstance(n, PWhile):
            inner = dict(ctx, loops=ctx.get("loops", []) + [("for", n.stmt.construct_name)])
            return ([IND * ind + f"while ({self.cond(n.stmt.cond, n.stmt.line)}) {{"]
                    + self.nodes(n.body, ind + 1, inner) + [IND * ind + "}"])
        if isinstance(n, PVersion):
            pad = IND * ind
            return ([pad + f"// line {n.do.line}: do {n.do.var} -> parallel only if {expr_str(n.cond)}; "
                     "serial otherwise (iterations may touch the same elements)",
                     pad + f"if ({self.cond(n.cond, n.do.line)}) {{"]
                    + self.node(n.parallel, ind + 1, ctx) + [pad + "} else {"]
                    + self.node(n.serial, ind + 1, ctx) + [pad + "}"])
        if isinstance(n, PKernel):
            if n.kind == "serial":
                return self.serial(n, ind)
            if n.kind == "reduce":
                return self.reduce(n, ind)
            if n.kind == "locreduce":
                return self.locreduce(n, ind)
            if n.kind == "scan":
                return emit_scan(self, n, ind)
            if n.kind == "team":
                return self.team(n, ind)
            return self.parallel_for(n, ind)
        raise TypeError(n)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: ir.Stmt, ind: int, ctx: dict) -> list[str]:
        pad = IND * ind
        if isinstance(s, ir.Assign):
            return [pad + self.assign(s, ctx)]
        if isinstance(s, ir.If):
            return self.if_lines(s, [lambda i, b=b: self.body(b, i, ctx) for _, b in s.branches],
                                 (lambda i: self.body(s.else_body, i, ctx)) if s.else_body else None, ind)
        if isinstance(s, ir.Do):
            head, tail, pre = self.for_header(s, ind)
            inner = dict(ctx, loops=ctx.get("loops", []) + [("for", s.construct_name)])
            return head + pre + self.body(s.body, ind + 1, inner) + tail
        if isinstance(s, ir.DoWhile):
            inner = dict(ctx, loops=ctx.get("loops", []) + [("for", s.construct_name)])
            return ([pad + f"while ({self.cond(s.cond, s.line)}) {{"] + self.body(s.body, ind + 1, inner)
                    + [pad + "}"])
        if isinstance(s, (ir.Cycle, ir.Exit)):
            loops = ctx.get("loops", [])
            word = "CYCLE" if isinstance(s, ir.Cycle) else "EXIT"
            if not loops:
                raise Refusal("unstructured-exit", f"{word} outside a loop of the same kernel", s.line)
            kind, cname_ = loops[-1]
            if s.construct_name and s.construct_name != cname_:
                raise Refusal("unstructured-exit", f"{word} {s.construct_name} of an outer loop", s.line)
            if kind == "lambda":
                if isinstance(s, ir.Exit):
                    raise Refusal("early-exit", "EXIT of a parallel loop", s.line)
                return [pad + "return;  // CYCLE"]
            return [pad + ("continue;" if isinstance(s, ir.Cycle) else "break;")]
        if isinstance(s, ir.Continue):
            return []
        if isinstance(s, ir.Return):
            if ctx.get("device") and not ctx.get("function"):
                raise Refusal("early-exit", "RETURN inside a kernel", s.line)
            res = ctx.get("result")
            if res:
                self.use(res)
                return [pad + f"return {cname(res)};"]
            return [pad + "return;"]
        if isinstance(s, ir.CallStmt):
            return [pad + self.call(s) + ";"]
        if isinstance(s, ErrorStop):  # a callee's error exit (fortran/error_exits.py)
            return [pad + f"pf::error_stop({json.dumps(s.message.encode('ascii', 'replace').decode())});"]
        if isinstance(s, ir.Unsupported):
            raise Refusal(s.construct, s.reason, s.line)
        raise Refusal("unsupported-construct", f"{type(s).__name__} statement", s.line)

    def body(self, stmts: list[ir.Stmt], ind: int, ctx: dict) -> list[str]:
        out = []
        for s in stmts:
            out += self.stmt(s, ind, ctx)
        return out

    def assign(self, s: ir.Assign, ctx: dict) -> str:
        t = s.target
        sym = self.tab.get(t.name)
        if sym is None:
            raise Refusal("unknown-name", f"'{t.name}' is not declared", s.line)
        if isinstance(t, ir.Name) and sym.is_array:
            raise Refusal("array-expression", f"whole-array assignment to '{t.name}' left after lowering", s.line)
        text = cstrings.assign(self, s)
        if text is not None:
            return text
        lhs = self.ex(t, line=s.line)
        if isinstance(t, ir.ArrayRef) and t.name in ctx.get("atomic", ()):
            inc = atomic_increment(s)
            if inc is None:
                raise Refusal("scattered-update", f"update of '{t.name}' is not a += form", s.line)
            op, e = inc
            val = self.ex(e, sym.ftype, s.line)
            if op == "-":
                val = f"-({val})"
            sc = ctx.get("scatter", {}).get(t.name)
            return f"{sc}.add(&{lhs}, {val});" if sc else f"pf::atomic_add(&{lhs}, {val});"
        return f"{lhs} = {self.ex(s.value, sym.ftype, s.line)};"

    def call(self, s: ir.CallStmt) -> str:
        fn = self.callees.get(s.name) or self.tab.functions.get(s.name)
        if fn is None:
            raise Refusal("call-to-unknown", f"subroutine '{s.name}' is not defined in this source file", s.line)
        if len(s.args) != len(fn.args):
            raise Refusal("call-to-unknown", f"'{s.name}' called with {len(s.args)} arguments, it has {len(fn.args)}", s.line)
        parts = []
        for a, formal in zip(s.args, fn.args):
            self.p.line = s.line
            parts.append(self.p.actual(a, formal, s.name))
            self._collect()
        return f"{function_cname(s.name)}({', '.join(parts)})"

    def if_lines(self, s: ir.If, branch_fns, else_fn, ind: int) -> list[str]:
        pad = IND * ind
        out = []
        for k, ((c, _), fn) in enumerate(zip(s.branches, branch_fns)):
            head = "if" if k == 0 else "} else if"
            out.append(pad + f"{head} ({self.cond(c, s.line)}) {{")
            out += fn(ind + 1)
        if else_fn is not None:
            out.append(pad + "} else {")
            out += else_fn(ind + 1)
        out.append(pad + "}")
        return out

    def for_header(self, do: ir.Do, ind: int):
        """(header lines, closing lines, first body lines) of a sequential C++ loop."""
        pad = IND * ind
        sym = self.tab.get(do.var)
        if sym is None or sym.ftype.base != "integer":
            raise Refusal("unsupported-loop", f"DO variable '{do.var}' is not an integer", do.line)
        t = sym.ftype
        v = sym.c
        self.use(do.var)
        lo = self.ex(do.start, t, do.line)
        hi = self.ex(do.end, t, do.line)
        body_writes = scalars_written(do.body)
        if (cstrings.names_in_value(do.end) | cstrings.names_in_value(do.start)) & body_writes:
            raise Refusal("loop-bound-modified", f"a bound of the loop over {do.var} changes inside it", do.line)
        k = const_int(do.step, self.tab)
        if k is not None and k != 0:
            if k == 1:
                head = f"for ({v} = {lo}; {v} <= {hi}; ++{v}) {{"
            elif k > 0:
                head = f"for ({v} = {lo}; {v} <= {hi}; {v} += {k}) {{"
            else:
                head = f"for ({v} = {lo}; {v} >= {hi}; {v} -= {-k}) {{"
            return [pad + head], [pad + "}"], []
        if do.step is None or names_in(do.step) & body_writes:
            raise Refusal("unsupported-loop", f"the step of the loop over {do.var} changes inside it", do.line)
        # variable step: iterate over the trip count, as Fortran does; afterwards the DO
        # variable holds Fortran's value (start + trips*step, or its value at an EXIT)
        st = self.ex(do.step, t, do.line)
        depth = ind
        kk, nn, ss, sp = f"pf_k{depth}", f"pf_n{depth}", f"pf_s{depth}", f"pf_st{depth}"
        value = f"{v} = static_cast<{cxx_type(t)}>({ss} + {kk} * {sp});"
        head = [pad + "{",  # the bounds are evaluated once, before the first iteration
                pad + f"const long {ss} = {lo}, {sp} = {st};",
                pad + f"const long {nn} = pf::trip({ss}, static_cast<long>({hi}), {sp});",
                pad + f"long {kk} = 0;",
                pad + f"for (; {kk} < {nn}; ++{kk}) {{"]
        first = [IND * (ind + 1) + value]
        tail = [pad + "}", pad + value, pad + "}"]
        return head, tail, first

    # ------------------------------------------------------------------ kernels
    def kernel_name(self, n: PKernel) -> str:
        return f'"{self.label}:L{n.line}"'

    def lambda_locals(self, names: list[str], ind: int, skip: set[str] = frozenset()) -> list[str]:
        out = []
        for nm in names:
            if nm in skip:
                continue
            sym = self.tab.get(nm)
            if sym is None:
                raise Refusal("unknown-name", f"'{nm}' is not declared", 0)
            if sym.is_array:  # a scratch array each iteration fills first (dependence.privatizable_array)
                ext = self.private_extents(sym)
                if ext is None:
                    raise Refusal("private-array", f"array '{nm}' would need a private copy per iteration", sym.line)
                out.append(IND * ind + f"pf::Private<{sym.ctype}, {', '.join(str(e) for e in ext)}> {sym.c};")
                continue
            out.append(IND * ind + f"{sym.ctype} {sym.c} = {zero_init(sym.ftype)};")
        return out

    def private_extents(self, sym) -> Optional[list[int]]:
        """Constant extents of a local array, or None."""
        return constant_extents(sym, self.kernel)

    def policy_range(self, do: ir.Do):
        """(policy text, lambda index name, first lines in the lambda)"""
        sym = self.tab.get(do.var)
        t = sym.ftype if sym is not None else ir.INTEGER
        lo = self.ex(do.start, t, do.line)
        hi = self.ex(do.end, t, do.line)
        k = const_int(do.step, self.tab)
        itype = cxx_type(t)
        if k == 1:
            self.iteration = f"({cname(do.var)} - {lo})" if lo != "0" else cname(do.var)
            return f"pf::range({lo}, {hi})", f"const {itype} {cname(do.var)}", []
        self.iteration = "pf_k"
        st = str(k) if k is not None else self.ex(do.step, t, do.line)
        if k == 0:
            raise Refusal("unsupported-loop", "DO with a zero step", do.line)
        policy = f"Kokkos::RangePolicy<pf::ExecSpace>(0, pf::trip({lo}, {hi}, {st}))"
        # a default-integer index from the trip number in int arithmetic: narrowed from a long
        # product it is not an affine subscript, and g++ neither vectorises the loop nor
        # versions it for a unit step as gfortran does (dscal with INCX: 1.6x the original
        # on one core). The trip number fits an int wherever the index does (|k| <= |k*step|).
        k_int = "static_cast<int>(pf_k)" if itype == "int" else "pf_k"
        first = [f"const {itype} {cname(do.var)} = static_cast<{itype}>({lo} + {k_int} * ({st}));"]
        return policy, "const long pf_k", first

    iteration = "pf_k"

    def induction_setup(self, n: PKernel, ind: int) -> list[str]:
        """Host lines before the kernel: the induction variables' values before the loop."""
        out = []
        for iv in n.inductions:
            sym = self.tab[iv.var]
            self.use(iv.var)
            out.append(IND * ind + f"const {sym.ctype} pf_{iv.var}0 = {sym.c};  // induction variable before the loop")
        return out

    def induction_init(self, n: PKernel, ind: int) -> list[str]:
        """Lambda lines: each induction variable from the iteration number (v0 + k*step)."""
        out = []
        for iv in n.inductions:
            sym = self.tab[iv.var]
            step = self.ex(iv.step, sym.ftype, iv.line)
            out.append(IND * ind + f"{sym.ctype} {sym.c} = pf_{iv.var}0 + static_cast<{sym.ctype}>({self.iteration}) * ({step});")
        return out

    def induction_final(self, n: PKernel, ind: int, cont_live=None) -> list[str]:
        out = []
        do = n.band[0]
        for iv in n.inductions:
            if not iv.live_after:
                continue
            sym = self.tab[iv.var]
            t = self.tab[do.var].ftype
            lo = self.ex(do.start, t, do.line)
            hi = self.ex(do.end, t, do.line)
            k = const_int(do.step, self.tab)
            st = str(k) if k is not None else self.ex(do.step, t, do.line)
            step = self.ex(iv.step, sym.ftype, iv.line)
            self.use(iv.var)
            out.append(IND * ind + f"{sym.c} = pf_{iv.var}0 + static_cast<{sym.ctype}>(pf::trip({lo}, {hi}, {st})) * ({step});")
        return out

    def loopvar_final(self, n: PKernel, ind: int) -> list[str]:
        """Fortran defines the DO variable after the loop (first value past the end): set it
        on the host where later code reads it."""
        out = []
        for do in n.band:
            if do.var not in n.live_band_vars:
                continue
            t = self.tab[do.var].ftype
            lo = self.ex(do.start, t, do.line)
            hi = self.ex(do.end, t, do.line)
            k = const_int(do.step, self.tab)
            st = str(k) if k is not None else self.ex(do.step, t, do.line)
            self.use(do.var)
            out.append(IND * ind + f"{cname(do.var)} = static_cast<{cxx_type(t)}>({lo} + pf::trip({lo}, {hi}, {st}) * ({st}));"
                       "  // the DO variable after the loop")
        return out

    def parallel_for(self, n: PKernel, ind: int) -> list[str]:
        pad = IND * ind
        do = n.band[0]
        what = {"range": "parallel_for", "mdrange": "parallel_for (MDRangePolicy)",
                "atomic": "parallel_for with atomic updates"}[n.kind]
        out = [pad + f"// line {do.line}: {' / '.join('do ' + d.var for d in n.band)} -> {what}"]
        if n.kind == "mdrange":
            band = n.band
            order = self.fast_order(band)
            los, his = [], []
            for d in order:
                t = self.tab[d.var].ftype
                los.append(self.ex(d.start, t, d.line))
                his.append(self.ex(d.end, t, d.line))
            rank = len(order)
            args = [f"const {cxx_type(self.tab[d.var].ftype)} {cname(d.var)}" for d in order]
            tile = ""
            if self.options.tile and len(self.options.tile) == rank:
                tile = ", {" + ", ".join(str(int(x)) for x in self.options.tile) + "}"
            policy = f"{self.nest_fn}<{rank}>({{{', '.join(los)}}}, {{{', '.join(his)}}}{tile})"
            first: list[str] = []
            inner_body = band[-1].body
        else:
            policy, arg, first = self.policy_range(do)
            args = [arg]
            inner_body = do.body
        scope = set(d.var for d in n.band) | set(n.private) | {i.var for i in n.inductions}
        self.lambda_scopes.append(scope)
        lines = [IND * (ind + 1) + f for f in first]
        lines += self.induction_init(n, ind + 1)
        lines += self.lambda_locals(n.private, ind + 1, skip={d.var for d in n.band} | set(n.last_private))
        scatter = scatter_names(self, n)
        ctx = {"device": True, "loops": [("lambda", do.construct_name)], "atomic": set(n.atomic), "scatter": scatter}
        if n.last_private:
            lines += last_private.open_block(self, n, ind + 1)
            lines += self.body(inner_body, ind + 2, ctx)
            lines += last_private.close_block(self, n, ind + 1)
        else:
            lines += self.body(inner_body, ind + 1, ctx)
        self.lambda_scopes.pop()
        out += last_private.before(self, n, ind)
        if n.inductions:  # a block for the induction variables' starting values
            out.append(pad + "{")
            out += self.induction_setup(n, ind + 1)
            out.append(pad + IND + f"{self.ns}::parallel_for({launch_label(self, n, inner_body)}, {policy}, KOKKOS_LAMBDA({', '.join(args)}) {{")
            out += [IND + x for x in lines]
            out.append(pad + IND + "});")
            out += self.induction_final(n, ind + 1)
            out.append(pad + "}")
        else:
            host = host_form(self, n, ind)
            kern = [pad + f"{self.ns}::parallel_for({launch_label(self, n, inner_body)}, {policy}, KOKKOS_LAMBDA({', '.join(args)}) {{"]
            kern += lines + [pad + "});"]
            lanes = not host and self.ns == "pf" and outer_simd.fits(n, self.tab) and outer_simd.versioned(kern, pad)
            self.lanes += [do] if lanes else []  # engine.py notes them
            out += (["#ifdef PF_HOST_LOOPS"] + host + ["#else"] if host else []) + (lanes or kern)
            out += ["#endif"] if host else []
        out += last_private.after(self, n, ind)
        if scatter:  # in a block: the per-thread copies set up before, summed after
            out = out[:1] + [pad + "{"] + scatter_open(self, n, scatter, pad + IND) + [IND + x for x in out[1:]] \
                + scatter_close(scatter, pad + IND) + [pad + "}"]
        out += self.loopvar_final(n, ind)
        return out

    @property
    def ns(self) -> str:
        """Where parallel_for / parallel_reduce come from: the compat header's (plain loops on
        the host backends) unless the options ask for Kokkos' policies everywhere."""
        return "pf" if self.options.host_loops else "Kokkos"

    @property
    def nest_fn(self) -> str:
        return "pf::nest" if self.options.host_loops else "pf::mdrange"

    def fast_order(self, band: list[ir.Do]) -> list[ir.Do]:
        """The band's loops ordered fastest-varying first (:func:`blocks.fast_order`; the
        harness orders a band the same way to size its boundary-crossing case)."""
        return fast_order(band, self.options.iterate_left)

    def reduce(self, n: PKernel, ind: int) -> list[str]:
        pad = IND * ind
        do = n.band[0]
        reds = n.reductions
        band_vars = {d.var for d in n.band}
        out = [pad + f"// line {do.line}: {' / '.join('do ' + d.var for d in n.band)} -> parallel_reduce ("
               + ", ".join(f"{r.op} of {r.var}" for r in reds) + ")"
               + (" (MDRangePolicy)" if len(n.band) > 1 else "")]
        body = do.body
        if len(n.band) > 1:  # one MDRange over the nest, the contiguous index fastest
            order = self.fast_order(n.band)
            los, his = [], []
            for d in order:
                t = self.tab[d.var].ftype
                los.append(self.ex(d.start, t, d.line))
                his.append(self.ex(d.end, t, d.line))
            tile = ""
            if self.options.tile and len(self.options.tile) == len(order):
                tile = ", {" + ", ".join(str(int(x)) for x in self.options.tile) + "}"
            policy = f"{self.nest_fn}<{len(order)}>({{{', '.join(los)}}}, {{{', '.join(his)}}}{tile})"
            arg = ", ".join(f"const {cxx_type(self.tab[d.var].ftype)} {cname(d.var)}" for d in order)
            first = []
            body = n.band[-1].body
        else:
            policy, arg, first = self.policy_range(do)
        self.lambda_scopes.append(band_vars | set(n.private) | {r.var for r in reds} | {i.var for i in n.inductions})
        lines = [IND * (ind + 2) + f for f in first]
        lines += self.induction_init(n, ind + 2)
        single = len(reds) == 1 and reds[0].section is None
        if single:
            r = reds[0]
            sym = self.tab[r.var]
            red_args = [arg, f"{sym.ctype}& {sym.c}"]
        else:
            struct = f"reducer_L{do.line}"
            self.structs.append(self.reducer_struct(struct, reds))
            red_args = [arg, f"{struct}::value_type& pf_acc"]
            for r in reds:
                sym = self.tab[r.var]
                # a section's accumulator has the array's shape: the body indexes it as the View
                lines.append(IND * (ind + 2) + f"{self.acc_type(r)}& {sym.c} = pf_acc.{sym.c};")
        lines += self.lambda_locals(n.private, ind + 2, skip=band_vars | {r.var for r in reds})
        ctx = {"device": True, "loops": [("lambda", do.construct_name)]}
        lines += self.body(body, ind + 2, ctx)
        self.lambda_scopes.pop()
        out.append(pad + "{")
        out += self.induction_setup(n, ind + 1)
        if single:
            r = reds[0]
            sym = self.tab[r.var]
            part = f"pf_red_{sym.name}"
            kind = {"sum": "Sum", "prod": "Prod", "min": "Min", "max": "Max"}[r.op]
            out.append(pad + IND + f"{sym.ctype} {part} = {zero_init(sym.ftype)};")
            out.append(pad + IND + f"{self.ns}::parallel_reduce({launch_label(self, n, body)}, {policy}, "
                       f"KOKKOS_LAMBDA({', '.join(red_args)}) {{")
            out += lines
            out.append(pad + IND + f"}}, Kokkos::{kind}<{sym.ctype}>({part}));")
            out.append(pad + IND + self.combine(r, part) + "  // with the value before the loop")
        else:
            struct = f"reducer_L{do.line}"
            out.append(pad + IND + f"{struct}::value_type pf_red;")
            out.append(pad + IND + f"{self.ns}::parallel_reduce({launch_label(self, n, body)}, {policy}, "
                       f"KOKKOS_LAMBDA({', '.join(red_args)}) {{")
            out += lines
            out.append(pad + IND + f"}}, {struct}(pf_red));")
            for r in reds:
                if r.section is not None:
                    out += self.combine_section(r, pad + IND, n)
                else:
                    out.append(pad + IND + self.combine(r, f"pf_red.{cname(r.var)}"))
        out += self.induction_final(n, ind + 1)
        out.append(pad + "}")
        out += self.loopvar_final(n, ind)
        return out

    def team(self, n: PKernel, ind: int) -> list[str]:
        """TeamPolicy: a team per outer iteration, the inner reduction over the team's
        threads, the statements after it once per team (Kokkos::single PerTeam)."""
        pad = IND * ind
        do = n.band[0]
        before, inner, after = n.team
        r = inner.info.reductions[0]
        sym = self.tab[r.var]
        t = self.tab[do.var].ftype
        it = cxx_type(t)
        lo = self.ex(do.start, t, do.line)
        hi = self.ex(do.end, t, do.line)
        self.lambda_scopes.append({do.var} | set(n.private))
        lines = [IND * (ind + 1) + f"const {it} {cname(do.var)} = static_cast<{it}>({lo} + pf_team.league_rank());"]
        lines += self.lambda_locals(n.private, ind + 1, skip={do.var, inner.var})
        ctx = {"device": True, "loops": []}
        lines += self.body(before, ind + 1, ctx)
        ti = self.tab[inner.var].ftype
        ilo = self.ex(inner.start, ti, inner.line)
        ihi = self.ex(inner.end, ti, inner.line)
        kind = {"sum": "Sum", "prod": "Prod", "min": "Min", "max": "Max"}[r.op]
        lines.append(IND * (ind + 1) + f"// line {inner.line}: do {inner.var} -> reduction over the team's threads")
        lines.append(IND * (ind + 1) + "{")
        lines.append(IND * (ind + 2) + f"{sym.ctype} pf_part = {zero_init(sym.ftype)};")
        lines.append(IND * (ind + 2) + f"Kokkos::parallel_reduce(Kokkos::TeamThreadRange(pf_team, {ilo}, pf::upto({ilo}, {ihi})), "
                     f"[&](const {cxx_type(ti)} {cname(inner.var)}, {sym.ctype}& {sym.c}) {{")
        lines += self.body(inner.body, ind + 3, {"device": True, "loops": [("lambda", inner.construct_name)]})
        lines.append(IND * (ind + 2) + f"}}, Kokkos::{kind}<{sym.ctype}>(pf_part));")
        lines.append(IND * (ind + 2) + self.combine(r, "pf_part"))
        lines.append(IND * (ind + 1) + "}")
        if after:
            lines.append(IND * (ind + 1) + "Kokkos::single(Kokkos::PerTeam(pf_team), [&]() {")
            lines += self.body(after, ind + 2, ctx)
            lines.append(IND * (ind + 1) + "});")
        self.lambda_scopes.pop()
        out = [pad + f"// line {do.line}: do {do.var} -> TeamPolicy (a team per {do.var}, team reduction over {inner.var})",
               pad + f"Kokkos::parallel_for({self.kernel_name(n)}, Kokkos::TeamPolicy<pf::ExecSpace>("
               f"static_cast<int>(pf::trip({lo}, {hi}, 1)), Kokkos::AUTO), "
               "KOKKOS_LAMBDA(const Kokkos::TeamPolicy<pf::ExecSpace>::member_type& pf_team) {"]
        out += lines
        out.append(pad + "});")
        out += self.loopvar_final(n, ind)
        return out

    def locreduce(self, n: PKernel, ind: int) -> list[str]:
        pad = IND * ind
        do = n.band[0]
        loc = n.loc
        vsym, isym = self.tab[loc.array or loc.value_var], self.tab[loc.index_var]
        vtype = cxx_type(vsym.ftype)  # the element type for an array's values
        struct = f"locreducer_L{do.line}"
        better = ">" if loc.op == "max" else "<"
        ident = f"pf::lowest<{vtype}>()" if loc.op == "max" else f"pf::highest<{vtype}>()"
        self.structs.append(reducers.loc_reducer(struct, do.line, loc.op, vtype, isym.ctype, better, ident))
        policy, arg, first = self.policy_range(do)
        self.lambda_scopes.append({do.var} | set(n.private))
        lines = [IND * (ind + 2) + f for f in first]
        lines += self.lambda_locals(n.private, ind + 2, skip={do.var, loc.value_var, loc.index_var})
        lines += self.body(loc.prelude, ind + 2, {"device": True, "loops": [("lambda", do.construct_name)]})
        val = self.ex(loc.value, vsym.ftype, loc.line)
        iv = cname(do.var)
        lines.append(IND * (ind + 2) + f"const {vtype} pf_v = {val};")
        lines.append(IND * (ind + 2) + f"if (pf_v {better} pf_acc.val || (pf_v == pf_acc.val && {iv} < pf_acc.loc)) {{")
        lines.append(IND * (ind + 3) + "pf_acc.val = pf_v;")
        lines.append(IND * (ind + 3) + f"pf_acc.loc = {iv};")
        lines.append(IND * (ind + 2) + "}")
        self.lambda_scopes.pop()
        self.use(*[x for x in (loc.value_var, loc.index_var) if x])
        what = f"index {loc.index_var} of the first {loc.op}imum of {loc.array}" if loc.array else \
            f"{loc.value_var} with {loc.index_var}"
        out = [pad + f"// line {do.line}: do {do.var} -> parallel_reduce ({loc.op}loc of {what})",
               pad + "{",
               pad + IND + f"{struct}::value_type pf_red;",
               pad + IND + f"{self.ns}::parallel_reduce({self.kernel_name(n)}, {policy}, "
               f"KOKKOS_LAMBDA({arg}, {struct}::value_type& pf_acc) {{"]
        out += lines
        out.append(pad + IND + f"}}, {struct}(pf_red));")
        if loc.array:  # the value at the index before the loop, read where the data is
            ref = ir.ArrayRef(loc.array, [ir.Name(loc.index_var, ftype=isym.ftype)], ftype=vsym.ftype)
            self.lambda_scopes.append(set())
            first = self.ex(ref, vsym.ftype, loc.line)
            self.lambda_scopes.pop()
            out.append(pad + IND + f"if (pf_red.loc != pf::highest<{isym.ctype}>()) {{  // the loop ran")
            out.append(pad + IND * 2 + f"{vtype} pf_before = {ident};")
            out.append(pad + IND * 2 + f'pf::DevScalar<{vtype}> pf_dev_before("{loc.array}", pf_before);')
            out.append(pad + IND * 2 + f'pf::single_for("{self.label}:L{do.line}_before", KOKKOS_LAMBDA(const int) {{')
            out.append(pad + IND * 3 + f"pf_dev_before() = {first};")
            out.append(pad + IND * 2 + "});")
            out.append(pad + IND * 2 + "pf_dev_before.to_host();")
            out.append(pad + IND * 2 + f"if (pf_red.val {better} pf_before) {{  // only a strictly better value moves the index")
            out.append(pad + IND * 3 + f"{isym.c} = pf_red.loc;")
            out.append(pad + IND * 2 + "}")
            out.append(pad + IND + "}")
            self.use(loc.array)
        else:
            out.append(pad + IND + f"if (pf_red.val {better} {vsym.c}) {{  // only a strictly better value replaces the one before the loop")
            out.append(pad + IND * 2 + f"{vsym.c} = pf_red.val;")
            out.append(pad + IND * 2 + f"{isym.c} = pf_red.loc;")
            out.append(pad + IND + "}")
        out.append(pad + "}")
        out += self.loopvar_final(n, ind)
        return out

    def combine(self, r: ir.Reduction, part: str) -> str:
        sym = self.tab[r.var]
        self.use(r.var)
        v = sym.c
        if r.op == "sum":
            return f"{v} = {v} + {part};"
        if r.op == "prod":
            return f"{v} = {v} * {part};"
        return f"{v} = pf::{r.op}<{sym.ctype}>({v}, {part});"

    def acc_type(self, r: ir.Reduction) -> str:
        """A reduction's accumulator type: the scalar's, or for a section a private copy of
        the whole (small, constant-shape) array, indexed like its View."""
        sym = self.tab[r.var]
        if r.section is None:
            return sym.ctype
        return f"pf::Private<{sym.ctype}, {', '.join(str(e) for e in self.private_extents(sym))}>"

    def combine_section(self, r: ir.Reduction, pad: str, n: PKernel) -> list[str]:
        """The section's per-thread result combined with the array's values before the loop,
        element by element over the section, in the memory space (one single-iteration
        kernel; ``pf_red`` copied in by value)."""
        sym = self.tab[r.var]
        self.use(r.var)
        lbs = [lo for lo, _ in constant_bounds(sym.dims, self.kernel.constants())]
        idx = [f"pf_q{d}" for d in range(len(r.section))]
        head = [f"for (long {q} = {lo - lb}; {q} <= {hi - lb}; ++{q})"
                for q, (lo, hi), lb in zip(idx, r.section, lbs)]
        at = f"{sym.c}({', '.join(idx)})"
        got = f"pf_red.{sym.c}({', '.join(idx)})"
        upd = {"sum": f"{at} = {at} + {got};", "prod": f"{at} = {at} * {got};"}.get(
            r.op, f"{at} = pf::{r.op}<{sym.ctype}>({at}, {got});")
        return [pad + f"pf::single_for(\"{self.label}:L{n.line}:{r.var}\", KOKKOS_LAMBDA(const int) {{"
                f"  // {r.var}: the section's results with its values before the loop",
                pad + IND + " ".join(head) + " {",
                pad + IND * 2 + upd,
                pad + IND + "}",
                pad + "});"]

    def reducer_struct(self, name: str, reds: list[ir.Reduction]) -> str:
        return reducers.scalars_reducer(name, [(self.tab[r.var].ctype, self.tab[r.var].c, r.op, r.var,
                                                None if r.section is None else self.private_extents(self.tab[r.var]))
                                               for r in reds], reds[0].line if reds else 0)

    def serial(self, n: PKernel, ind: int) -> list[str]:
        pad = IND * ind
        last = max((s.line for s in ir.walk(n.stmts)), default=n.line)
        span = f"line {n.line}" if last == n.line else f"lines {n.line}-{last}"
        out = [pad + f"// {span}: serial, in a single-iteration kernel (data stays in the memory space)"]
        views = [w for w in n.locals if w in n.copy_in or w in n.copy_out]
        self.lambda_scopes.append(set(n.locals))
        lines = []
        for w in n.locals:
            sym = self.tab[w]
            if w in n.copy_in:
                lines.append(IND * (ind + 2) + f"{sym.ctype} {sym.c} = pf_dev_{w}();")
            else:
                lines.append(IND * (ind + 2) + f"{sym.ctype} {sym.c} = {zero_init(sym.ftype)};")
        lines += self.body(n.stmts, ind + 2, {"device": True, "loops": []})
        for w in n.copy_out:
            lines.append(IND * (ind + 2) + f"pf_dev_{w}() = {self.tab[w].c};")
        self.lambda_scopes.pop()
        out.append(pad + "{")
        for w in views:
            sym = self.tab[w]
            self.use(w)
            out.append(pad + IND + f'pf::DevScalar<{sym.ctype}> pf_dev_{w}("{w}", {sym.c});')
        for w in n.copy_in:
            out.append(pad + IND + f"pf_dev_{w}.to_device();")
        out.append(pad + IND + f"pf::single_for({self.kernel_name(n)}, KOKKOS_LAMBDA(const int) {{")
        out += lines
        out.append(pad + IND + "});")
        for w in n.copy_out:
            out.append(pad + IND + f"pf_dev_{w}.to_host();")
        out.append(pad + "}")
        return out
