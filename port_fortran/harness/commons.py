"""COMMON members as harness inputs and outputs (pure).

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
"""
from __future__ import annotations

import copy

from ..errors import UserError
from ..fortran import ir
from ..fortran_lines import wrap_free_line
from ..translate.commons import Block, blocks, used_members
from ..translate.symbols import Refusal


def _blocks(kernel: ir.Kernel) -> list[Block]:
    try:
        return blocks(kernel)
    except Refusal as r:
        d = r.diagnostic
        raise UserError(f"{kernel.file}:{d.line}: {kernel.name}: {d.message} (the harness cannot drive it)") from None


def driven_kernel(kernel: ir.Kernel) -> ir.Kernel:
    """``kernel`` with the COMMON members it uses appended to ``args`` (the kernel itself
    when it uses none). Never mutates ``kernel``."""
    if not kernel.commons:
        return kernel
    _blocks(kernel)
    members = used_members(kernel)
    if not members:
        return kernel
    k = copy.copy(kernel)
    k.args = list(kernel.args)
    for i, m in enumerate(members):
        lit = lambda v: ir.Literal(v, str(v), ftype=ir.INTEGER)  # noqa: E731
        dims = [ir.Dim(lit(lo), lit(hi)) for lo, hi in m.bounds]
        k.args.append(ir.Argument(m.name, m.ftype, dims, common=m.block, line=m.line,
                                  position=len(kernel.args) + i, intent="inout" if m.written else "in",
                                  intent_declared=True))
    return k


def is_member(a: ir.Variable) -> bool:
    return a.common is not None


def fortran_decls(kernel: ir.Kernel, prefix: str = "a_") -> list[str]:
    """Declarations of every block the kernel uses, as the kernel declares them (members
    named ``<prefix><name>``; storage association is by position, the names are free),
    as free-form lines within 132 columns."""
    out = []
    for b in _blocks(kernel):
        if not b.used():
            continue
        names = []
        for m in b.members:
            shape = "(" + ", ".join(f"{lo}:{hi}" for lo, hi in m.bounds) + ")" if m.rank else ""
            out += wrap_free_line(f"  {m.ftype.base}({m.ftype.kind}) :: {prefix}{m.name}{shape}")
            names.append(prefix + m.name)
        title = f"/{b.name}/" if b.name else "//"
        out += wrap_free_line(f"  common {title} {', '.join(names)}")  # many members: continued lines
    return out


def cpp_defs(kernel: ir.Kernel) -> list[str]:
    """C++ definitions of gfortran's symbols for the blocks the kernel uses (the port's
    ``.cpp`` declares them ``extern`` with the same struct)."""
    out = []
    for b in _blocks(kernel):
        if b.used():
            out += cpp_block_def(b)
    return out


def cpp_block_def(b) -> list[str]:
    """The C++ definition of one block's symbol (a driver, or a Python module of ports,
    defines it: the original Fortran is not linked in)."""
    out = ['extern "C" {', f"struct {b.struct} {{"]
    for m in b.members:
        out.append(f"  {m.ctype} {m.c}{f'[{m.count}]' if m.rank else ''};")
    out += ["};", f"{b.struct} {b.symbol};  // defined here: the original Fortran is not linked in",
            '}  // extern "C"']
    return out


def cpp_copies(kernel: ir.Kernel, driven: ir.Kernel) -> tuple[list[str], list[str]]:
    """(records -> blocks, blocks -> records) C++ statements, records indexed as in ``driven``."""
    symbol = {b.name: b.symbol for b in _blocks(kernel)}
    load, store = [], []
    for i, a in enumerate(driven.args):
        if not is_member(a):
            continue
        addr = f"{symbol[a.common]}.{_c(a.name)}" if a.rank else f"&{symbol[a.common]}.{_c(a.name)}"
        load.append(f"std::memcpy({addr}, R[{i}].p(), R[{i}].nbytes);")
        store.append(f"std::memcpy(R[{i}].p(), {addr}, R[{i}].nbytes);")
    return load, store


def _c(name: str) -> str:
    from ..translate.symbols import cname
    return cname(name)


def member_range(kernel: ir.Kernel, a: ir.Argument) -> list:
    """Values for an integer COMMON scalar: it may bound loops over the fixed-size COMMON
    arrays of the kernel (NDEG over COEF(0:MAXDEG)), so stay within every such array's
    first dimension; [1, 5] when the kernel uses no COMMON array."""
    arrays = [m for m in used_members(kernel) if m.rank]
    if not arrays:
        return [1, 5]
    lo = max(m.bounds[0][0] for m in arrays)
    hi = min(m.bounds[0][1] for m in arrays)
    return [lo, hi] if hi >= lo else [lo, lo]
