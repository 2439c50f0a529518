"""Kernel-only timing through the port's views-level function (``<k>_kokkos_views`` in
``<k>.kokkos.hpp``): views are created and filled once, then only the kernel is timed."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..fortran import ir


def views_timer_source(kernel: ir.Kernel, port_dir: Path) -> Optional[str]:
    """Source of ``pf_time_views`` for this port, or None when the header declares no
    views-level function the harness knows how to call."""
    return None
