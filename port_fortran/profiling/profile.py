"""Read the JSON the profiling hooks write, and condense it for prompts and reports.

A profile lists Kokkos kernels (parallel_for / parallel_reduce / parallel_scan, by label),
deep copies (summarised per destination and source memory space), profile regions and,
on request, fences. Ports label their kernels ``"<kernel>:L<line>"`` (the Fortran line of
the loop), so :attr:`KernelProfile.line` maps a time back to the original source.
Kernels Kokkos launches itself (``Kokkos::View::initialization [x]``, ``Kokkos::ViewFill``)
are kept: zeroing a fresh View each call is a real cost the optimizer can remove.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from .hooks import ProfileMissing, ProfilingError

KERNEL_KINDS = ("parallel_for", "parallel_reduce", "parallel_scan")
_LINE_RE = re.compile(r":L(\d+)\b")


@dataclass(frozen=True)
class KernelProfile:
    """Accumulated times of one kernel label (or one deep-copy direction, region, fence)."""

    name: str
    kind: str  # parallel_for | parallel_reduce | parallel_scan | deep_copy | region | fence
    count: int
    total_s: float
    mean_s: float
    min_s: float
    max_s: float
    bytes: int = 0  # deep copies only
    skipped: int = 0  # completions left out as warm-up (PF_KOKKOSP_WARMUP), not in the times

    @property
    def line(self) -> Optional[int]:
        """The Fortran line in a ``"<kernel>:L<line>"`` label, else None."""
        m = _LINE_RE.search(self.name)
        return int(m.group(1)) if m else None

    @property
    def is_kernel(self) -> bool:
        return self.kind in KERNEL_KINDS

    @property
    def internal(self) -> bool:
        """Launched by Kokkos itself (View initialisation, fills, copies)."""
        return self.name.startswith("Kokkos::")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["line"] = self.line
        return d


@dataclass
class Profile:
    """One profile file: its entries plus what the run said about itself."""

    entries: list[KernelProfile]
    wall_s: float = 0.0  # from Kokkos initialisation to the write
    finalized: bool = True  # False: the program exited without Kokkos::finalize()
    metadata: dict[str, str] = field(default_factory=dict)
    open_at_end: int = 0  # kernels begun and never ended (a crash or an exit mid-kernel)
    warmup: int = 0  # completions of each entry left out of the times

    @property
    def kokkos_version(self) -> Optional[str]:
        return self.metadata.get("Kokkos Version")


def _entry(d: dict, kind: str, name: str) -> KernelProfile:
    count = int(d.get("count", 0))
    total = float(d.get("total_s", 0.0))
    return KernelProfile(name=name, kind=kind, count=count, total_s=total,
                         mean_s=total / count if count else 0.0,
                         min_s=float(d.get("min_s", 0.0)), max_s=float(d.get("max_s", 0.0)),
                         bytes=int(d.get("bytes", 0)), skipped=int(d.get("skipped", 0)))


def _sorted(entries: Iterable[KernelProfile]) -> list[KernelProfile]:
    return sorted(entries, key=lambda e: (-e.total_s, e.kind, e.name))


def load_profile(path: Union[str, Path], include_fences: bool = False) -> Profile:
    """Parse one profile file. Raises :class:`ProfileMissing` when it is absent and
    :class:`ProfilingError` when it is not a profile."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ProfileMissing(
            f"{p}: no Kokkos profile was written (the program did not initialise Kokkos, "
            "Kokkos was built without tools/libdl support, or the program was killed)") from None
    try:
        doc = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError as e:
        raise ProfilingError(f"{p}: not a readable profile ({e})") from None
    if not isinstance(doc, dict) or doc.get("tool") != "pf_kokkosp":
        raise ProfilingError(f"{p}: not a profile written by the port-fortran hooks")
    try:
        entries = [_entry(k, str(k["kind"]), str(k["name"])) for k in doc.get("kernels", [])]
        for c in doc.get("deep_copies", []):
            entries.append(_entry(c, "deep_copy", f"deep_copy {c['src_space']}->{c['dst_space']}"))
        entries += [_entry(r, "region", str(r["name"])) for r in doc.get("regions", [])]
        if include_fences:
            entries += [_entry(f, "fence", str(f["name"])) for f in doc.get("fences", [])]
    except (KeyError, TypeError, ValueError) as e:
        raise ProfilingError(f"{p}: malformed profile entry ({e!r})") from None
    meta = doc.get("metadata") or {}
    return Profile(entries=_sorted(entries), wall_s=float(doc.get("wall_s", 0.0)),
                   finalized=bool(doc.get("finalized", True)),
                   metadata={str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {},
                   open_at_end=int(doc.get("open_at_end", 0)), warmup=int(doc.get("warmup", 0)))


def read_profile(path: Union[str, Path], include_fences: bool = False) -> list[KernelProfile]:
    """The entries of a profile file, largest total time first (see :func:`load_profile`)."""
    return load_profile(path, include_fences).entries


def merge(profiles: Iterable[Sequence[KernelProfile]]) -> list[KernelProfile]:
    """Combine the profiles of several runs (e.g. one per repeat) entry by entry."""
    acc: dict[tuple[str, str], KernelProfile] = {}
    for prof in profiles:
        for e in prof:
            k = (e.kind, e.name)
            o = acc.get(k)
            if o is None:
                acc[k] = e
                continue
            count, total = o.count + e.count, o.total_s + e.total_s
            mins = [x.min_s for x in (o, e) if x.count]
            acc[k] = KernelProfile(e.name, e.kind, count, total, total / count if count else 0.0,
                                   min(mins) if mins else 0.0, max(o.max_s, e.max_s),
                                   o.bytes + e.bytes, o.skipped + e.skipped)
    return _sorted(acc.values())


def kernel_times(profiles: Sequence[KernelProfile], top: int = 10, stat: str = "mean_s") -> dict[str, float]:
    """``{label: seconds}`` for the ``top`` kernels by total time (``stat``: mean_s,
    total_s, min_s or max_s), the shape the optimizer prompt's ``profile`` takes."""
    if stat not in ("mean_s", "total_s", "min_s", "max_s"):
        raise ValueError(f"unknown stat {stat!r}")
    ks = _sorted(e for e in profiles if e.is_kernel and e.count)
    return {e.name: getattr(e, stat) for e in (ks[:top] if top else ks)}


def fmt_seconds(s: float) -> str:
    """A time with a unit chosen for three significant digits: 1.23 s, 45.6 ms, 789 us, 12 ns."""
    a = abs(s)
    if a >= 1.0:
        return f"{s:.3g} s"
    if a >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if a >= 1e-6:
        return f"{s * 1e6:.3g} us"
    return f"{s * 1e9:.3g} ns"


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def summarize(profiles: Union[Profile, Sequence[KernelProfile]], top: int = 10) -> str:
    """Plain-text lines for the optimizer prompt and the reports: a headline, then the
    ``top`` kernels by total time with their share, launches and per-launch times, then
    the deep copies and regions."""
    entries = profiles.entries if isinstance(profiles, Profile) else list(profiles)
    warm_only = sorted(e.name for e in entries if e.is_kernel and not e.count and e.skipped)
    skipped = sum(e.skipped for e in entries if e.is_kernel)
    entries = [e for e in entries if e.count]
    kernels = _sorted(e for e in entries if e.is_kernel)
    copies = _sorted(e for e in entries if e.kind == "deep_copy")
    others = _sorted(e for e in entries if e.kind in ("region", "fence"))
    if not kernels and not copies and not others:
        return "Kokkos profile: no kernels were recorded" + (
            f" after warm-up (warm-up only: {', '.join(warm_only)})." if warm_only else ".")
    k_total = sum(e.total_s for e in kernels)
    launches = sum(e.count for e in kernels)
    head = (f"Kokkos profile: {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}, "
            f"{launches} launch{'es' if launches != 1 else ''}, {fmt_seconds(k_total)} in kernels")
    if copies:
        head += (f"; {sum(c.count for c in copies)} deep copies, "
                 f"{fmt_bytes(sum(c.bytes for c in copies))}, {fmt_seconds(sum(c.total_s for c in copies))}")
    if skipped:
        head += f" (after warm-up: {skipped} launch{'es' if skipped != 1 else ''} not timed)"
    lines = [head]
    shown = kernels[:top] if top else kernels
    for e in shown:
        share = 100.0 * e.total_s / k_total if k_total > 0 else 0.0
        where = f" (Fortran line {e.line})" if e.line is not None else ""
        lines.append(f"  {e.name}{where} [{e.kind}]: {share:.1f}% of kernel time, {e.count}x, "
                     f"total {fmt_seconds(e.total_s)}, mean {fmt_seconds(e.mean_s)}, "
                     f"min {fmt_seconds(e.min_s)}, max {fmt_seconds(e.max_s)}")
    rest = kernels[len(shown):]
    if rest:
        lines.append(f"  ... {len(rest)} more kernel{'s' if len(rest) != 1 else ''}, "
                     f"{fmt_seconds(sum(e.total_s for e in rest))} in total")
    if warm_only:
        lines.append(f"  launched only during warm-up: {', '.join(warm_only)}")
    for c in copies:
        lines.append(f"  {c.name}: {c.count}x, {fmt_bytes(c.bytes)}, total {fmt_seconds(c.total_s)}")
    for r in others:
        lines.append(f"  {r.kind} {r.name}: {r.count}x, total {fmt_seconds(r.total_s)}, "
                     f"mean {fmt_seconds(r.mean_s)}")
    return "\n".join(lines)
