"""Model access: which models exist, how to reach them, and one recorded call.

Model names (``--model``, a comma-separated fallback chain):

* ``rules`` — the deterministic engine (translator, debugger and optimizer); offline.
* ``openai:<name>`` — OpenAI, key from ``OPENAI_API_KEY`` (configurable).
* ``<name>`` with ``--base-url URL`` — any OpenAI-compatible server (vLLM, Ollama, SGLang);
  key from the same variable or ``'none'``.

Every call has a timeout; the OpenAI client retries 429 / 5xx / connection faults with
exponential backoff (``llm.max_retries``); an optional client-side request rate limit;
every call (failed ones too) goes to the cost ledger, and the budget is checked first.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import UserError
from .extract import extract_code
from .ledger import BudgetReached, Ledger, Usage

__all__ = ["ModelSpec", "parse_model", "parse_chain", "make_chat_model", "LLMClient", "LLMCallFailed",
           "BudgetReached"]


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # 'rules' | 'openai' | 'compatible'
    name: str  # the label used in reports and the ledger: 'rules', 'openai:gpt-4o', 'llama3'
    model: str = ""  # what the server is asked for
    base_url: Optional[str] = None

    @property
    def is_llm(self) -> bool:
        return self.kind != "rules"

    @property
    def provider(self) -> str:
        return {"openai": "openai", "compatible": "openai-compatible"}.get(self.kind, "")


def parse_model(text: str, base_url: Optional[str] = None) -> ModelSpec:
    t = (text or "").strip()
    if not t:
        raise UserError("--model: empty model name; use 'rules', 'openai:<name>' or a name served at --base-url")
    if t == "rules":
        return ModelSpec("rules", "rules")
    if t.startswith("openai:"):
        name = t.split(":", 1)[1].strip()
        if not name:
            raise UserError(f"--model {t!r}: give the OpenAI model name after 'openai:', e.g. openai:gpt-4o-mini")
        return ModelSpec("openai", t, name, base_url if base_url else None)
    return ModelSpec("compatible", t, t, base_url)


def parse_chain(models: list[str] | str, base_url: Optional[str] = None) -> list[ModelSpec]:
    if isinstance(models, str):
        models = [m for m in models.split(",") if m.strip()]
    return [parse_model(m, base_url) for m in models]


class LLMCallFailed(Exception):
    """A call failed after the client's own retries. ``transient``: a time-out, rate limit,
    server or connection fault (the graph may retry the node); otherwise a permanent error."""

    def __init__(self, message: str, transient: bool):
        super().__init__(message)
        self.transient = transient


class TransientLLMError(LLMCallFailed):
    def __init__(self, message: str):
        super().__init__(message, True)


def make_chat_model(spec: ModelSpec, settings: Any) -> Any:
    """A langchain ChatOpenAI for ``spec`` with the configured timeout, retries and rate limit."""
    from langchain_openai import ChatOpenAI

    key_env = getattr(settings, "api_key_env", "OPENAI_API_KEY")
    key = os.environ.get(key_env)
    if spec.kind == "openai" and not key and not spec.base_url:
        raise UserError(f"model {spec.name!r} needs an API key: set {key_env} (or use --model rules, offline)")
    kwargs: dict[str, Any] = dict(model=spec.model, api_key=key or "none", timeout=settings.timeout_s,
                                  max_retries=settings.max_retries, temperature=settings.temperature)
    if spec.base_url:
        kwargs["base_url"] = spec.base_url
    if settings.max_tokens:
        kwargs["max_tokens"] = settings.max_tokens
    if settings.requests_per_second:
        from langchain_core.rate_limiters import InMemoryRateLimiter

        kwargs["rate_limiter"] = InMemoryRateLimiter(requests_per_second=settings.requests_per_second,
                                                     check_every_n_seconds=0.05, max_bucket_size=1)
    return ChatOpenAI(**kwargs)


def _is_transient(exc: BaseException) -> bool:
    try:
        import openai

        if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                            openai.InternalServerError)):
            return True
        if isinstance(exc, openai.APIStatusError) and exc.status_code in (408, 409, 429) or \
                isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(exc, (TimeoutError, ConnectionError))


def _describe(exc: BaseException, timeout_s: Optional[float]) -> str:
    name = type(exc).__name__
    if "Timeout" in name:
        return f"timed out after {timeout_s:g}s ({name})" if timeout_s else f"timed out ({name})"
    return f"{name}: {str(exc)[:300]}"


class LLMClient:
    """One model, its ledger and budget. ``ask`` returns the answer text."""

    def __init__(self, spec: ModelSpec, chat_model: Any, ledger: Ledger, timeout_s: Optional[float] = None):
        self.spec, self.chat, self.ledger, self.timeout_s = spec, chat_model, ledger, timeout_s

    def ask(self, messages: list[tuple[str, str]] | list[Any], stage: str) -> str:
        with self.ledger.guard():
            return self._ask(messages, stage)

    def _ask(self, messages: list, stage: str) -> str:
        self.ledger.check_budget()  # raises BudgetReached: no call is made
        t0 = time.monotonic()
        try:
            msg = self.chat.invoke(messages)
        except BudgetReached:
            raise
        except Exception as exc:
            transient = _is_transient(exc)
            text = _describe(exc, self.timeout_s)
            self.ledger.record(self.spec.name, Usage(), stage=stage, provider=self.spec.provider,
                               base_url=self.spec.base_url, seconds=time.monotonic() - t0, ok=False, error=text)
            if transient:
                raise TransientLLMError(f"{self.spec.name}: {text}") from exc
            raise LLMCallFailed(f"{self.spec.name}: {text}", False) from exc
        self.ledger.record(self.spec.name, Usage.from_message(msg), stage=stage, provider=self.spec.provider,
                           base_url=self.spec.base_url, seconds=time.monotonic() - t0)
        content = msg.content
        if isinstance(content, list):  # content blocks
            content = "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
        return str(content)

    def ask_code(self, messages: list, stage: str, entry: Optional[str] = None) -> tuple[str, str]:
        """(extracted C++ code, raw answer)."""
        answer = self.ask(messages, stage)
        return extract_code(answer, entry), answer


ChatFactory = Callable[[ModelSpec], Any]
