"""The time a kernel's proof may take (pure bookkeeping; the harness asks before each case).

Some originals are slow on the only inputs they take: a solver on a lattice whose extents
are compile-time constants runs tens of seconds a call, and a proof runs it tens of times
(every case, the inputs drawn again where it refuses them, the checking build, the
sensitivity runs, every backend). Without a budget such a kernel holds a batch job until
the job's own wall limit kills it, and the user learns nothing about it.

A :class:`ProofBudget` is kept per port directory for the whole pipeline of the kernel
(every backend, every debugger round). The harness charges each case's wall time to it and,
before starting a case, asks :meth:`ProofBudget.refusal`: when the time spent plus the
longest case so far would pass the limit, the proof stops there with the reason code
:data:`PROOF_BUDGET` (a refusal naming the time, the cases run and the setting to raise),
unless the port already failed a case in an earlier round: that failure is what the user
must see, so the verdict stays a failure of the port.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

PROOF_BUDGET = "proof-over-budget"
SETTING = "limits.proof_s"


class BudgetSpent(Exception):
    """A run of a driver was stopped (or not started) because the proof's time is spent."""


@dataclass
class ProofBudget:
    """Wall seconds a kernel's proof may take (``limit_s`` <= 0: no limit)."""

    limit_s: float
    spent_s: float = 0.0
    longest_s: float = 0.0
    cases: int = 0
    port_failure: str = ""  # the first case the port itself failed, if any
    _t0: Optional[float] = field(default=None, repr=False)

    def start(self) -> None:
        self._t0 = time.monotonic()

    def charge(self, failure: str = "") -> float:
        """End the case begun by :meth:`start`; ``failure``: the port's own failure on it."""
        secs = time.monotonic() - self._t0 if self._t0 is not None else 0.0
        self._t0 = None
        self.spent_s += secs
        self.longest_s = max(self.longest_s, secs)
        self.cases += 1
        if failure and not self.port_failure:
            self.port_failure = failure
        return secs

    def remaining(self) -> Optional[float]:
        """Seconds left (the case under way counted), None without a limit."""
        if self.limit_s <= 0:
            return None
        now = time.monotonic() - self._t0 if self._t0 is not None else 0.0
        return self.limit_s - self.spent_s - now

    def refusal(self, what: str, left: int, spent: bool = False) -> Optional[str]:
        """Why the next case (of ``left`` still to run for ``what``) is not started, or None;
        ``spent``: the case under way was stopped because the time was spent."""
        if self.limit_s <= 0:
            return None
        if not spent and (not self.cases or self.spent_s + self.longest_s <= self.limit_s):
            return None
        done = (f"a case was stopped when the time ran out after {self.spent_s:.0f} s ({self.cases - 1} "
                f"finished before it)" if spent else
                f"{self.cases} case(s) took {self.spent_s:.0f} s, the longest {self.longest_s:.0f} s")
        return (f"the proof would pass its time budget of {self.limit_s:.0f} s ({SETTING} in the run "
                f"configuration): {done}, and {left} more of {what} are still to run; the original is slow "
                f"on these inputs (its arrays' extents, or the work its inputs select): raise {SETTING}, or "
                f"give smaller sizes or value ranges in the kernel's spec")


def over_budget(verdict, why: str, budget: ProofBudget) -> None:
    """Settle a verdict (``records.Verdict``) whose proof stopped at its time budget: a
    refusal with its own code, unless the port failed a case (in this round or an earlier
    one), which stays the verdict."""
    if not verdict.passed and not verdict.code:  # the port's failure on a case run: that is the verdict
        verdict.notes.append(why)
    elif budget.port_failure:
        verdict.passed, verdict.code = False, ""
        verdict.reason = f"{why}; the port failed in an earlier round: {budget.port_failure}"
    else:  # every case run passed, or the original rejected its inputs there
        was = f"; on the cases run: [{verdict.code}] {verdict.reason}" if verdict.code else ""
        verdict.passed, verdict.code, verdict.reason = False, PROOF_BUDGET, why + was
