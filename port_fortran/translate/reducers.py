"""The C++ reducer structs of parallel reductions (pure text): several scalars reduced at
once (sum, prod, max, min of each), and the (value, index) pair of a maxloc/minloc whose
ties go to the lowest index, as in the Fortran loop. Kokkos' reducer concept: a
``value_type``, ``join``, ``init``, ``reference``, ``view`` (``PF_VOLATILE_JOIN`` adds
the volatile join Kokkos 3 asks for: ``pf_kokkos_compat.hpp``)."""
from __future__ import annotations

import math


def _reducer(name: str, comment: str, fields: list[str], joins: list[str], inits: list[str]) -> str:
    return "\n".join([
        comment,
        f"struct {name} {{",
        "  struct value_type {",
        *fields,
        "  };",
        f"  using reducer = {name};",
        "  using result_view_type = Kokkos::View<value_type, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;",
        "  value_type* result;",
        f"  KOKKOS_INLINE_FUNCTION explicit {name}(value_type& r) : result(&r) {{}}",
        "  template <class D, class S>",
        "  KOKKOS_INLINE_FUNCTION static void join_values(D& dest, S& src) {",
        *joins,
        "  }",
        "  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const { join_values(dest, src); }",
        "  PF_VOLATILE_JOIN(value_type)",
        "  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {",
        *inits,
        "  }",
        "  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *result; }",
        "  KOKKOS_INLINE_FUNCTION result_view_type view() const { return result_view_type(result); }",
        "  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }",
        "};",
    ])


def scalars_reducer(name: str, reds: list[tuple], line: int) -> str:
    """``reds``: (C++ type, C++ field name, op, Fortran name[, extents]) of each scalar; with
    extents, a section reduction: the field is a ``pf::Private`` array of that shape whose
    elements are each reduced."""
    fields, joins, inits = [], [], []
    for red in reds:
        t, f, op, _ = red[:4]
        ext = red[4] if len(red) > 4 else None
        if ext:
            fields.append(f"    pf::Private<{t}, {', '.join(str(e) for e in ext)}> {f};")
            loop = f"for (int pf_q = 0; pf_q < {math.prod(ext)}; ++pf_q) "
            d, sv, v = f"dest.{f}.elems[pf_q]", f"src.{f}.elems[pf_q]", f"v.{f}.elems[pf_q]"
        else:
            fields.append(f"    {t} {f};")
            loop = ""
            d, sv, v = f"dest.{f}", f"src.{f}", f"v.{f}"
        # Kokkos 3's volatile join: Kokkos::complex has no + or * of volatile values, only a
        # copy from one (pf::nv) and an assignment to one
        a, b = (f"pf::nv({d})", f"pf::nv({sv})") if "complex" in t else (d, sv)
        if op == "sum":
            joins.append(f"    {loop}{d} = {a} + {b};")
            inits.append(f"    {loop}{v} = 0;")
        elif op == "prod":
            joins.append(f"    {loop}{d} = {a} * {b};")
            inits.append(f"    {loop}{v} = 1;")
        elif op == "max":
            joins.append(f"    {loop}if ({sv} > {d}) {d} = {sv};")
            inits.append(f"    {loop}{v} = pf::lowest<{t}>();")
        else:
            joins.append(f"    {loop}if ({sv} < {d}) {d} = {sv};")
            inits.append(f"    {loop}{v} = pf::highest<{t}>();")
    what = ", ".join(f"{red[3]} ({red[2]})" + (" section" if len(red) > 4 and red[4] else "") for red in reds)
    return _reducer(name, f"// reducer of the loop at line {line}: {what}", fields, joins, inits)


def loc_reducer(name: str, line: int, op: str, vtype: str, itype: str, better: str, ident: str) -> str:
    """(value, index) of the first maximum (``better`` '>') or minimum ('<')."""
    return _reducer(
        name, f"// {op}loc reducer of the loop at line {line}: the first index wins ties, as in the Fortran loop",
        [f"    {vtype} val;", f"    {itype} loc;"],
        [f"    if (src.val {better} dest.val || (src.val == dest.val && src.loc < dest.loc)) {{",
         "      dest.val = src.val;",
         "      dest.loc = src.loc;",
         "    }"],
        [f"    v.val = {ident};", f"    v.loc = pf::highest<{itype}>();"])
