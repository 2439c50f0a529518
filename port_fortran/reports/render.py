"""Write ``report.json``, ``report.md`` and ``report.html`` for one run, from the run
database only.

``report.json`` follows ``report.schema.json`` (docs/report-schema.md); the Markdown and
HTML pages are Jinja2 templates over the same document. The HTML page is self-contained
(inline CSS, plots embedded as base64 PNG) so it can be mailed or attached to a ticket.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from . import sourceview
from .collect import _as_float, collect_report
from .db import RunDB
from .plots import all_plots

#: kernels that get a side-by-side source view in report.html (a page of thousands of
#: kernels would carry every routine twice); the others keep their sources in report.json
MAX_SOURCE_VIEWS = 400

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
TEMPLATES = Path(__file__).with_name("templates")


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


# --------------------------------------------------------------------------- formatting filters

def fmt_seconds(x: Any) -> str:
    f = _as_float(x)
    if f is None or not math.isfinite(f):
        return "—"
    if f == 0:
        return "0 s"
    if f < 1e-3:
        return f"{f * 1e6:.1f} µs"
    if f < 1:
        return f"{f * 1e3:.2f} ms"
    if f < 120:
        return f"{f:.1f} s"
    if f < 7200:
        return f"{int(f // 60)} min {int(f % 60):02d} s"
    return f"{int(f // 3600)} h {int(f % 3600 // 60):02d} min"


def fmt_speedup(x: Any) -> str:
    f = _as_float(x)
    return "—" if f is None or not math.isfinite(f) else f"{f:.2f}×"


def fmt_usd(x: Any) -> str:
    f = _as_float(x) or 0.0
    return f"${f:.4f}" if 0 < f < 1 else f"${f:.2f}"


def fmt_err(x: Any) -> str:
    if isinstance(x, str):
        return x.upper() if x == "nan" else x
    f = _as_float(x)
    return "—" if f is None else f"{f:.2e}"


def fmt_fixed(x: Any, digits: int = 2) -> str:
    f = _as_float(x)
    return "—" if f is None or not math.isfinite(f) else f"{f:.{digits}f}"


def fmt_percent(x: Any) -> str:
    f = _as_float(x)
    return "—" if f is None or not math.isfinite(f) else f"{100 * f:.0f}%"


def fmt_location(k: dict) -> str:
    """``file:line`` or ``file:start-end``."""
    loc = k.get("file") or "?"
    a, b = k.get("line_start"), k.get("line_end")
    if a:
        loc += f":{a}" + (f"-{b}" if b and b != a else "")
    return loc


_BARE_LINE = re.compile(r"^line (\d+):\s*")


def fmt_reason(k: dict) -> str:
    """The kernel's reason, naming the file where the reason gives only a line
    (``line 21: ...`` becomes ``relax_io.f:21: ...``)."""
    reason = k.get("reason") or ""
    m = _BARE_LINE.match(reason)
    if m and k.get("file"):
        return f"{k['file']}:{m.group(1)}: {reason[m.end():]}"
    return reason


_MD_SPECIAL = re.compile(r"([\\|`*_\[\]<>])")


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def fmt_proven(t: dict) -> str:
    """The sizes a timing's build was verified at on its backend ('reference' for the
    original Fortran)."""
    if not str(t.get("variant", "")).startswith("kokkos-"):
        return "reference"
    p = t.get("proven_sizes")
    return _sizes_text(p) if p else "not proven"


def fmt_coverage(v: dict) -> str:
    """What a verdict's cases covered beyond the spec's small sets: the boundary-crossing
    sizes (or that the spec turned them off), the timing sizes, sampled outputs."""
    parts = []
    cross = [s["sizes"] for s in v.get("size_sets", []) if s["kind"] == "cross-tiles"]
    if cross:
        parts.append("past every tile: " + "; ".join(_sizes_text(c) for c in cross))
    elif v.get("cross_tiles") is False:
        parts.append("boundary-crossing case turned off (sizes.cross_tiles: false)")
    timing = [s["sizes"] for s in v.get("size_sets", []) if s["kind"] == "timing-size"]
    if timing:
        parts.append("timing sizes: " + "; ".join(_sizes_text(t) for t in timing))
    sampled = [o["name"] for o in v.get("outputs", []) if o.get("sampled")]
    if sampled:
        parts.append("sampled: " + ", ".join(sampled))
    return "; ".join(parts) or "the spec's correctness sizes"


def md_cell(x: Any) -> str:
    """User text made safe for one Markdown table cell: one line, markup characters escaped."""
    text = " ".join(str(x).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


@lru_cache(maxsize=2)
def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=autoescape,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(seconds=fmt_seconds, speedup=fmt_speedup, usd=fmt_usd, err=fmt_err, fixed=fmt_fixed,
                       percent=fmt_percent, location=fmt_location, md=md_cell,
                       reason=fmt_reason, proven=fmt_proven, coverage=fmt_coverage)
    env.globals.update(timing_bars=timing_bars)
    return env


def timing_bars(timings: list[dict]) -> list[dict]:
    """One bar per timing, its length the median relative to the slowest (a per-kernel plot
    drawn with CSS, so the page stays light)."""
    meds = [_as_float(t["median_s"]) for t in timings]
    top = max((m for m in meds if m is not None and math.isfinite(m)), default=None)
    out = []
    for t, m in zip(timings, meds):
        pct = 100.0 * m / top if (top and m is not None and math.isfinite(m)) else 0.0
        label = f"{t['variant']} ({t['threads']} thread{'s' if t['threads'] != 1 else ''}"
        label += ", with copies)" if not t.get("kernel_only", True) else ")"
        out.append({"label": label, "pct": round(max(pct, 0.5), 1), "median_s": t["median_s"],
                    "speedup": t.get("speedup_vs_fortran_serial"),
                    "fortran": t["variant"].startswith("fortran")})
    return out


def _context(report: dict) -> dict:
    views = {}
    for i, k in enumerate(report["kernels"], start=1):
        if len(views) >= MAX_SOURCE_VIEWS:
            break
        v = sourceview.view(f"k{i}", k.get("sources"))
        if v is not None:
            views[k["kernel_id"]] = v
    return {
        "r": report,
        "s": report["summary"],
        "timed": [k for k in report["kernels"] if k["timings"]],
        "verified_rows": [k for k in report["kernels"] if k["verdicts"]],
        "unproven": sum(k.get("unproven_timings", 0) for k in report["kernels"]),
        "views": views,
        "views_capped": sum(1 for k in report["kernels"] if k.get("sources")) > len(views),
        "max_views": MAX_SOURCE_VIEWS,
        "pygments_css": sourceview.pygments_css(),
    }


def render_markdown(report: dict) -> str:
    text = _env(False).get_template("report.md.j2").render(**_context(report))
    return re.sub(r"\n{3,}", "\n\n", text)


def render_html(report: dict, plots: dict | None = None) -> str:
    plots = all_plots(report) if plots is None else plots
    return _env(True).get_template("report.html.j2").render(plots=plots, **_context(report))


def render_reports(db: RunDB, run_id: str, out_dir: Path) -> dict[str, Path]:
    """Render the three reports of ``run_id`` into ``out_dir``; returns {'json'|'md'|'html': path}."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = collect_report(db, run_id)
    paths = {"json": out_dir / "report.json", "md": out_dir / "report.md", "html": out_dir / "report.html"}
    _write(paths["json"], json.dumps(report, indent=2, allow_nan=False) + "\n")
    _write(paths["md"], render_markdown(report))
    _write(paths["html"], render_html(report))
    return paths


def _write(path: Path, text: str) -> None:
    """Write through a temporary file so a reader never sees half a report."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
