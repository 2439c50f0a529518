"""The code around a parallel_for whose sequentially last iteration leaves values behind.

Arrays (``fortran/privatize.py``: NPB's COMMON scratch ``fjac``): every iteration writes
the same elements, so the last iteration -- every band variable at its upper bound --
works on the array itself (``pf::Scratch``, or ``pf::BoxScratch`` when its reads outside
what it wrote see the array from before the loop) and the others on copies of their own.

Scalars (``fortran/lastvalue.py``: a COMMON temporary, a dummy or local read after the
loop): each iteration's copy starts from the value before the loop, and the last iteration
stores its final value in a one-element View that the host copies back after the kernel
(the View starts with the value before the loop, which is what stays when the loop runs
no iteration)."""
from __future__ import annotations

from .plan import PKernel
from .symbols import cname

IND = "  "


def _scalars(em, n: PKernel) -> list:
    return [em.tab[x] for x in n.last_private if not em.tab[x].is_array]


def before(em, n: PKernel, ind: int) -> list[str]:
    """Host lines before the launch: the View each last-private scalar is handed on in."""
    out = []
    for sym in _scalars(em, n):
        em.use(sym.name)
        out.append(IND * ind + f'pf::View<{sym.ctype}> pf_last_{sym.c}("{sym.name} after the loop");')
        out.append(IND * ind + f"Kokkos::deep_copy(pf_last_{sym.c}, {sym.c});  // its value if no iteration runs")
    return out


def after(em, n: PKernel, ind: int) -> list[str]:
    """Host lines after the launch: the scalars take the last iteration's values."""
    return [IND * ind + f"Kokkos::deep_copy({sym.c}, pf_last_{sym.c});  // the last iteration's {sym.name}"
            for sym in _scalars(em, n)]


def open_block(em, n: PKernel, ind: int) -> list[str]:
    """Inside the lambda: which iteration is the last, the arrays' copies and the block in
    which they (and the scalars' copies) shadow the shared names."""
    last = " && ".join(f"{cname(d.var)} == {em.ex(d.end, em.tab[d.var].ftype, d.line)}" for d in n.band)
    out = [IND * ind + f"const bool pf_last = {last};  // the iteration that ends the loop in Fortran"]
    inner = [IND * ind + "{"]
    for x in n.last_private:
        sym = em.tab[x]
        em.use(x)
        if not sym.is_array:  # the value before the loop, captured, then the iteration's own
            out.append(IND * ind + f"const {sym.ctype} pf_first_{sym.c} = {sym.c};")
            inner.append(IND * (ind + 1) + f"{sym.ctype} {sym.c} = pf_first_{sym.c};")
            continue
        ext = ", ".join(str(e) for e in em.private_extents(sym))
        out.append(IND * ind + f"{sym.ctype}* const pf_array_{sym.c} = {sym.c}.data();")
        out.append(IND * ind + f"pf::Private<{sym.ctype}, {ext}> pf_own_{sym.c};")
        boxes = n.scratch_boxes.get(x)
        if boxes:  # reads outside what the iteration writes see the array before the loop
            lo, hi = (", ".join("{" + ", ".join(em.p.index(x, d, ends[e]) for d, ends in enumerate(box)) + "}"
                                for box in boxes) for e in (0, 1))
            em._collect()
            inner.append(IND * (ind + 1) + f"pf::BoxScratch<{sym.ctype}, {len(boxes)}, {ext}> {sym.c}("
                                           f"pf_last ? pf_array_{sym.c} : pf_own_{sym.c}.data(), pf_array_{sym.c}, "
                                           f"{{{lo}}}, {{{hi}}});")
            continue
        inner.append(IND * (ind + 1) + f"pf::Scratch<{sym.ctype}, {ext}> {sym.c}(pf_last ? pf_array_{sym.c} : "
                                       f"pf_own_{sym.c}.data());")
    return out + inner


def close_block(em, n: PKernel, ind: int) -> list[str]:
    """The end of the iteration: the last one stores its scalars, then the block closes."""
    return [IND * (ind + 1) + f"if (pf_last) pf_last_{sym.c}() = {sym.c};" for sym in _scalars(em, n)] + \
        [IND * ind + "}"]
