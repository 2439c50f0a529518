"""COMMON members and module variables as harness inputs and outputs (pure).

A kernel that uses COMMON reads (and may write) state its caller put in the block. For the
differential test the members the kernel uses become extra arguments of a *driven* kernel
(:func:`driven_kernel`): ``ir.Argument`` entries after the real arguments, with
``common`` set to the block's name, intent ``in`` (read only) or ``inout`` (written), and
their bounds resolved to integers. Spec inference, input making, comparison and the
views timer then treat them as arguments, in the same binary record format; only the
drivers differ: the Fortran driver declares the block exactly as the kernel does (every
member, in order, same types and bounds) and reads the records into it before the call;
the C++ driver *defines* gfortran's symbol for the block with the port's struct layout
(the original is not linked into it) and copies the records in and out the same way.
Module variables the routine uses are driven the same way for a routine that stays Fortran
(a hybrid port: its modern driver is the Fortran driver): the driver USEs the module and
reads the records into them before the call.
"""
from __future__ import annotations

import copy
from typing import Iterable, Optional

from ..errors import UserError
from ..fortran import ir
from ..fortran_lines import wrap_free_line, wrap_free_source
from ..translate.common_blocks import Block, blocks, used_members
from ..translate.symbols import Refusal


def _blocks(kernel: ir.Kernel) -> list[Block]:
    try:
        return blocks(kernel)
    except Refusal as r:
        d = r.diagnostic
        raise UserError(f"{kernel.file}:{d.line}: {kernel.name}: {d.message} (the harness cannot drive it)") from None


def driven_kernel(kernel: ir.Kernel, callee_reads: Iterable[str] = (),
                  callee_members: Optional[dict] = None, accepts: Iterable[tuple] = ()) -> ir.Kernel:
    """``kernel`` with the COMMON members it uses appended to ``args``, then the module
    variables it uses (``module`` set; only a routine that stays Fortran, a hybrid port, is
    driven with them: a full port refuses module variables) and those of ``callee_reads``
    its callees only read (``Kernel.callee_module_reads``: a hybrid port's nests pass them to
    their device functions, ``hybrid.json``'s ``module_reads``); ``callee_members``: members
    of its blocks that only its callees touch, each with whether one may write it
    (``harness.callee_commons``), driven with its own members; ``accepts``: more conditions
    ending the program (``Kernel.accepts``: its callees' checks, ``callee_commons.callee_checks``);
    the kernel itself when it needs none of these. Never
    mutates ``kernel``. Raises UserError for module state the harness cannot set
    (:func:`module_state_problems`)."""
    members = []
    theirs = callee_members or {}
    if kernel.commons:
        members = [m for b in _blocks(kernel) for m in b.members if m.used or m.name in theirs]
    mods = module_members(kernel, callee_reads)
    accepts = list(accepts)
    if not members and not mods and not accepts:
        return kernel
    k = copy.copy(kernel)
    k.args = list(kernel.args)
    k.accepts = list(kernel.accepts) + accepts
    lit = lambda v: ir.Literal(v, str(v), ftype=ir.INTEGER)  # noqa: E731
    for m in members:
        dims = [ir.Dim(lit(lo), lit(hi)) for lo, hi in m.bounds]
        k.args.append(ir.Argument(m.name, m.ftype, dims, common=m.block, line=m.line,
                                  position=len(k.args), intent="inout" if m.written or theirs.get(m.name) else "in",
                                  intent_declared=True))
    for name, v, bounds, written in mods:
        if bounds is None:  # allocatable: deferred shape, the driver allocates it (spec 'auto:auto')
            dims = [ir.Dim(None, None) for _ in v.dims]
        else:
            dims = [ir.Dim(lit(lo), lit(hi)) for lo, hi in bounds]
        k.args.append(ir.Argument(name, v.ftype, dims, module=v.module, line=v.line, position=len(k.args),
                                  intent="inout" if written else "in", intent_declared=True,
                                  allocatable=bounds is None,
                                  access_bounds=list(getattr(kernel, "module_bounds", {}).get(name, []))))
    return k


def is_member(a: ir.Variable) -> bool:
    """A COMMON member or a module variable driven as an argument (set by the driver
    through its block or its module, not passed)."""
    return a.common is not None or a.module is not None


