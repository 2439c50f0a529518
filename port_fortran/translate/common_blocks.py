"""COMMON blocks as the port reaches them: gfortran's global symbol, as a C struct.

gfortran emits COMMON /blk/ as one global symbol ``blk_`` (lower case; blank COMMON is
``__BLNK__``) whose members lie in declaration order, each at the next offset that is a
multiple of its alignment (``-falign-commons``, gfortran's default; it warns "Padding of N
bytes required"): its size for 1/2/4/8-byte integers, reals and LOGICAL(4), the size of one
part for COMPLEX (a COMPLEX*16 after an INTEGER lands at offset 8, not 16). A C struct
with the same members, in the same order, has exactly that layout when a COMPLEX member is
declared as an array of its parts (``double z[2]``: ``Kokkos::complex`` is over-aligned
and would move it); the generated code ``static_assert``s every offset computed here and
copies COMPLEX members through aligned storage. CHARACTER members are refused.

Pure: the layout of the blocks a kernel declares and the members its body touches.
Used by the translator (struct, entry, views parameters) and by the harness (the members
become extra inputs/outputs, the drivers declare or define the same block)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import ir
from .access import arrays_written, reads_deep, scalars_written
from .symbols import Refusal, cname

_C_TYPES = {
    ("integer", 1): "signed char", ("integer", 2): "short", ("integer", 4): "int", ("integer", 8): "long long",
    ("real", 4): "float", ("real", 8): "double", ("logical", 4): "int",
    ("complex", 4): "float", ("complex", 8): "double",  # the type of one part: declared as [2 * count]
}


@dataclass
class Member:
    block: str
    name: str
    ftype: ir.FType
    bounds: list[tuple[int, int]]  # (lower, upper) per dimension, resolved to integers
    offset: int  # byte offset in the block
    line: int = 0
    used: bool = False  # referenced in the kernel body
    written: bool = False  # assigned (or passed to a routine) in the kernel body

    @property
    def rank(self) -> int:
        return len(self.bounds)

    @property
    def count(self) -> int:
        n = 1
        for lo, hi in self.bounds:
            n *= max(0, hi - lo + 1)
        return n

    @property
    def nbytes(self) -> int:
        return self.count * self.ftype.bytes

    @property
    def ctype(self) -> str:
        """The C type of the member's elements in the struct (one part for COMPLEX)."""
        return _C_TYPES[(self.ftype.base, self.ftype.kind)]

    @property
    def is_complex(self) -> bool:
        return self.ftype.base == "complex"

    @property
    def struct_extent(self) -> int:
        """Elements of ``ctype`` the member takes in the struct (0: a plain scalar)."""
        parts = 2 if self.is_complex else 1
        return self.count * parts if (self.rank or self.is_complex) else 0

    def declaration(self) -> str:
        """The member's line in the struct declaring the block."""
        n = self.struct_extent
        return f"{self.ctype} {self.c}{f'[{n}]' if n else ''};"

    @property
    def c(self) -> str:
        return cname(self.name)


@dataclass
class Block:
    name: str  # '' for blank COMMON
    members: list[Member] = field(default_factory=list)
    line: int = 0
    padding: int = 0  # bytes of alignment padding gfortran inserts (needs -falign-commons)

    @property
    def symbol(self) -> str:
        """gfortran's global symbol for the block."""
        return f"{self.name}_" if self.name else "__BLNK__"

    @property
    def struct(self) -> str:
        return f"pf_common_{self.name or 'blank'}"

    @property
    def title(self) -> str:
        return f"/{self.name}/" if self.name else "//"

    def used(self) -> list[Member]:
        return [m for m in self.members if m.used]


def _params(kernel: ir.Kernel) -> dict:
    return {n: v.parameter for n, v in kernel.locals.items() if v.parameter is not None}


