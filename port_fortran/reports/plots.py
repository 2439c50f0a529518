"""Plots for the HTML report, drawn from the report document with matplotlib (Agg, no
display) and returned as base64 PNG text to embed in ``<img src="data:image/png;base64,...">``.

Each function returns ``None`` when there is nothing to draw, so the page can say so
instead of showing an empty chart.
"""
from __future__ import annotations

import base64
import io
import math
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from .collect import _as_float  # noqa: E402

MAX_BARS = 40  # beyond this many kernels, plots show distributions instead of one bar per kernel
COLORS = {"ok": "#2e7d32", "failed": "#c62828", "bar": "#1565c0"}
PALETTE = ["#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#5d4037"]


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _lead_digit(v: float) -> int:
    if v <= 0:
        return 0
    return int(round(v / 10 ** math.floor(math.log10(v) + 1e-9)))


def _speedup_axis(ax) -> None:
    """Log scale labelled 0.5×, 1×, 2×, 5×, 10× ... (not 2×10⁰)."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}×" if _lead_digit(v) in (2, 5) else ""))


def _height(n: int) -> float:
    return min(max(2.2, 0.32 * n + 1.2), 30.0)


def speedup_plot(report: dict) -> Optional[str]:
    """Speedup of each Kokkos backend over the original Fortran (serial), per verified and
    timed kernel: horizontal grouped bars, log scale, a line at 1x."""
    rows = []  # (kernel name, {backend: speedup})
    backends: list[str] = []
    for k in report["kernels"]:
        sp: dict[str, float] = {}
        for t in k["timings"]:
            v = t["variant"]
            s = _as_float(t["speedup_vs_fortran_serial"])
            if v.startswith("kokkos-") and s:
                b = v[len("kokkos-"):]
                sp[b] = max(sp.get(b, 0.0), s)
                if b not in backends:
                    backends.append(b)
        if sp:
            rows.append((k["name"], sp))
    if not rows:
        return None
    if len(rows) > MAX_BARS:
        return _speedup_distribution(rows, backends)
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8, _height(n * max(1, len(backends)) * 0.6)))
    width = 0.8 / len(backends)
    for j, b in enumerate(backends):
        ys = [i + (j - (len(backends) - 1) / 2) * width for i in range(n)]
        xs = [r[1].get(b) for r in rows]
        # bars grow from 1× (no change): right for a speedup, left for a slowdown
        ax.barh([y for y, x in zip(ys, xs) if x], [x - 1.0 for x in xs if x], left=1.0, height=width,
                label=f"kokkos-{b}", color=PALETTE[j % len(PALETTE)])
    ax.axvline(1.0, color="black", lw=1)
    values = [v for r in rows for v in r[1].values()] + [1.0]
    ax.set_xlim(min(values) / 1.25, max(values) * 1.25)
    ax.set_yticks(range(n))
    ax.set_yticklabels([r[0] for r in rows])
    ax.invert_yaxis()
    _speedup_axis(ax)
    ax.set_xlabel("speedup over the original Fortran, serial (higher is better)")
    ax.legend(loc="best", fontsize="small")
    ax.grid(axis="x", alpha=0.3, which="both")
    return _png(fig)


def _speedup_distribution(rows: list, backends: list[str]) -> str:
    """Many kernels (a batch): one box per backend with every kernel as a dot."""
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.8 * len(backends)))
    data = [[r[1][b] for r in rows if b in r[1]] for b in backends]
    try:  # matplotlib >= 3.10 spells it 'orientation'; 'vert' is deprecated there
        ax.boxplot(data, orientation="horizontal", widths=0.5, showfliers=False)
    except TypeError:
        ax.boxplot(data, vert=False, widths=0.5, showfliers=False)
    for j, d in enumerate(data):
        ax.scatter(d, [j + 1] * len(d), s=8, alpha=0.5, color=PALETTE[j % len(PALETTE)], zorder=3)
    ax.set_yticks(range(1, len(backends) + 1))
    ax.set_yticklabels([f"kokkos-{b} ({len(d)} kernels)" for b, d in zip(backends, data)])
    ax.axvline(1.0, color="black", lw=1, ls="--")
    _speedup_axis(ax)
    ax.set_xlabel("speedup over the original Fortran, serial (one dot per kernel)")
    ax.grid(axis="x", alpha=0.3, which="both")
    return _png(fig)


def time_plot(report: dict) -> Optional[str]:
    """Wall time spent per kernel (translate + build + verify + bench), colored by status."""
    rows = [(k["name"], _as_float(k["duration_s"]), k["status"]) for k in report["kernels"]
            if k["duration_s"] is not None]
    if not rows:
        return None
    if len(rows) > MAX_BARS:
        fig, ax = plt.subplots(figsize=(8, 3.2))
        groups = {"verified": [], "failed or error": [], "other": []}
        for _, sec, s in rows:
            key = "verified" if s == "verified" else "failed or error" if s in ("failed", "error") else "other"
            groups[key].append(sec)
        ax.hist([groups[k] for k in groups], bins=30, stacked=True, label=list(groups),
                color=[COLORS["ok"], COLORS["failed"], "#9e9e9e"])
        ax.set_xlabel("seconds per kernel")
        ax.set_ylabel("kernels")
        ax.legend(fontsize="small")
        return _png(fig)
    fig, ax = plt.subplots(figsize=(8, _height(len(rows))))
    colors = [COLORS["ok"] if s == "verified" else COLORS["failed"] if s in ("failed", "error") else "#9e9e9e"
              for _, _, s in rows]
    ax.barh(range(len(rows)), [r[1] for r in rows], color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("seconds (green verified, red failed, grey refused or other)")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def attempts_plot(report: dict) -> Optional[str]:
    """Attempts per pipeline stage, split into succeeded and failed."""
    stages = report["stages"]
    if not stages:
        return None
    names = list(stages)
    ok = [stages[s]["ok"] for s in names]
    bad = [stages[s]["failed"] for s in names]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar(names, ok, color=COLORS["ok"], label="succeeded")
    ax.bar(names, bad, bottom=ok, color=COLORS["failed"], label="failed")
    ax.set_ylabel("attempts")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def cost_plot(report: dict) -> Optional[str]:
    """Cost in USD per model (only models that made LLM calls)."""
    models = [m for m in report["models"] if m["calls"] > 0]
    if not models:
        return None
    fig, ax = plt.subplots(figsize=(8, _height(len(models))))
    ax.barh(range(len(models)), [m["cost_usd"] for m in models], color=COLORS["bar"])
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels([m["model"] for m in models])
    ax.invert_yaxis()
    for i, m in enumerate(models):
        ax.annotate(f"${m['cost_usd']:.4f} ({m['calls']} calls)", (m["cost_usd"], i),
                    xytext=(4, 0), textcoords="offset points", va="center", fontsize="small")
    ax.set_xlabel("cost (USD)")
    ax.margins(x=0.3)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def all_plots(report: dict) -> dict[str, Optional[str]]:
    return {
        "speedup": speedup_plot(report),
        "time": time_plot(report),
        "attempts": attempts_plot(report),
        "cost": cost_plot(report),
    }
