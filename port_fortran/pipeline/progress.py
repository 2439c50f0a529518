"""Progress of a run: a live rich table of kernels and stages, or plain lines (--quiet).

The view reads the run database (workers in other processes write it), so it needs no
channel of its own: each kernel's status and its latest attempt (stage, backend).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Optional

STATUS_STYLE = {"verified": "green", "failed": "red", "refused": "yellow", "error": "red", "budget-reached": "magenta",
                "running": "cyan", "pending": "dim"}


def _rows(db: Any, run_id: str, current: Optional[dict] = None) -> list[dict]:
    ks = db.kernels(run_id)
    last: dict[str, dict] = {}
    for a in db.attempts(run_id):
        last[a["kernel_id"]] = a
    for k in ks:
        a = last.get(k["kernel_id"])
        k["stage"] = (f"{a['stage']}{':' + a['backend'] if a['backend'] else ''}"
                      f"{'' if a['ok'] else ' (failed)'}") if a else ""
        if current and k["status"] == "running" and current.get(k["kernel_id"]):
            k["stage"] = f"-> {current[k['kernel_id']]}"  # the stage running now (this process only)
    return ks


def table(db: Any, run_id: str, title: str = "", current: Optional[dict] = None):
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title or f"port-fortran run {run_id}", expand=False)
    for col in ("kernel", "status", "last stage", "model", "reason"):
        t.add_column(col, overflow="fold")
    for k in _rows(db, run_id, current):
        st = k["status"]
        style = STATUS_STYLE.get(st, "")
        t.add_row(escape(k["kernel_id"]), f"[{style}]{escape(st)}[/]" if style else escape(st), escape(k["stage"]),
                  escape(k["model"] + (" (hybrid)" if k.get("mode") == "hybrid" else "")),
                  escape((k["reason"] or "")[:160]))
    return t


class Progress:
    """``with Progress(db, run_id, quiet) as p: ... p.update()`` — live table, or one plain
    line per kernel status change in quiet mode (for batch logs)."""

    def __init__(self, db: Any, run_id: str, quiet: bool = False, stream=None):
        self.db, self.run_id, self.quiet = db, run_id, quiet
        self.stream = stream or sys.stderr
        self._live = None
        self._seen: dict[str, str] = {}
        self._t = 0.0
        self.current: dict[str, str] = {}

    def mark(self, kernel_id: str, stage: str, backend: str = "") -> None:
        """The stage a kernel of this process is entering (workers elsewhere show their last attempt)."""
        self.current[kernel_id] = f"{stage}:{backend}" if backend else stage
        self.update()

    def __enter__(self) -> "Progress":
        if not self.quiet and getattr(self.stream, "isatty", lambda: False)():
            from rich.console import Console
            from rich.live import Live

            self._live = Live(table(self.db, self.run_id), console=Console(file=self.stream),
                              refresh_per_second=2, transient=True)
            self._live.__enter__()
        return self

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._t < 0.5:
            return
        self._t = now
        if self._live is not None:
            self._live.update(table(self.db, self.run_id, current=self.current))
            return
        for k in _rows(self.db, self.run_id, self.current):
            key = f"{k['status']}|{k['stage']}" if not self.quiet else k["status"]
            if self._seen.get(k["kernel_id"]) != key:
                self._seen[k["kernel_id"]] = key
                if k["status"] in ("pending",):
                    continue
                extra = f" [{k['stage']}]" if k["status"] == "running" and k["stage"] else ""
                reason = f": {k['reason']}" if k["reason"] and k["status"] not in ("running", "verified") else ""
                print(f"{time.strftime('%H:%M:%S')} {k['kernel_id']} {k['status']}{extra}{reason}",
                      file=self.stream, flush=True)

    def __exit__(self, *exc: Any) -> Optional[bool]:
        if self._live is not None:
            self._live.__exit__(*exc)
        else:
            self.update(force=True)
        return None
