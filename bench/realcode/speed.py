"""How fast the corpus's verified ports run against their originals (``run_corpus.py --bench``).

Issue #15 asks every corpus port's Kokkos Serial time to be within 1.1x the serial
original, and Kokkos OpenMP within 1.1x the original at equal threads (its OpenMP build
where it has directives), with a geometric mean at or below 0.8x at 2 threads. With
``--bench`` each unit's ``port-fortran run`` times its verified ports (kernel-only, the
spec's timing sizes, each timed build first proven at those sizes); this module reads the
timings from the unit's run database and tabulates the ratios.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Optional

LIMIT = 1.1  # the bound on a port's time over the original's
GEOMEAN_GOAL = 0.8  # OpenMP at 2 threads, over all ports


def _pick(ts: list[dict], variant: str) -> Optional[dict]:
    """The kernel-only timing of ``variant`` (else the one with copies)."""
    for kernel_only in (1, 0):
        for t in ts:
            if t["variant"] == variant and int(t["kernel_only"]) == kernel_only:
                return t
    return None


def summarise(timings: list[dict]) -> Optional[dict]:
    """One port's timings (rows of the run database's ``timings`` table) as medians and
    ratios; None when the original or both Kokkos backends are missing."""
    fs = _pick(timings, "fortran-serial")
    fo = _pick(timings, "fortran-openmp")
    ks = _pick(timings, "kokkos-serial")
    ko = _pick(timings, "kokkos-openmp")
    if fs is None or (ks is None and ko is None):
        return None
    f_t = fo or fs
    out = {
        "fortran_serial_s": fs["median_s"], "fortran_threads_s": f_t["median_s"],
        "fortran_threads_is_openmp": fo is not None,
        "kokkos_serial_s": ks["median_s"] if ks else None, "kokkos_openmp_s": ko["median_s"] if ko else None,
        "threads": int(ko["threads"]) if ko else None,
        "sizes": fs.get("sizes") or "{}",
    }
    out["serial_ratio"] = round(ks["median_s"] / fs["median_s"], 3) if ks and fs["median_s"] > 0 else None
    out["openmp_ratio"] = round(ko["median_s"] / f_t["median_s"], 3) if ko and f_t["median_s"] > 0 else None
    return out


def by_kernel(timing_rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for t in timing_rows:
        out[t["kernel_id"]].append(t)
    return dict(out)


def geomean(xs: list[float]) -> Optional[float]:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _fmt(x: Optional[float], nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _ms(x: Optional[float]) -> str:
    return "–" if x is None else f"{x * 1e3:.3g} ms"


def speed_section(rows: list[dict], codes: list[str]) -> list[str]:
    """Markdown lines: per code how many timed ports are within the bound, the geometric
    means, and every port above it (slowest first). Empty when nothing was timed."""
    timed = [r for r in rows if r.get("status") == "verified" and r.get("timing")]
    if not timed:
        return []
    threads = sorted({r["timing"]["threads"] for r in timed if r["timing"].get("threads")})
    t_label = "/".join(str(t) for t in threads) or "?"
    lines = ["", f"## Speed of the verified ports (`--bench`: kernel-only medians, OpenMP at {t_label} threads)", "",
             f"Serial/F: Kokkos Serial over the serial original; OpenMP/F@T: Kokkos OpenMP over the original at "
             f"the same threads (its OpenMP build where it has directives, else the serial original). Issue #15's "
             f"bound: each ratio <= {LIMIT}, and the geometric mean of OpenMP/F@2 <= {GEOMEAN_GOAL}. Timings on a "
             f"shared 2-core machine move by 10-30 % between runs: read ratios near the bound as ties.", "",
             f"| code | timed | Serial/F <= {LIMIT} | geomean Serial/F | OpenMP/F@T <= {LIMIT} | geomean OpenMP/F@T |",
             "|---|---:|---:|---:|---:|---:|"]
    for c in [*codes, None]:
        sel = [r for r in timed if c is None or r["code"] == c]
        if not sel:
            continue
        s = [r["timing"]["serial_ratio"] for r in sel if r["timing"].get("serial_ratio") is not None]
        o = [r["timing"]["openmp_ratio"] for r in sel if r["timing"].get("openmp_ratio") is not None]
        name = "**total**" if c is None else c
        lines.append(f"| {name} | {len(sel)} | {sum(x <= LIMIT for x in s)} of {len(s)} | {_fmt(geomean(s))} | "
                     f"{sum(x <= LIMIT for x in o)} of {len(o)} | {_fmt(geomean(o))} |")
    slow = [r for r in timed if (r["timing"].get("serial_ratio") or 0) > LIMIT
            or (r["timing"].get("openmp_ratio") or 0) > LIMIT]
    if slow:
        slow.sort(key=lambda r: -max(r["timing"].get("serial_ratio") or 0, r["timing"].get("openmp_ratio") or 0))
        lines += ["", f"Ports above {LIMIT}x (slowest first):", "",
                  "| code | routine | patterns | sizes | Fortran serial | Kokkos Serial | Serial/F | F@T | "
                  "Kokkos OpenMP | OpenMP/F@T |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in slow:
            t = r["timing"]
            f_t = _ms(t["fortran_threads_s"]) + ("" if t["fortran_threads_is_openmp"] else " (serial)")
            lines.append(f"| {r['code']} | {r['routine']} ({r['file']}:{r['line']}) | {', '.join(r['patterns'])} | "
                         f"{t['sizes']} | {_ms(t['fortran_serial_s'])} | {_ms(t['kokkos_serial_s'])} | "
                         f"{_fmt(t['serial_ratio'])} | {f_t} | {_ms(t['kokkos_openmp_s'])} | {_fmt(t['openmp_ratio'])} |")
    return lines
