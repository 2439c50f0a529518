"""`port-fortran DIR` finds INCLUDE files in the tree's include/ directory, as `list` does,
and hands the same -I list to the harness (through the job's configuration)."""
from pathlib import Path

from port_fortran.config import Config
from port_fortran.pipeline.commands import plan_jobs
from port_fortran.pipeline.stages import make_stages
from port_fortran.reports.db import RunDB

ROOT = Path(__file__).resolve().parents[1]


def test_tree_include_dirs_reach_parse_and_jobs(tmp_path):
    cfg = Config()
    cfg.include_dirs = []
    db = RunDB.in_dir(tmp_path)
    run_id = db.start_run()
    jobs, errors = plan_jobs([str(ROOT / "fortran_kernels")], cfg, run_id, tmp_path, db, make_stages(cfg))
    inc = str(ROOT / "fortran_kernels" / "include")
    assert inc in cfg.include_dirs
    # heat.f, polyev.f, histogram.f and tridiag.f INCLUDE 'params.inc': no file errors
    assert errors == [], errors
    names = {j.kernel for j in jobs}
    assert {"heat1d", "polyev", "histi", "tridif"} <= names
    assert all(inc in j.config["include_dirs"] for j in jobs)
