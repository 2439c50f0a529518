"""The graph's nodes are top-level functions of pipeline/nodes.py (no closure), and the
optimizer's profile hint keeps bugs visible."""
from __future__ import annotations

import inspect
import logging

import pytest

from port_fortran.pipeline import nodes


def test_nodes_are_top_level_functions_bound_to_the_context():
    assert set(nodes.NODES) == {"translate", "validate", "compile", "run", "debug", "optimize", "finalize"}
    for name, fn in nodes.NODES.items():
        assert fn.__qualname__ == fn.__name__, f"{name} is not a top-level function"
        assert list(inspect.signature(fn).parameters)[:2] == ["ctx", "state"]
    ctx = object()
    bound = nodes.make_nodes(ctx)
    assert bound.keys() == nodes.NODES.keys()
    assert all(b.func is nodes.NODES[n] and b.args == (ctx,) for n, b in bound.items())


def test_profile_hint_leaves_out_an_unreadable_profile_but_raises_a_bug(tmp_path, monkeypatch, caplog):
    d = tmp_path / "build" / "serial"
    d.mkdir(parents=True)
    assert nodes._profile(tmp_path) == {}  # no profile: no hint
    (d / "kokkosp-1.json").write_text("{ not json")
    with caplog.at_level(logging.WARNING):
        assert nodes._profile(tmp_path) == {}
    assert "kokkosp-1.json" in caplog.text  # the file is named, not silently dropped

    import port_fortran.profiling as prof

    def broken(*a, **kw):
        raise TypeError("a bug in the profile reader")

    monkeypatch.setattr(prof, "read_profile", broken)
    with pytest.raises(TypeError, match="a bug"):  # was swallowed by `except Exception: return {}`
        nodes._profile(tmp_path)


def test_an_original_failing_at_the_timing_sizes_is_its_fault_not_the_ports():
    # the correctness cases passed; at the timing sizes the original itself fails (harness
    # redraw or the bounds-checked original: code set). The port stays verified (no
    # debugging of a correct port, no refusal of a proven one) and the note says it is not
    # timed there and why; a port that differs there fails as before
    from port_fortran.pipeline.nodes import _with_proof
    from port_fortran.records import CaseResult, Verdict

    ok = Verdict("serial", True, reason="")
    case = CaseResult(seed=1, sizes={"n": 4096, "h": 1}, passed=False, code="original-out-of-bounds")
    bad = Verdict("serial", False, cases=[case], reason="the original reads outside its arrays",
                  code="original-out-of-bounds")
    got = _with_proof(ok, bad)
    assert got.passed and got.code == "" and not got.cases
    assert got.notes == ["not timed on serial: at the timing sizes {'n': 4096, 'h': 1} the original is at fault "
                         "[original-out-of-bounds]: the original reads outside its arrays; give sizes.timing in "
                         "the kernel's spec"]
    port_wrong = _with_proof(ok, Verdict("serial", False, reason="x differs"))
    assert not port_wrong.passed and port_wrong.code == "" and port_wrong.reason == "x differs"
