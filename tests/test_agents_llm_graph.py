"""The graph with LLM models, scripted by langchain's fake chat model: wrong code first,
right code after one debugger round; fallback chains; the ledger; the budget."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

sys.path.insert(0, str(Path(__file__).parent))
from test_pipeline_fakes import FakeStages  # noqa: E402
from test_pipeline_graph import db_of, make_job  # noqa: E402

from port_fortran.agents.ledger import totals  # noqa: E402
from port_fortran.pipeline.graph import port_kernel  # noqa: E402

USAGE = {"input_tokens": 1200, "output_tokens": 300, "total_tokens": 1500, "input_token_details": {"cache_read": 200}}


def answer(marker: str, k: str = "axpy", prose: bool = True) -> AIMessage:
    code = (f'#include "{k}.kokkos.hpp"\n#include <Kokkos_Core.hpp>\n'
            f'extern "C" void {k}_kokkos(const int* n, const double* x, double* y) {{\n  {marker}\n}}\n')
    text = f"Here is the port:\n\n```cpp\n{code}```\nIt uses a parallel_for." if prose else code
    return AIMessage(content=text, usage_metadata=dict(USAGE))


def factory(responses):
    model = FakeMessagesListChatModel(responses=responses)
    seen = []

    def make(spec):
        seen.append(spec.name)
        return model

    make.seen = seen
    return make


def test_wrong_code_then_fixed_after_one_debug_round(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], models=["openai:gpt-4o"], bench=False)
    make = factory([answer("// WRONG"), answer("// fixed", prose=False)])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified", out
    assert out.model == "openai:gpt-4o"
    h = out.stages
    assert h[0] == "translate:openai:gpt-4o"
    assert h.index("run:serial") < h.index("debug:run") < len(h) - 1
    assert h[h.index("debug:run"):] == ["debug:run", "validate", "compile:serial", "compile:openmp", "run:serial",
                                        "run:openmp", "finalize"]
    db = db_of(job)
    calls = db.llm_calls(job.run_id, job.kernel_id)
    assert [c["stage"] for c in calls] == ["translate", "debug"]
    for c in calls:
        assert (c["input_tokens"], c["cached_tokens"], c["output_tokens"]) == (1200, 200, 300)
        assert c["price_source"] == "genai-prices" and c["cost_usd"] > 0
    # gpt-4o: $2.5/M input, $1.25/M cached, $10/M output
    assert calls[0]["cost_usd"] == pytest.approx((1000 * 2.5 + 200 * 1.25 + 300 * 10) / 1e6)
    t = totals(db, job.run_id)
    assert t["total"]["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))
    assert t["per_kernel"][job.kernel_id]["calls"] == 2
    assert t["per_model"]["openai:gpt-4o"]["input_tokens"] == 2400
    assert "fixed" in Path(job.port_dir, "axpy.kokkos.cpp").read_text()
    assert len(list(Path(job.port_dir, "llm").glob("*.txt"))) == 2


def test_llm_code_that_calls_the_original_is_rejected_by_the_validator(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], models=["openai:gpt-4o"], bench=False)
    make = factory([answer("axpy_(n, x, y);"), answer("// ok")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified"
    assert out.stages[:3] == ["translate:openai:gpt-4o", "validate", "debug:validate"]
    val = [a for a in db_of(job).attempts(job.run_id) if a["stage"] == "validate"]
    assert not val[0]["ok"] and "calls-original" in val[0]["detail"]


def test_chain_falls_back_to_the_llm_when_rules_refuse(tmp_path):
    job, _ = make_job(tmp_path, "axpy", ["refuse"], models=["rules", "openai:gpt-4o-mini"], bench=False)
    make = factory([answer("// ok")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified" and out.model == "openai:gpt-4o-mini"
    assert out.stages[:3] == ["translate:rules", "translate:openai:gpt-4o-mini", "validate"]
    assert make.seen == ["openai:gpt-4o-mini"]


def test_chain_falls_back_to_the_llm_after_the_rules_debugger(tmp_path):
    job, _ = make_job(tmp_path, "axpy", ["always-wrong"], models=["rules", "openai:gpt-4o-mini"],
                      debug_rounds=1, bench=False)
    make = factory([answer("// ok")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified" and out.model == "openai:gpt-4o-mini"
    h = out.stages
    assert h.count("debug:run") == 2 and h.index("translate:openai:gpt-4o-mini") > h.index("debug:run")
    assert len(db_of(job).llm_calls(job.run_id)) == 1


def test_rules_only_chain_makes_no_llm_call(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], bench=False)

    def no_llm(spec):
        raise AssertionError("no LLM should be built for --model rules")

    assert port_kernel(job, stages=FakeStages(), chat_factory=no_llm).status == "verified"
    assert db_of(job).llm_calls(job.run_id) == []


def test_budget_below_one_call_stops_after_that_call(tmp_path):
    one_call = (1000 * 2.5 + 200 * 1.25 + 300 * 10) / 1e6
    job, _ = make_job(tmp_path, "axpy", [], models=["openai:gpt-4o"], max_cost=one_call / 2, bench=False)
    make = factory([answer("// WRONG"), answer("// ok")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "budget-reached"
    db = db_of(job)
    calls = db.llm_calls(job.run_id)
    assert len(calls) == 1 and calls[0]["cost_usd"] == pytest.approx(one_call)
    assert db.kernel(job.run_id, job.kernel_id)["status"] == "budget-reached"
    assert db.total_cost(job.run_id) == pytest.approx(one_call)


def test_price_overrides_and_unknown_models(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], models=["my-local-model"], base_url="http://127.0.0.1:9/v1",
                      prices={"my-local-model": {"input": 1.0, "cached": 0.5, "output": 2.0}}, bench=False)
    out = port_kernel(job, stages=FakeStages(), chat_factory=factory([answer("// ok")]))
    assert out.status == "verified"
    c = db_of(job).llm_calls(job.run_id)[0]
    assert c["price_source"] == "override"
    assert c["cost_usd"] == pytest.approx((1000 * 1.0 + 200 * 0.5 + 300 * 2.0) / 1e6)

    job2, _ = make_job(tmp_path / "b", "axpy", [], models=["other-local"], base_url="http://127.0.0.1:9/v1",
                       bench=False)
    with pytest.warns(RuntimeWarning, match="no price known"):
        port_kernel(job2, stages=FakeStages(), chat_factory=factory([answer("// ok")]))
    c = db_of(job2).llm_calls(job2.run_id)[0]
    assert c["price_source"] == "unknown" and c["cost_usd"] == 0 and c["input_tokens"] == 1200


def test_llm_optimizer_keeps_a_faster_verified_answer(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], models=["openai:gpt-4o"], optimizer_variants=2)
    make = factory([answer("// ok"), answer("// variant tile-32x8 (faster)"), answer("// WRONG")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified"
    db = db_of(job)
    assert [c["stage"] for c in db.llm_calls(job.run_id)] == ["translate", "optimize"]  # kept: search stops
    opt = [a for a in db.attempts(job.run_id) if a["stage"] == "optimize" and "variant" in a["detail"]]
    assert opt[0]["ok"] and "llm-1" in opt[0]["detail"]
    assert "tile-32x8" in Path(job.port_dir, "axpy.kokkos.cpp").read_text()
    assert out.stages[-3:] == ["run:serial", "run:openmp", "finalize"]


def test_llm_optimizer_rejects_a_wrong_answer(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], models=["openai:gpt-4o"], optimizer_variants=1)
    make = factory([answer("// ok"), answer("// WRONG but fast")])
    out = port_kernel(job, stages=FakeStages(), chat_factory=make)
    assert out.status == "verified"
    opt = [a for a in db_of(job).attempts(job.run_id) if a["stage"] == "optimize" and "variant" in a["detail"]]
    assert not opt[0]["ok"] and "not verified" in opt[0]["detail"]
    assert "WRONG" not in Path(job.port_dir, "axpy.kokkos.cpp").read_text()


def test_report_cost_totals_equal_the_recorded_calls(tmp_path):
    import json

    from port_fortran.reports.render import render_reports

    job, _ = make_job(tmp_path, "axpy", ["always-wrong"], models=["rules", "openai:gpt-4o"], debug_rounds=1,
                      bench=False)
    make = factory([answer("// WRONG"), answer("// ok")])
    assert port_kernel(job, stages=FakeStages(), chat_factory=make).status == "verified"
    db = db_of(job)
    calls = db.llm_calls(job.run_id)
    assert len(calls) == 2
    paths = render_reports(db, job.run_id, Path(job.out_dir))
    report = json.loads(Path(paths["json"]).read_text())

    def find(d, key):
        if isinstance(d, dict):
            for k, v in d.items():
                if k == key:
                    yield v
                yield from find(v, key)
        elif isinstance(d, list):
            for v in d:
                yield from find(v, key)

    totals = list(find(report, "total_cost_usd"))
    assert totals and all(t == pytest.approx(sum(c["cost_usd"] for c in calls)) for t in totals)
    assert list(find(report, "output_tokens"))[0] == sum(c["output_tokens"] for c in calls)


def test_interface_refusals_are_not_sent_to_the_llm(tmp_path):
    job, _ = make_job(tmp_path, "axpy", ["refuse-common"], models=["rules", "openai:gpt-4o-mini"], bench=False)

    def no_llm(spec):
        raise AssertionError("an interface refusal must not reach the LLM")

    out = port_kernel(job, stages=FakeStages(), chat_factory=no_llm)
    assert out.status == "refused" and out.reason_code == "common-block"
    assert db_of(job).llm_calls(job.run_id) == []


def test_budget_is_exact_with_parallel_workers(tmp_path):
    """Threads standing in for worker processes: each checks the shared DB total; the lock
    makes the second wait until the first has recorded its cost."""
    import threading

    from port_fortran.agents.ledger import BudgetReached, Ledger
    from port_fortran.agents.llm import LLMClient, parse_model
    from port_fortran.reports.db import RunDB

    out = tmp_path / "out"
    run_id = RunDB.in_dir(out).start_run()
    spec = parse_model("openai:gpt-4o")
    results = []

    def worker(i):
        db = RunDB.in_dir(out)
        slow = FakeMessagesListChatModel(responses=[answer("// ok")], sleep=0.3)
        client = LLMClient(spec, slow, Ledger(db, run_id, f"k{i}", max_cost=1e-6))
        try:
            client.ask([("human", "x")], "translate")
            results.append("called")
        except BudgetReached:
            results.append("budget")
        db.close()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(results) == ["budget", "budget", "called"]
    assert len(RunDB.in_dir(out).llm_calls(run_id)) == 1