def _module_variables(kernel: ir.Kernel, callee_reads: Iterable[str]) -> dict[str, ir.Variable]:
    out = dict(kernel.module_vars)
    theirs = getattr(kernel, "callee_module_reads", {})
    for n in callee_reads:
        if n in theirs:
            out.setdefault(n, theirs[n])
    return out


def module_state_problems(kernel: ir.Kernel, callee_reads: Iterable[str] = ()) -> list[str]:
    """Why the harness cannot set the module variables the kernel uses ([] when it can):
    it sets scalars and arrays of constant shape of intrinsic types through the module,
    and allocates allocatable arrays with the bounds the kernel's subscripts take.
    ``callee_reads``: those of its callees' reads it sets too (:func:`driven_kernel`)."""
    out = []
    env = {n: v.parameter for n, v in kernel.locals.items() if v.parameter is not None}
    for name, v in _module_variables(kernel, callee_reads).items():
        where = f"module variable {name} ({v.module or 'a module'})"
        if getattr(v, "private", False) and v.module != kernel.module:
            out.append(f"{where} is PRIVATE in its module: no code outside the module, the harness included, can set it")
        elif v.allocatable and v.ftype.base != "character" and v.dims:
            continue  # allocated by the driver with the bounds the kernel's subscripts take
        elif v.allocatable or any(d.assumed_shape for d in v.dims):
            out.append(f"{where} is allocatable or a pointer: the harness cannot choose its shape")
        elif v.ftype.base == "character":
            out.append(f"{where} is CHARACTER")
        elif _bounds(v, env) is None:
            out.append(f"{where} has bounds that are not constants the harness can read")
    return out


def _bounds(v: ir.Variable, env: dict):
    out = []
    for d in v.dims:
        try:
            lo = ir.evaluate(d.lower, env) if d.lower is not None else 1
            hi = ir.evaluate(d.upper, env) if d.upper is not None else None
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            return None
        if not isinstance(lo, int) or not isinstance(hi, int):
            return None
        out.append((lo, hi))
    return out


def module_members(kernel: ir.Kernel, callee_reads: Iterable[str] = ()) -> list[tuple]:
    """(name, variable, constant bounds, written) of every module variable the kernel uses
    (and of ``callee_reads`` its callees read), in the order the front end lists them.
    Raises UserError naming what cannot be set."""
    variables = _module_variables(kernel, callee_reads)
    if not variables:
        return []
    problems = module_state_problems(kernel, callee_reads)
    if problems:
        raise UserError(f"{kernel.file}:{kernel.line_start}: {kernel.name}: {problems[0]} (the harness cannot "
                        "drive it)")
    from ..translate.common_blocks import touched
    _, written = touched(kernel)
    env = {n: v.parameter for n, v in kernel.locals.items() if v.parameter is not None}
    return [(name, v, None if v.allocatable else _bounds(v, env), name in written)
            for name, v in variables.items()]


def declared_blocks(kernel: ir.Kernel) -> list[tuple[str, list[tuple[str, ir.FType, list[tuple[int, int]]]]]]:
    """(block name, [(member, type, constant bounds)]) of every block holding a member the
    driven ``kernel`` drives (arguments with ``common`` set), members in declaration order,
    read from the IR (the kernel's COMMON statements and declarations) as gfortran reads
    the source: the harness's own view, independent of the translator's layout."""
    driven = {a.common for a in kernel.args if a.common is not None}
    env = {n: v.parameter for n, v in kernel.locals.items() if v.parameter is not None}
    order: list[str] = []
    members: dict[str, list] = {}
    for cb in kernel.commons:
        if cb.name not in driven:
            continue
        if cb.name not in members:
            order.append(cb.name)
            members[cb.name] = []
        for name in cb.variables:
            v = kernel.locals.get(name)
            bounds = _bounds(v, env) if v is not None else None
            if v is None or bounds is None or v.ftype.base == "character":
                title = f"/{cb.name}/" if cb.name else "//"
                raise UserError(f"{kernel.file}:{cb.line}: {kernel.name}: COMMON {title} member '{name}' has no "
                                "type and constant bounds the harness can declare (the harness cannot drive it)")
            members[cb.name].append((name, v.ftype, bounds))
    return [(b, members[b]) for b in order]


def _shape(bounds) -> str:
    return "(" + ", ".join(f"{lo}:{hi}" for lo, hi in bounds) + ")" if bounds else ""


