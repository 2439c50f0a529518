"""Configuration: YAML + flags merged, errors that name the key."""
import argparse

import pytest

from port_fortran.config import Config, from_args
from port_fortran.errors import UserError


def args(**kw):
    base = dict(config=None, backends="serial,openmp", model=None, base_url=None, kernel=[], jobs=None,
                max_cost=None, executor=None, quiet=False, include=[], define=[], fflags=None)
    base.update(kw)
    return argparse.Namespace(**base)


def test_defaults():
    c = from_args(args())
    assert c.models == ["rules"] and c.backends == ["serial", "openmp"] and c.debug_rounds["run"] == 2


def test_file_then_flags(tmp_path):
    f = tmp_path / "pf.yaml"
    f.write_text("models: rules,openai:gpt-4o-mini\nbackends: [serial]\nmax_cost: 2.5\ndebug_rounds: {run: 3}\n"
                 "prices:\n  llama3: {input: 0.1, output: 0.2}\nllm: {timeout_s: 30, requests_per_second: 1}\n"
                 "defines: {USE_X: 1}\ninclude_dirs: [inc]\n")
    c = from_args(args(config=str(f)))
    assert c.models == ["rules", "openai:gpt-4o-mini"] and c.backends == ["serial"] and c.max_cost == 2.5
    assert c.debug_rounds == {"validate": 2, "compile": 2, "run": 3}
    assert c.prices["llama3"] == {"input": 0.1, "output": 0.2, "cached": 0.1}
    assert c.llm.timeout_s == 30 and c.llm.requests_per_second == 1 and c.defines == {"USE_X": "1"}
    c = from_args(args(config=str(f), backends="openmp", max_cost=1.0, include=["x"], define=["A=2", "B"]))
    assert c.backends == ["openmp"] and c.max_cost == 1.0 and c.include_dirs == ["inc", "x"]
    assert c.defines == {"USE_X": "1", "A": "2", "B": "1"}
    assert Config.from_dict(c.to_dict()) == c


@pytest.mark.parametrize("text,key", [
    ("backend: [serial]\n", "backend"),
    ("backends: [serial, vulkan]\n", "backends"),
    ("max_cost: lots\n", "max_cost"),
    ("debug_rounds: {link: 1}\n", "debug_rounds.link"),
    ("llm: {timeout_s: 0}\n", "llm.timeout_s"),
    ("llm: {timeout: 3}\n", "llm.timeout"),
    ("prices: {m: {input: 1}}\n", "prices.m"),
    ("executor: slurm\n", "executor"),
    ("models: [llama3]\n", "models"),
])
def test_errors_name_the_key(tmp_path, text, key):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(UserError) as ei:
        from_args(args(config=str(f)))
    assert f"'{key}'" in str(ei.value) and str(f) in str(ei.value)


def test_bad_yaml_names_the_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("models: [rules\nbackends: x\n")
    with pytest.raises(UserError, match=r"bad.yaml:\d+"):
        from_args(args(config=str(f)))


def test_compatible_model_needs_base_url():
    with pytest.raises(UserError, match="--base-url"):
        from_args(args(model="llama3"))
    assert from_args(args(model="llama3", base_url="http://127.0.0.1:8000/v1")).models == ["llama3"]


def test_fflags_from_the_file_and_the_command_line(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("fflags: -fno-range-check -ffixed-line-length-132\nmodule_search: [src, lib]\n")
    c = from_args(args(config=str(f), fflags="-O1 '-DX=a b'"))
    assert c.fflags == ["-fno-range-check", "-ffixed-line-length-132", "-O1", "-DX=a b"]
    assert c.module_search == ["src", "lib"]
    assert Config.from_dict({"fflags": ["-g", "-fcheck=bounds"]}).fflags == ["-g", "-fcheck=bounds"]


@pytest.mark.parametrize("value, words", [
    ("-freal-4-real-8", "changes the default kinds"),
    ("-O2 main.f", "not a compiler flag"),
    ("-o out", "set by the harness"),
    ("-O2 '-DX", "cannot split"),
    (3, "expected a string of flags"),
])
def test_bad_fflags_name_the_key(value, words):
    with pytest.raises(UserError) as ei:
        Config.from_dict({"fflags": value})
    assert "key 'fflags'" in str(ei.value) and words in str(ei.value)
