"""The registry of reason codes (port_fortran/reasons.py): every code the package emits is
registered once with its meaning, the graph's routing asks it which codes are about the
interface, and nothing in it is dead."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from port_fortran import reasons
from port_fortran.pipeline import nodes

PKG = Path(__file__).resolve().parents[1] / "port_fortran"
CODE = re.compile(r"[a-z]+(-[a-z0-9]+)+|[a-z]+")

# calls whose argument at this position is a reason code
CODE_ARG = {"Refusal": 0, "Diagnostic": 0, "Unsupported": 0, "Unsup": 0, "unsup": 1, "refuse": 0, "Keep": 0,
            "TextRefusal": 0, "Kept": 0, "_stop": 2, "_record_error": 3, "_next_model_or": 4, "_set_extent": 4}


def emitted_codes() -> dict[str, set[str]]:
    """Code -> modules, for every string literal the package passes as a reason code: the
    code argument of the calls above, ``code=`` / ``construct=`` / ``reason_code=``
    keywords, ``code = ...`` assignments and ``"code": ...`` entries of dicts."""
    out: dict[str, set[str]] = {}

    def add(node, where):
        if isinstance(node, ast.Subscript) or (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get"):
            return  # a key looked up (``f.get("code")``, ``m["sev"]``), not a code
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and CODE.fullmatch(node.value):
                out.setdefault(node.value, set()).add(where)
            return
        for c in ast.iter_child_nodes(node):
            add(c, where)

    for p in PKG.rglob("*.py"):
        where = str(p.relative_to(PKG))
        if where == "reasons.py":
            continue
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                i = CODE_ARG.get(name)
                if i is not None and len(n.args) > i:
                    add(n.args[i], where)
                for kw in n.keywords:
                    if kw.arg in ("code", "construct", "reason_code"):
                        add(kw.value, where)
            elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "code" for t in n.targets):
                add(n.value, where)
            elif isinstance(n, ast.Dict):
                for k, v in zip(n.keys, n.values):
                    if isinstance(k, ast.Constant) and k.value in ("code", "reason_code") and v is not None:
                        add(v, where)
    return out


def test_every_emitted_code_is_registered():
    found = emitted_codes()
    assert {"common-block", "loop-carried-dependence", "shared-line", "llm-error", "goto"} <= set(found)
    missing = {c: sorted(w) for c, w in found.items() if c not in reasons.REASONS}
    assert not missing, f"reason codes emitted but not registered in port_fortran/reasons.py: {missing}"


def test_no_registered_code_is_dead():
    text = "\n".join(p.read_text() for p in PKG.rglob("*.py") if p.name != "reasons.py")
    stage_failed = {f"{s}-failed" for s in ("translate", "validate", "compile", "run")}  # f"{stage}-failed"
    dead = [c for c in reasons.REASONS if f'"{c}"' not in text and c not in stage_failed]
    assert not dead, f"registered but never emitted: {dead}"


def test_registry_answers():
    r = reasons.reason("common-block")
    assert r.interface and r.stage == "translate" and "COMMON" in r.meaning
    assert not reasons.reason("possible-dependence").interface
    assert reasons.meaning("original-not-finite").startswith("the original returned inf/NaN")
    assert reasons.meaning("") == "" and reasons.meaning("no-such-code") == ""
    with pytest.raises(ValueError, match="no-such-code"):
        reasons.reason("no-such-code")
    assert reasons.is_interface({"common-block", "module-variable"})
    assert not reasons.is_interface({"common-block", "unstructured-goto"}) and not reasons.is_interface(set())


def test_graph_routing_asks_the_registry():
    """The interface refusals the chain stops on are the registry's (they were a set of
    strings copied from the translator into the graph)."""
    assert "INTERFACE_REFUSALS" not in vars(nodes)
    src = (PKG / "pipeline" / "nodes.py").read_text()
    assert "is_interface(" in src
    assert reasons.INTERFACE_CODES == {
        "common-block", "module-variable", "optional-argument", "assumed-shape", "unsupported-type", "allocatable",
        "save-variable", "entry", "unknown-extent", "io-in-kernel", "no-parallel-nest", "harness-unsupported",
        "module-state",  # the set the graph routed on before the registry: behaviour unchanged
        "array-result"}  # since: a function returning an array (no model writes its C++ entry either)
