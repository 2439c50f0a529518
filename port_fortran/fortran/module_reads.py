"""Module variables a routine only reads, passed in (pure over the IR).

F90 codes keep their sizes and tables in modules: a routine called for each (k, j) of a
loop nest declares its dummies ``REAL, DIMENSION(nx) :: f0`` with ``nx`` from ``USE
geom_module`` and reads ``lma(l)`` of another module. Such a routine can still run as a
device function of an outlined loop nest (a hybrid port, ``translate/hybrid.py``): the
nest takes the module variables as arguments, as it takes those it names itself, and
passes them on to the device function as extra trailing arguments.

* :func:`module_reads` -- the module variables a routine and every routine it calls,
  transitively, read (each once: its own in the front end's order, then its callees' in
  call order), and why they cannot be passed:
  a routine that writes one (assigns it, loops over it, passes it to a dummy that is not
  intent in, reads into it), a CHARACTER or pointer one, two different variables of one
  name, a routine whose own name hides one its callee reads;
* :func:`extra_arguments` -- what the reads become after a routine's own arguments: the
  variable (intent in), and for an array its lower and upper bound per dimension
  (``pf_lb<d>_<name>``, ``pf_ub<d>_<name>``: an allocatable module array's bounds are
  known where the nest is launched, not before);
* :func:`with_module_reads` -- the copy of a routine taking those extra arguments and
  passing them on in its own calls: what its device function is made of;
* :func:`extend_call` -- one call's actual arguments with them.

Derived-type components and pointers never reach here: the front end keeps statements
using them as ``ir.Unsupported``, which keep a routine from being a device function. A
full port still refuses module variables (its kernel cannot reach them:
``translate/checks.py``); only an outlined nest, which the Fortran launches with the
variables in scope, passes them.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import ir
from .common_use import Resolve, call_sites, common_reads, writes
from .stmts import first_use_line


@dataclass
class ModuleRead:
    """One module variable read: the name the routines use and its declaration
    (``module`` set); ``owner``: the routine that reads it (the first found)."""

    name: str
    var: ir.Variable
    owner: str = ""
    routine: Optional[ir.Kernel] = field(default=None, repr=False, compare=False)  # the owner's IR

    @property
    def module(self) -> str:
        return self.var.module or ""

    def bound_names(self) -> list[tuple[str, str]]:
        return [(f"pf_lb{d}_{self.name}", f"pf_ub{d}_{self.name}") for d in range(1, len(self.var.dims) + 1)]


@dataclass
class Reads:
    """What :func:`module_reads` finds: the variables, and the reasons (with the routine's
    file and line) they cannot be passed -- empty when they can."""

    reads: list[ModuleRead] = field(default_factory=list)
    problems: list[ir.Diagnostic] = field(default_factory=list)

    def names(self) -> list[str]:
        return [r.name for r in self.reads]


def own_reads(k: ir.Kernel, resolve: Optional[Resolve] = None) -> Reads:
    """The module variables ``k`` itself reads, and why it cannot pass those it does not
    only read (or that are no numbers a device function takes)."""
    out = Reads()
    changed = writes(k, set(k.module_vars), resolve)
    for n, v in k.module_vars.items():
        where = f"module variable '{n}' of {v.module}"
        if n in changed:
            line, how = changed[n]
            out.problems.append(ir.Diagnostic("module-variable", f"{k.name} writes {where} (line {line}: {how}): a "
                                              "device function may read module state, not change it", line, k.file))
        elif v.ftype.base == "character" or (any(d.assumed_shape for d in v.dims) and not v.allocatable):
            what = "CHARACTER (a device function takes numbers)" if v.ftype.base == "character" else \
                "a pointer array (its target is not known where the nest starts)"
            line = first_use_line(k.body, {n}) or k.line_start
            out.problems.append(ir.Diagnostic("module-variable", f"{k.name} reads {where} (line {line}), which is "
                                              f"{what}", line, k.file))
        else:
            out.reads.append(ModuleRead(n, v, k.name, k))
    return out


def module_reads(k: ir.Kernel, resolve: Resolve, _stack: tuple = ()) -> Reads:
    """The module variables ``k`` and the routines it calls (through ``resolve``;
    recursion stops where it starts again) read, and the problems (see the module
    docstring). Routines no file defines add nothing here (other checks refuse them)."""
    key = (str(k.file), k.name)
    if key in _stack:
        return Reads()
    out = own_reads(k, resolve)
    seen = {r.name: r for r in out.reads}
    mine = {a.name for a in k.args} | set(k.locals) | set(k.host_vars) | {k.name}
    if k.result is not None:
        mine.add(k.result.name)
    for name in dict.fromkeys(k.calls):
        callee = resolve(k, name)
        if callee is None:
            continue
        inner = module_reads(callee, resolve, _stack + (key,))
        out.problems += inner.problems
        for r in inner.reads:
            have = seen.get(r.name)
            if have is not None:
                if have.module != r.module:
                    out.problems.append(ir.Diagnostic(
                        "module-variable", f"{have.owner} reads '{r.name}' of module {have.module} and {r.owner} "
                        f"'{r.name}' of module {r.module}: two variables of one name cannot both be passed",
                        k.line_start, k.file))
                continue
            if r.name in mine or r.name in k.module_vars:
                out.problems.append(ir.Diagnostic(
                    "module-variable", f"{k.name} has its own '{r.name}', which hides module variable '{r.name}' of "
                    f"{r.module} that its callee {r.owner} reads (it could not pass it on)", k.line_start, k.file))
                continue
            seen[r.name] = r
            out.reads.append(r)
    taken = {a.name for a in k.args} | set(k.locals)
    for r in out.reads:
        for lb, ub in r.bound_names():
            if lb in taken or ub in taken:
                out.problems.append(ir.Diagnostic("module-variable", f"{k.name} has a variable named {lb} or {ub}, "
                                                  f"the names the bounds of module array '{r.name}' are passed "
                                                  "under", k.line_start, k.file))
    return out


def extra_arguments(reads: list[ModuleRead], first: int) -> list[ir.Argument]:
    """The arguments the reads become, from position ``first`` on: each variable (intent
    in; an array with the dimensions its bound arguments give), an array followed by its
    bound arguments."""
    out: list[ir.Argument] = []
    for r in reads:
        v = r.var
        bounds = r.bound_names()
        dims = [ir.Dim(ir.Name(lb, ftype=ir.INTEGER), ir.Name(ub, ftype=ir.INTEGER)) for lb, ub in bounds]
        out.append(ir.Argument(r.name, v.ftype, dims, module=None, line=v.line, position=first + len(out),
                               intent="in", intent_declared=True))
        for lb, ub in bounds:
            for b in (lb, ub):
                out.append(ir.Argument(b, ir.INTEGER, [], line=v.line, position=first + len(out), intent="in",
                                       intent_declared=True))
    return out


def extra_actuals(reads: list[ModuleRead], name_of: Callable[[ModuleRead], ir.Expr],
                  bounds_of: Callable[[ModuleRead], list[tuple[ir.Expr, ir.Expr]]]) -> list[ir.Expr]:
    """The actual arguments a call passes for :func:`extra_arguments`: ``name_of(read)``
    for each variable, then for an array ``bounds_of(read)``, (lower, upper) per dimension."""
    out: list[ir.Expr] = []
    for r in reads:
        out.append(name_of(r))
        if r.var.dims:
            for lo, hi in bounds_of(r):
                out += [lo, hi]
    return out


def extend_call(args: list[ir.Expr], callee: ir.Kernel, reads: Reads,
                name_of: Callable[[ModuleRead], ir.Expr],
                bounds_of: Callable[[ModuleRead], list[tuple[ir.Expr, ir.Expr]]],
                resolve: Optional[Resolve] = None) -> str:
    """Appends to ``args`` (a call of ``callee``, whose COMMON reads the call passes
    already: ``effects.pass_common_reads``) the actual arguments of the module variables
    ``callee`` reads. '' when done (or nothing to pass), else why not."""
    if not reads.reads:
        return ""
    if reads.problems:
        return reads.problems[0].message
    expected = len(callee.args) + len(common_reads(callee, resolve) or [])
    if len(args) != expected:
        return (f"the call of {callee.name} passes {len(args)} arguments, not the {expected} its module variables "
                "would follow")
    args.extend(extra_actuals(reads.reads, name_of, bounds_of))
    return ""


def _own_bounds(r: ModuleRead) -> list[tuple[ir.Expr, ir.Expr]]:
    return [(ir.Name(lb, ftype=ir.INTEGER), ir.Name(ub, ftype=ir.INTEGER)) for lb, ub in r.bound_names()]


def with_module_reads(k: ir.Kernel, resolve: Resolve) -> tuple[ir.Kernel, Optional[ir.Diagnostic]]:
    """A copy of ``k`` whose module reads (:func:`module_reads`) are trailing arguments
    (:func:`extra_arguments`) and whose calls pass the reads of their callees on under
    the same names, and None; ``k`` itself when it reads none, with why not when it
    cannot pass them."""
    reads = module_reads(k, resolve)
    if reads.problems:
        return k, reads.problems[0]
    if not reads.reads:
        return k, None
    out = copy.copy(k)
    out.module_vars = {n: v for n, v in k.module_vars.items() if n not in set(reads.names())}
    out.args = list(k.args) + extra_arguments(reads.reads, len(k.args))
    out.body = copy.deepcopy(k.body)
    for name, args, _line in call_sites(out.body):
        callee = resolve(k, name)
        if callee is None:
            continue
        why = extend_call(args, callee, module_reads(callee, resolve), lambda r: ir.Name(r.name, ftype=r.var.ftype),
                          _own_bounds, resolve)
        if why:
            return k, ir.Diagnostic("module-variable", f"{k.name} cannot pass on the module variables {name} reads: "
                                    f"{why}", _line, k.file)
    return out, None
