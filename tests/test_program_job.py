"""Main programs in a run (pipeline/program_job.py): a hybrid port proven by running the
program with the configured arguments, the nests its run never reaches kept in Fortran, a
run that reaches none refused; DO CONCURRENT read as a nest of DO loops."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.config import Config
from port_fortran.errors import UserError

DATA = Path(__file__).parent / "data" / "programs"


def _kokkos_or_skip():
    from port_fortran.build_runner.kokkos import find_install

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")


def _run(tmp_path, config: str) -> dict:
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n" + config)
    out = tmp_path / "out"
    main([str(DATA), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet",
          "--kernel", "sumsprog"])
    doc = json.loads((out / "report.json").read_text())
    return {k["name"]: k for k in doc["kernels"]}


def test_main_program_is_proven_by_its_run_and_unreached_nests_stay_fortran(tmp_path):
    _kokkos_or_skip()
    ks = _run(tmp_path, "programs:\n  sumsprog: {args: '1000', ignore: time}\n")
    k = ks["sumsprog"]
    assert k["status"] == "verified", k["reason"]
    assert k["mode"] == "hybrid"
    lines = sorted(o["line"] for o in k["hybrid"]["outlined"])
    assert lines == [19, 28]  # the DO CONCURRENT and the reduction
    kept = {x["line"]: x["code"] for x in k["hybrid"]["kept"]}
    assert kept[23] == "not-exercised"  # under n > 100000: the run never got there
    assert "reduce" in k["patterns"] and "parallel_for" in k["patterns"]
    outcome = json.loads(next((tmp_path / "out").rglob("sumsprog/outcome.json")).read_text())
    assert outcome["verdicts"][0]["calls"] == {"sumsprog_l19": 1, "sumsprog_l28": 1}


def test_a_run_that_reaches_no_nest_is_refused_naming_the_configuration(tmp_path):
    _kokkos_or_skip()
    ks = _run(tmp_path, "")  # no arguments: the program prints its usage and stops
    k = ks["sumsprog"]
    assert k["status"] == "refused"
    assert k["reason_code"] == "program-not-exercised"
    assert "programs: {sumsprog: {args:" in k["reason"]


def test_programs_configuration_is_checked():
    cfg = Config.from_dict({"programs": {"Heat": {"args": "10 20", "ignore": "time|rate", "rtol": 1e-6}}})
    assert cfg.programs == {"heat": {"args": ["10", "20"], "ignore": ["time|rate"], "rtol": 1e-6}}
    with pytest.raises(UserError, match="programs.heat.argz"):
        Config.from_dict({"programs": {"heat": {"argz": "1"}}})
    with pytest.raises(UserError, match="not a regular expression"):
        Config.from_dict({"programs": {"heat": {"ignore": "(unclosed"}}})


def test_do_concurrent_is_a_nest_of_do_loops(tmp_path):
    from port_fortran.fortran import ir, parse_file
    from port_fortran.fortran.analysis import analyse_kernel

    src = tmp_path / "dc.f90"
    src.write_text("subroutine dc(n, a, c)\n  integer :: n, i, j\n  real(8) :: a(n,n), c(n)\n"
                   "  do concurrent (j = 1:n, i = 1:n:2)\n    a(i,j) = 2 * a(i,j)\n  end do\n"
                   "  do concurrent (i = 1:n, c(i) > 0)\n    c(i) = sqrt(c(i))\n  end do\n"
                   "end subroutine\n")
    sf = parse_file(str(src))
    k = sf.kernels[0]
    assert not k.unsupported
    outer, second = [s for s in k.body if isinstance(s, ir.Do)]
    assert (outer.var, outer.line) == ("j", 4)
    inner = outer.body[0]
    assert isinstance(inner, ir.Do) and inner.var == "i" and inner.step is not None
    assert isinstance(second.body[0], ir.If)  # the mask
    analyse_kernel(k, sf)
    assert outer.info.parallel and second.info.parallel
