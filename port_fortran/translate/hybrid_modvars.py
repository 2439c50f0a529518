"""Module variables an outlined nest passes to the device functions it calls (hybrid ports).

A routine called inside a loop nest may read module variables (``fortran/module_reads.py``:
SNAP's ``inner_src_calc`` declares ``f0(nx)`` with ``nx`` of ``geom_module`` and reads
``lma(l)``). Outlined, the nest takes each such variable as an argument, like those it
names itself, and its calls pass them on after their own arguments (the variable, then
for an array its lower and upper bound per dimension as the nest has them). The routine's
copy passes the variable under its own name when the routine uses that variable itself,
or when the routine is a procedure of the variable's own module (host association); else
under ``pf_mv_<name>``, which a ``USE <module>, ONLY: pf_mv_<name> => <name>`` added to
the copy makes visible. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..fortran import ir
from ..fortran.common_use import call_sites
from ..fortran.module_reads import ModuleRead, Reads, Resolve, extend_call, module_reads


@dataclass
class NestReads:
    """What the nest passes: ``variables`` (nest name -> declaration) for the names the
    routine does not declare as that variable itself, ``uses`` (module, local name, name
    in the module) the copy must USE, and the calls extended so far with the variables
    only (:meth:`finish` adds the bounds); ``why``: why the nest cannot pass them."""

    variables: dict[str, ir.Variable] = field(default_factory=dict)
    uses: list[tuple[str, str, str]] = field(default_factory=list)
    why: str = ""
    _calls: list[tuple[list, int, ir.Kernel, Reads]] = field(default_factory=list)
    _local: dict[str, str] = field(default_factory=dict)  # variable name -> the nest's name
    _resolve: Optional[Resolve] = None

    def passed(self) -> list[str]:
        """The module variables passed, by their names in their modules' routines."""
        return list(self._local)

    def name_of(self, r: ModuleRead) -> ir.Expr:
        return ir.Name(self._local[r.name], ftype=r.var.ftype)

    def finish(self, dims_of: Callable[[str], list[ir.Dim]]) -> None:
        """The calls pass each array's bounds as the nest has them (``dims_of``: its
        dimensions as a nest argument)."""
        def bounds(r: ModuleRead) -> list[tuple[ir.Expr, ir.Expr]]:
            return [(d.lower if d.lower is not None else ir.Literal(1, "1", ftype=ir.INTEGER), d.upper)
                    for d in dims_of(self._local[r.name])]
        for args, n0, callee, reads in self._calls:
            del args[n0:]
            extend_call(args, callee, reads, self.name_of, bounds, self._resolve)


def nest_reads(kernel: ir.Kernel, nest: ir.Do, resolve: Resolve, fresh: Callable[[str], str]) -> NestReads:
    """Extends the calls of ``nest`` (the outlined copy: changed) with the module variables
    their callees read, by name; ``fresh(base)``: a name the routine does not use."""
    out = NestReads(_resolve=resolve)
    own = {a.name for a in kernel.args} | set(kernel.locals) | set(kernel.host_vars)
    for name, args, _line in call_sites([nest]):
        callee = resolve(kernel, name)
        if callee is None:
            continue
        reads = module_reads(callee, resolve)
        if not reads.reads:
            continue
        if reads.problems:
            out.why = f"the loop nest calls {name}, which cannot run as a device function: {reads.problems[0].message}"
            return out
        for r in reads.reads:
            if r.name not in out._local:
                why = _place(out, kernel, r, own, fresh)
                if why:
                    out.why = why
                    return out
        n0 = len(args)
        why = extend_call(args, callee, reads, out.name_of, lambda r: [], resolve)
        if why:
            out.why = f"the loop nest calls {name}: {why}"
            return out
        out._calls.append((args, n0, callee, reads))
    return out


def _place(out: NestReads, kernel: ir.Kernel, r: ModuleRead, own: set, fresh) -> str:
    """Under which name the routine's copy passes ``r`` ('' when settled, else why it cannot)."""
    mine = kernel.module_vars.get(r.name)
    if mine is not None and mine.module == r.module:
        out._local[r.name] = r.name  # the routine uses it itself: the nest has it already
        return ""
    hidden = r.name in own or mine is not None
    if kernel.module == r.module:  # a procedure of the variable's module sees it, unless it hides it
        if hidden:
            return (f"{r.owner} reads module variable '{r.name}' of {r.module}, which {kernel.name} hides behind "
                    "its own variable of that name (and cannot USE its own module)")
        out._local[r.name] = r.name
        out.variables[r.name] = r.var
        return ""
    if getattr(r.var, "private", False):
        return (f"{r.owner} reads module variable '{r.name}', PRIVATE in {r.module}: {kernel.name} cannot reach it "
                "to pass it")
    local = fresh(f"pf_mv_{r.name}")
    out._local[r.name] = local
    out.variables[local] = r.var
    out.uses.append((r.module, local, r.name))
    return ""


def use_lines(uses: list[tuple[str, str, str]], upper: bool) -> list[str]:
    """One USE statement per module for the renamed variables (statement text, no indent)."""
    by_mod: dict[str, list[str]] = {}
    for mod, local, remote in uses:
        item = f"{local} => {remote}"
        if item not in by_mod.setdefault(mod, []):
            by_mod[mod].append(item)
    out = []
    for mod, items in by_mod.items():
        text = f"use {mod}, only: {', '.join(items)}"
        out.append(text.upper() if upper else text)
    return out


__all__ = ["NestReads", "nest_reads", "use_lines"]
