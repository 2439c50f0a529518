"""Scattered updates through per-thread copies on Kokkos OpenMP (``pf::Scatter``).

An 'atomic' kernel (``x(k) = x(k) + v`` with ``k`` not a loop index: a charge deposit, a
histogram) adds with ``pf::atomic_add``. On the host OpenMP backend many threads then contend
for the same few elements; ``pf::Scatter`` (pf_kokkos_compat.hpp) lets each thread add into a
private copy of the array when the array is small next to the kernel's iterations, and sums
the copies into it after the kernel (else it stays atomic; on Kokkos Serial and the device
backends ``add`` is ``pf::atomic_add``). This module prints the set-up before the launch and
the sum after it; the emitter spells each update ``pf_sc_<x>.add(&x(...), v)``."""
from __future__ import annotations

from .symbols import const_int


def scatter_names(em, n) -> dict[str, str]:
    """Array -> the C++ name of its Scatter, for the kernel's scattered arrays (none when
    the options ask for Kokkos' own policies: then the updates are Kokkos atomics)."""
    if not n.atomic or not em.options.host_loops:
        return {}
    return {x: f"pf_sc_{em.tab[x].c}" for x in n.atomic}


def iterations(em, n) -> str:
    """The kernel's iteration count, as a C++ expression (a long)."""
    parts = []
    for d in n.band:
        t = em.tab[d.var].ftype
        lo, hi = em.ex(d.start, t, d.line), em.ex(d.end, t, d.line)
        k = const_int(d.step, em.tab) if d.step is not None else 1
        st = str(k) if k is not None else em.ex(d.step, t, d.line)
        parts.append(f"pf::trip({lo}, {hi}, {st})")
    return " * ".join(parts) or "1"


def open_lines(em, n, names: dict[str, str], pad: str) -> list[str]:
    out = []
    its = iterations(em, n) if names else ""
    for x, sc in names.items():
        sym = em.tab[x]
        out += [pad + f"static thread_local pf::ScatterStore<{sym.ctype}> {sc}_store;  // per-thread copies, kept "
                      "between calls",
                pad + f"pf::Scatter<{sym.ctype}> {sc}({sc}_store, {sym.c}.data(), static_cast<long>({sym.c}.span()), "
                      f"{its}{', true' if em.options.scatter_copies else ''});"]
    return out


def close_lines(names: dict[str, str], pad: str) -> list[str]:
    return [pad + f"{sc}.contribute();" for sc in names.values()]