def _const(e: Optional[ir.Expr], env: dict, default: int) -> Optional[int]:
    if e is None:
        return default
    try:
        v = ir.evaluate(e, env)
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def touched(kernel: ir.Kernel) -> tuple[set[str], set[str]]:
    """(names the body references, names it may modify). A name passed to a routine counts
    as modified (the callee may assign its dummy). Names in the bounds of the arguments'
    and locals' declarations count as referenced: they are read on entry (an argument
    ``w(nx, nelt)`` with ``nelt`` in COMMON needs ``nelt`` set)."""
    body = kernel.body
    written = scalars_written(body) | arrays_written(body)
    for s in ir.walk(body):
        if isinstance(s, ir.CallStmt):
            for a in s.args:
                if isinstance(a, (ir.Name, ir.ArrayRef)):
                    written.add(a.name)
    in_bounds: set[str] = set()
    for v in list(kernel.args) + list(kernel.locals.values()):
        for d in getattr(v, "dims", None) or []:
            for e in (d.lower, d.upper):
                if e is not None:
                    in_bounds |= {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
    return reads_deep(body) | written | in_bounds, written


def blocks(kernel: ir.Kernel) -> list[Block]:
    """The COMMON blocks the kernel declares, laid out as gfortran lays them out. Raises
    :class:`Refusal` when the layout of a block the kernel uses cannot be known for sure (a
    block it never touches is listed without members and never reached)."""
    env = _params(kernel)
    used, written = touched(kernel)
    out: list[Block] = []
    seen: dict[str, Block] = {}
    broken: dict[str, Refusal] = {}
    names: dict[str, list[str]] = {}
    for cb in kernel.commons:
        blk = seen.get(cb.name)
        if blk is None:
            blk = Block(cb.name, line=cb.line)
            seen[cb.name] = blk
            out.append(blk)
        names.setdefault(cb.name, []).extend(cb.variables)
        if cb.name in broken:
            continue
        try:
            _lay_out(kernel, blk, cb, env, used, written)
        except Refusal as r:
            broken[cb.name] = r
    for name, r in broken.items():
        # a member the front end could not read at all is refused even in an untouched block
        if set(names[name]) & used or any(v not in kernel.locals for v in names[name]):
            raise r
        seen[name].members = []
        seen[name].padding = 0
    return out


def _lay_out(kernel: ir.Kernel, blk: Block, cb: ir.CommonBlock, env: dict, used: set, written: set) -> None:
    title = blk.title
    offset = sum(m.nbytes for m in blk.members) + blk.padding
    for name in cb.variables:
        v = kernel.locals.get(name)
        if v is None:
            raise Refusal("common-block", f"COMMON {title}: member '{name}' has no declaration the "
                          "front end could read", cb.line)
        line = v.line or cb.line
        if v.parameter is not None or v.allocatable:
            raise Refusal("common-block", f"COMMON {title}: member '{name}' is a PARAMETER or ALLOCATABLE", line)
        if (v.ftype.base, v.ftype.kind) not in _C_TYPES:
            raise Refusal("common-block", f"COMMON {title}: member '{name}' of type {v.ftype}: its layout "
                          "in the block cannot be matched by a C struct for sure", line)
        bounds = []
        for d, dim in enumerate(v.dims):
            lo = _const(dim.lower, env, 1)
            hi = _const(dim.upper, env, 0) if dim.upper is not None else None
            if lo is None or hi is None or dim.assumed_shape:
                raise Refusal("common-block", f"COMMON {title}: member '{name}' has a dimension ({d + 1}) "
                              "whose size is not a constant", line)
            bounds.append((lo, hi))
        align = v.ftype.kind if v.ftype.base == "complex" else v.ftype.bytes
        if offset % align:
            pad = align - offset % align
            blk.padding += pad
            offset += pad
        m = Member(blk.name, name, v.ftype, bounds, offset, line, name in used, name in written)
        blk.members.append(m)
        offset += m.nbytes


def used_members(kernel: ir.Kernel) -> list[Member]:
    """Members of every COMMON block that the kernel's body references, blocks in the order
    they are first declared, members in declaration order: the extra (trailing) parameters
    of ``<k>_kokkos_views`` and the extra records of the harness, in this order."""
    return [m for b in blocks(kernel) for m in b.used()]


def struct_decl(blk: Block) -> list[str]:
    """C++ lines declaring gfortran's symbol for the block (``extern``: the Fortran program,
    or the harness driver, defines it) and checking the layout at compile time."""
    lines = ['extern "C" {', f"// COMMON {blk.title} as gfortran lays it out (global symbol {blk.symbol})",
             f"struct {blk.struct} {{"]
    for m in blk.members:
        dims = "".join(f"  /* {lo}:{hi} */" for lo, hi in m.bounds)
        cx = "  /* COMPLEX: (re, im) pairs */" if m.is_complex else ""
        lines.append(f"  {m.declaration()}{dims}{cx}")
    lines += ["};", f"extern {blk.struct} {blk.symbol};", '}  // extern "C"']
    for m in blk.members:
        lines.append(f"static_assert(offsetof({blk.struct}, {m.c}) == {m.offset}, "
                     f"\"COMMON {blk.title}: {m.name} is not where gfortran puts it\");")
    return lines


def struct_def(blk: Block) -> list[str]:
    """C++ lines *defining* gfortran's symbol for the block with this layout: for a Python
    module of ports, where no Fortran object defines it. (The harness never does this: its
    driver links a Fortran object that owns the block, so the layout is checked.)"""
    out = ['extern "C" {', f"struct {blk.struct} {{"]
    for m in blk.members:
        out.append(f"  {m.declaration()}")
    out += ["};", f"{blk.struct} {blk.symbol};  // defined here: no Fortran object defines it",
            '}  // extern "C"']
    return out


def notes(kernel: ir.Kernel) -> list[str]:
    out = []
    for b in blocks(kernel):
        used = b.used()
        if not used:
            out.append(f"COMMON {b.title} declared but not used: not touched")
            continue
        read = [m.name for m in used if not m.written]
        wrote = [m.name for m in used if m.written]
        parts = []
        if read:
            parts.append("read " + ", ".join(read))
        if wrote:
            parts.append("read and written back " + ", ".join(wrote))
        pad = (f"; layout has {b.padding} byte(s) of alignment padding (gfortran's default -falign-commons; "
               "the legacy build must not use -fno-align-commons)") if b.padding else ""
        out.append(f"COMMON {b.title} reached through the global symbol {b.symbol}: {'; '.join(parts)}{pad}")
    return out
