"""Real HTTP through langchain-openai to a scripted OpenAI-compatible server on 127.0.0.1:
retries on 429 / 5xx, time-outs, usage into the ledger, the rate limiter."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from llm_server import ScriptedLLMServer  # noqa: E402
from test_pipeline_fakes import FakeStages  # noqa: E402
from test_pipeline_graph import db_of, make_job  # noqa: E402

from port_fortran.agents.ledger import Ledger  # noqa: E402
from port_fortran.agents.llm import LLMCallFailed, LLMClient, TransientLLMError, make_chat_model, parse_model  # noqa: E402
from port_fortran.config import LLMSettings  # noqa: E402
from port_fortran.pipeline.graph import port_kernel  # noqa: E402

CODE = ('```cpp\n#include "axpy.kokkos.hpp"\nextern "C" void axpy_kokkos(const int* n, const double* x, double* y) {\n'
        '  // ok\n}\n```')
OK = {"content": CODE, "prompt_tokens": 500, "completion_tokens": 50, "cached_tokens": 100}


def client(url, **settings):
    spec = parse_model("served-model", url)
    s = LLMSettings(**{"timeout_s": 5.0, "max_retries": 2, **settings})
    ledger = Ledger(None, "run", "k", overrides={"served-model": {"input": 1.0, "cached": 0.1, "output": 4.0}})
    return LLMClient(spec, make_chat_model(spec, s), ledger, timeout_s=s.timeout_s), ledger


def test_429_then_success_is_retried_once_and_recorded_once():
    with ScriptedLLMServer([{"status": 429}, OK]) as srv:
        c, ledger = client(srv.url)
        text = c.ask([("human", "port it")], "translate")
    assert "axpy_kokkos" in text
    assert len(srv.requests) == 2  # one retry
    assert srv.requests[0]["model"] == "served-model"
    assert len(ledger.calls) == 1
    call = ledger.calls[0]
    assert (call["input_tokens"], call["cached_tokens"], call["output_tokens"]) == (500, 100, 50)
    assert call["ok"] and call["cost_usd"] == pytest.approx((400 * 1.0 + 100 * 0.1 + 50 * 4.0) / 1e6)


def test_5xx_then_success_is_retried():
    with ScriptedLLMServer([{"status": 503}, {"status": 500}, OK]) as srv:
        c, ledger = client(srv.url)
        c.ask([("human", "x")], "translate")
    assert len(srv.requests) == 3 and len(ledger.calls) == 1


def test_retries_are_bounded_and_the_failure_is_recorded():
    with ScriptedLLMServer([{"status": 429}]) as srv:
        c, ledger = client(srv.url, max_retries=1)
        with pytest.raises(TransientLLMError):
            c.ask([("human", "x")], "translate")
    assert len(srv.requests) == 2
    assert len(ledger.calls) == 1 and not ledger.calls[0]["ok"] and "RateLimit" in ledger.calls[0]["error"]


def test_non_transient_error_is_not_retried():
    with ScriptedLLMServer([{"status": 400}]) as srv:
        c, _ = client(srv.url)
        with pytest.raises(LLMCallFailed) as ei:
            c.ask([("human", "x")], "translate")
    assert not ei.value.transient and len(srv.requests) == 1


def test_timeout_fails_cleanly_without_hanging():
    with ScriptedLLMServer([{"sleep": 5, **OK}]) as srv:
        c, ledger = client(srv.url, timeout_s=0.5, max_retries=0)
        t0 = time.monotonic()
        with pytest.raises(TransientLLMError, match="timed out"):
            c.ask([("human", "x")], "translate")
        assert time.monotonic() - t0 < 3
    assert not ledger.calls[0]["ok"] and "timed out" in ledger.calls[0]["error"]


def test_rate_limit_spaces_requests():
    with ScriptedLLMServer([OK]) as srv:
        c, _ = client(srv.url, requests_per_second=5.0)
        t0 = time.monotonic()
        for _ in range(3):
            c.ask([("human", "x")], "translate")
        assert time.monotonic() - t0 >= 0.3  # 3 requests at 5/s, bucket of 1


def test_graph_with_a_timing_out_server_records_an_error(tmp_path):
    with ScriptedLLMServer([{"sleep": 4, **OK}]) as srv:
        job, _ = make_job(tmp_path, "axpy", [], models=["served-model"], base_url=srv.url,
                          llm={"timeout_s": 0.5, "max_retries": 0, "node_retries": 2}, bench=False)
        t0 = time.monotonic()
        out = port_kernel(job, stages=FakeStages())
        assert time.monotonic() - t0 < 10
    assert out.status == "error" and out.reason_code == "llm-error" and "timed out" in out.reason
    db = db_of(job)
    calls = db.llm_calls(job.run_id)
    assert len(calls) == 2 and not any(c["ok"] for c in calls)  # the node's RetryPolicy tried twice
    assert db.kernel(job.run_id, job.kernel_id)["status"] == "error"


def test_graph_end_to_end_over_http(tmp_path):
    with ScriptedLLMServer([{"status": 429}, OK]) as srv:
        job, _ = make_job(tmp_path, "axpy", [], models=["served-model"], base_url=srv.url,
                          prices={"served-model": {"input": 1.0, "output": 4.0}}, bench=False)
        out = port_kernel(job, stages=FakeStages())
    assert out.status == "verified" and out.model == "served-model"
    calls = db_of(job).llm_calls(job.run_id)
    assert len(calls) == 1 and calls[0]["input_tokens"] == 500 and calls[0]["cost_usd"] > 0