def fortran_decls(kernel: ir.Kernel, prefix: str = "a_") -> list[str]:
    """Declarations of every block holding a driven member, as the kernel declares them
    (members named ``<prefix><name>``; storage association is by position, the names are
    free), as free-form lines within 132 columns."""
    out = []
    for block, members in declared_blocks(kernel):
        for name, ftype, bounds in members:
            out += wrap_free_line(f"  {ftype.base}({ftype.kind}) :: {prefix}{name}{_shape(bounds)}")
        title = f"/{block}/" if block else "//"
        out += wrap_free_line(f"  common {title} {', '.join(prefix + n for n, _, _ in members)}")
    return out


def fortran_common_owner(kernel: ir.Kernel) -> str:
    """Fortran source owning the blocks for the port's driver ('' when the driven kernel
    has no COMMON member): gfortran defines each block's symbol from these declarations,
    and ``pf_set_commons(m_1, ...)`` / ``pf_get_commons(m_1, ...)`` (external names
    ``pf_set_commons_`` / ``pf_get_commons_``, every argument by reference, one per driven
    COMMON member in the order of ``kernel.args``) copy records into the block before the
    call and the written members back after it."""
    members = [a for a in kernel.args if a.common is not None]
    if not members:
        return ""
    decls = fortran_decls(kernel)
    dummies = []
    for a in members:
        bounds = [(d.lower.value, d.upper.value) for d in a.dims]
        dummies += wrap_free_line(f"  {a.ftype.base}({a.ftype.kind}) :: m_{a.name}{_shape(bounds)}")
    args = ", ".join(f"m_{a.name}" for a in members)
    sets = [f"  a_{a.name} = m_{a.name}" for a in members]
    gets = [f"  m_{a.name} = a_{a.name}" for a in members if a.intent != "in"]
    nl = "\n"
    routine = lambda name, body: (f"subroutine {name}({args})\n  implicit none\n{nl.join(dummies)}\n"  # noqa: E731
                                  f"{nl.join(decls)}\n{nl.join(body)}\nend subroutine {name}\n")
    return wrap_free_source(f"! Generated by port-fortran: the COMMON blocks {kernel.name} uses, owned by Fortran "
                            "(do not edit).\n" + routine("pf_set_commons", sets) + routine("pf_get_commons", gets))


def cpp_common_calls(kernel: ir.Kernel) -> tuple[list[str], str, str]:
    """(prototypes, call before, call after without its semicolon) for the C++ driver: the
    records of the driven COMMON members handed to :func:`fortran_common_owner`'s
    routines ([] and '' without)."""
    idx = [i for i, a in enumerate(kernel.args) if a.common is not None]
    if not idx:
        return [], "", ""
    params = ", ".join("void*" for _ in idx)
    ptrs = ", ".join(f"R[{i}].p()" for i in idx)
    protos = [f'extern "C" void pf_set_commons_({params});', f'extern "C" void pf_get_commons_({params});']
    return protos, f"pf_set_commons_({ptrs});", f"pf_get_commons_({ptrs})"


def fortran_module_uses(kernel: ir.Kernel, prefix: str = "a_") -> list[str]:
    """USE statements giving the driver the module variables driven as arguments, renamed
    ``<prefix><name>`` like the other records."""
    by_mod: dict[str, list[str]] = {}
    for a in kernel.args:
        if a.module is not None and a.common is None:
            by_mod.setdefault(a.module, []).append(f"{prefix}{a.name} => {a.name}")
    return [f"  use {m}, only: {', '.join(names)}" for m, names in by_mod.items()]


def member_range(kernel: ir.Kernel, a: ir.Argument) -> list:
    """Values for an integer COMMON or module scalar: it may bound loops over the
    fixed-size COMMON or module arrays of the kernel (NDEG over COEF(0:MAXDEG)), so stay
    within every such array's first dimension; [1, 5] when the kernel uses none."""
    bounds = [m.bounds[0] for m in used_members(kernel) if m.rank] if kernel.commons else []
    bounds += [b[0] for _, _, b, _ in module_members(kernel) if b]
    if not bounds:
        return [1, 5]
    lo = max(b[0] for b in bounds)
    hi = min(b[1] for b in bounds)
    return [lo, hi] if hi >= lo else [lo, lo]
