"""Differential test harness: spec inference, inputs, drivers, comparison, timing.

``Harness(kernel, source_file, port_dir, include_dirs=(), defines={}, limits=None)`` is the
entry point (see docs/CONTRACTS.md)."""
from __future__ import annotations

__all__ = ["Harness"]


def __getattr__(name):
    if name == "Harness":
        from .core import Harness
        return Harness
    raise AttributeError(name)
