"""The C++ reducer structs of parallel reductions (pure text): several scalars reduced at
once (sum, prod, max, min of each), and the (value, index) pair of a maxloc/minloc whose
ties go to the lowest index, as in the Fortran loop. Kokkos' reducer concept: a
``value_type``, ``join``, ``init``, ``reference``, ``view`` (``PF_VOLATILE_JOIN`` adds
the volatile join Kokkos 3 asks for: ``pf_kokkos_compat.hpp``)."""
from __future__ import annotations


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


def scalars_reducer(name: str, reds: list[tuple[str, str, str, str]], line: int) -> str:
    """``reds``: (C++ type, C++ field name, op, Fortran name) of each scalar."""
    fields, joins, inits = [], [], []
    for t, f, op, _ in reds:
        fields.append(f"    {t} {f};")
        if op == "sum":
            joins.append(f"    dest.{f} = dest.{f} + src.{f};")
            inits.append(f"    v.{f} = 0;")
        elif op == "prod":
            joins.append(f"    dest.{f} = dest.{f} * src.{f};")
            inits.append(f"    v.{f} = 1;")
        elif op == "max":
            joins.append(f"    if (src.{f} > dest.{f}) dest.{f} = src.{f};")
            inits.append(f"    v.{f} = pf::lowest<{t}>();")
        else:
            joins.append(f"    if (src.{f} < dest.{f}) dest.{f} = src.{f};")
            inits.append(f"    v.{f} = pf::highest<{t}>();")
    what = ", ".join(f"{var} ({op})" for _, _, op, var in reds)
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
