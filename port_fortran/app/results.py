"""What one ``port-fortran app`` run decides and measures: the ports placed in the modern
tree, the routines kept, and each backend's result (``report.json``'s application section)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional


@dataclass
class Placed:
    """A port that goes into the modern tree."""

    kernel_id: str
    file: str  # relative to the application root
    name: str
    line: int
    mode: str  # 'full' | 'hybrid'
    port_dir: str
    proof: str = "harness"  # 'harness' (verified per routine) | 'application' (main programs)
    main: bool = False


@dataclass
class Kept:
    name: str
    file: str
    line: int
    code: str
    reason: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class BackendResult:
    backend: str
    built: bool = False
    ran: bool = False
    matched: bool = False
    reason: str = ""
    first_difference: Optional[dict] = None
    original_seconds: Optional[float] = None
    modern_seconds: Optional[float] = None
    modern_seconds_no_residency: Optional[float] = None
    speedup: Optional[float] = None
    build_seconds: float = 0.0
    comparison: dict = field(default_factory=dict)
    threads: int = 1
    residency: str = ""  # 'host memory' | 'resident' | 'emulated'

    def to_json(self) -> dict:
        return asdict(self)
