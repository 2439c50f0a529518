"""The cost ledger: every LLM call's tokens and price, in the run database.

Prices come from genai-prices' offline table, unless the configuration overrides them for
that model (USD per million tokens: input, cached, output) — local and unlisted models.
A model with no known price costs 0 with ``price_source='unknown'`` and one warning.

The budget (``--max-cost``) is for the whole run, summed from the database so that every
worker process sees what the others spent. :meth:`Ledger.check_budget` is called before
each call: once the total reaches the budget no further call is made. With a budget set,
the check, the call and its record happen under a file lock beside the database
(:meth:`Ledger.guard`), so parallel workers cannot all pass the check before any of them
has recorded its cost: LLM calls are serialised, the budget is exact.
"""
from __future__ import annotations

import contextlib
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger(__name__)

_warned: set[str] = set()


class BudgetReached(Exception):
    """The run's LLM budget is spent; no further call is made."""

    def __init__(self, spent: float, budget: float):
        self.spent, self.budget = spent, budget
        super().__init__(f"LLM budget reached: ${spent:.4f} spent of ${budget:.4f} (--max-cost)")


@dataclass
class Usage:
    input_tokens: int = 0  # all prompt tokens, cached ones included
    cached_tokens: int = 0  # prompt tokens read from the provider's cache
    output_tokens: int = 0

    @classmethod
    def from_message(cls, msg: Any) -> "Usage":
        """From an AIMessage's ``usage_metadata`` (langchain's standard fields), falling back
        to the raw OpenAI ``token_usage`` in ``response_metadata``."""
        um = getattr(msg, "usage_metadata", None) or {}
        if um:
            details = um.get("input_token_details") or {}
            return cls(int(um.get("input_tokens") or 0), int(details.get("cache_read") or 0),
                       int(um.get("output_tokens") or 0))
        tu = (getattr(msg, "response_metadata", None) or {}).get("token_usage") or {}
        cached = ((tu.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
        return cls(int(tu.get("prompt_tokens") or 0), int(cached), int(tu.get("completion_tokens") or 0))


def price(model: str, usage: Usage, *, provider: str = "", base_url: Optional[str] = None,
          overrides: Optional[dict[str, dict[str, float]]] = None) -> tuple[float, str]:
    """(cost in USD, price source) for one call."""
    ov = (overrides or {}).get(model)
    if ov is None and ":" in model:
        ov = (overrides or {}).get(model.split(":", 1)[1])
    if ov is not None:
        fresh = max(usage.input_tokens - usage.cached_tokens, 0)
        cost = (fresh * ov["input"] + usage.cached_tokens * ov.get("cached", ov["input"])
                + usage.output_tokens * ov["output"]) / 1e6
        return cost, "override"
    name = model.split(":", 1)[1] if ":" in model else model
    try:
        from genai_prices import Usage as GPUsage, calc_price

        kwargs: dict[str, Any] = {}
        if provider == "openai":
            kwargs["provider_id"] = "openai"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            calc = calc_price(GPUsage(input_tokens=usage.input_tokens, cache_read_tokens=usage.cached_tokens,
                                      output_tokens=usage.output_tokens), name, **kwargs)
        return float(calc.total_price), "genai-prices"
    except Exception as exc:  # LookupError for unknown models; anything else is the same to us
        if model not in _warned:
            _warned.add(model)
            msg = (f"no price known for model {model!r} ({exc}); its calls are recorded with cost 0. "
                   f"Add prices: {{{name}: {{input: X, cached: Y, output: Z}}}} (USD per million tokens) "
                   "to the configuration")
            log.warning(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return 0.0, "unknown"


class Ledger:
    """Records calls for one kernel of one run (``db`` is a reports.db.RunDB, or None to
    keep the records in memory only)."""

    def __init__(self, db: Any, run_id: str, kernel_id: str = "", *, max_cost: Optional[float] = None,
                 overrides: Optional[dict] = None):
        self.db, self.run_id, self.kernel_id = db, run_id, kernel_id
        self.max_cost = max_cost
        self.overrides = overrides or {}
        self.calls: list[dict] = []  # what this ledger recorded (also in the DB)

    @contextlib.contextmanager
    def guard(self):
        """Hold the run's budget lock (only when there is a budget and a database)."""
        if self.max_cost is None or self.db is None:
            yield
            return
        import fcntl

        path = Path(self.db.path).parent / "llm-budget.lock"
        fd = os.open(str(path), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def spent(self) -> float:
        if self.db is not None:
            return self.db.total_cost(self.run_id)
        return sum(c["cost_usd"] for c in self.calls)

    def check_budget(self) -> None:
        if self.max_cost is None:
            return
        spent = self.spent()
        if spent >= self.max_cost:
            raise BudgetReached(spent, self.max_cost)

    def record(self, model: str, usage: Usage, *, stage: str = "", provider: str = "",
               base_url: Optional[str] = None, seconds: float = 0.0, ok: bool = True, error: str = "") -> dict:
        if usage.input_tokens == 0 and usage.output_tokens == 0:
            cost, source = 0.0, ""  # nothing billed (a failed call): no price needed
        else:
            cost, source = price(model, usage, provider=provider, base_url=base_url, overrides=self.overrides)
        row = dict(model=model, kernel_id=self.kernel_id, stage=stage, provider=provider,
                   input_tokens=usage.input_tokens, cached_tokens=usage.cached_tokens,
                   output_tokens=usage.output_tokens, cost_usd=cost, price_source=source,
                   seconds=seconds, ok=ok, error=error[:500])
        self.calls.append(row)
        if self.db is not None:
            self.db.add_llm_call(self.run_id, **row)
        return row


def totals(db: Any, run_id: str) -> dict[str, Any]:
    """Totals of a run: overall, per kernel, per model (cost, tokens, calls)."""
    calls = db.llm_calls(run_id)

    def agg(rows):
        return {"calls": len(rows), "failed_calls": sum(1 for r in rows if not r["ok"]),
                "input_tokens": sum(r["input_tokens"] for r in rows),
                "cached_tokens": sum(r["cached_tokens"] for r in rows),
                "output_tokens": sum(r["output_tokens"] for r in rows),
                "cost_usd": sum(r["cost_usd"] for r in rows)}

    by_kernel: dict[str, list] = {}
    by_model: dict[str, list] = {}
    for r in calls:
        by_kernel.setdefault(r["kernel_id"], []).append(r)
        by_model.setdefault(r["model"], []).append(r)
    return {"total": agg(calls),
            "per_kernel": {k: agg(v) for k, v in by_kernel.items()},
            "per_model": {k: agg(v) for k, v in by_model.items()}}
