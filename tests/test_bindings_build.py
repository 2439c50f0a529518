"""Ports called from Python with numpy arrays give what the C++ driver gives on the same
inputs, on the Serial and OpenMP backends; wrong dtypes, shapes and orders each get their
own clear error. Two kernels (tests/data/bindings/bindk.f90) cover every kind of argument:
a CHARACTER flag, a 2-D array with a leading dimension, an array with lower bound 0,
complex and LOGICAL arrays, intent(out)/intent(inout) scalars, a COMMON block and a
FUNCTION result. Builds: each port and its C++ driver per backend, and one module of both
ports per backend (through `port-fortran bindings --module`)."""
from __future__ import annotations

import importlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from port_fortran.bindings.plan import plan_function
from port_fortran.cli import main
from port_fortran.fortran import parse_file
from port_fortran.harness.inputs import cases, make_inputs, read_records, write_records
from port_fortran.translate import translate_kernel, write_port

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data" / "bindings"
# on a GPU machine: PF_BINDINGS_BACKENDS=cuda (the comparison and the error checks then run
# through a CUDA module: the entry copies numpy's host arrays to the device and back)
BACKENDS = tuple(b for b in os.environ.get("PF_BINDINGS_BACKENDS", "serial,openmp").split(",") if b)
KERNELS = ("blend", "wsum")

# the child process: set the COMMON members, call, return every argument and result
RUNNER = """
import importlib, pickle, sys
import numpy as np
mod = importlib.import_module(sys.argv[1])
out = []
for c in pickle.load(open(sys.argv[2], "rb")):
    for blk, members in c["common"].items():
        for name, v in members.items():
            getattr(getattr(mod.common, blk), name)[...] = v
    ret = getattr(mod, c["kernel"])(*c["args"])
    common = {blk: {n: np.array(getattr(getattr(mod.common, blk), n)) for n in ms} for blk, ms in c["common"].items()}
    out.append({"ret": ret, "args": c["args"], "common": common, "info": mod.kokkos_info()})
pickle.dump(out, open(sys.argv[3], "wb"))
"""


def _refine_spec(h) -> None:
    """n is an extent (inference took it for a stride): sizes a user would give."""
    h.spec  # inferred and written
    data = yaml.safe_load(h.spec_path.read_text())
    if "n" in data["args"] and h.kernel.name == "blend":
        data["args"]["n"] = {"role": "size", "intent": "in"}
        data["sizes"]["correctness"] = [{"n": 1, "m": 1}, {"n": 7, "m": 3}, {"n": 41, "m": 17}]
        data["sizes"]["timing"] = {"n": 41, "m": 17}
    h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
    h.reload_spec()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from port_fortran.harness import Harness

    root = tmp_path_factory.mktemp("bindings")
    sf = parse_file(str(DATA / "bindk.f90"))
    hs = {}
    for name in KERNELS:
        k = next(k for k in sf.kernels if k.name == name)
        write_port(translate_kernel(k, sf), root / name)
        hs[name] = Harness(k, sf, root / name)
        _refine_spec(hs[name])
        for b in BACKENDS:
            assert hs[name].build(b).ok, hs[name]._builds[b].condensed
            v = hs[name].verify(b, seeds=[11])
            assert v.passed, v.reason
    for b in BACKENDS:
        rc = main(["bindings", str(root / "blend"), str(root / "wsum"), "--module", f"bindtest_{b}",
                   "--backend", b, "-o", str(root / "py")])
        assert rc == 0
    return root, hs, sf


def _py_value(a, data):
    v = data.item() if data.ndim == 0 else data
    if a.base == "logical":
        return bool(v != 0)
    if a.base == "character":
        return v.decode()
    return {"integer": int, "real": float, "complex": complex}[a.base](v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_calls_equal_the_cpp_driver(built, backend, tmp_path):
    root, hs, sf = built
    record = json.loads((root / "py" / f"bindtest_{backend}.build.json").read_text())
    assert record["backend"] == backend and set(record["functions"]) == set(KERNELS)
    assert "cmake" in record["cmake"]["path"] and record["kokkos"]["version"]
    jobs, expected = [], []
    for name, h in hs.items():
        f = plan_function(next(k for k in sf.kernels if k.name == name), sf)
        names = [a.name for a in h.kernel.args] + (["result"] if h.kernel.result is not None else [])
        exe = h._builds[backend].artifacts["pf_driver"]
        for case in cases(h.spec, 20260101)[:4]:
            recs, _ = make_inputs(h.kernel, h.spec, case)
            fin, fout = tmp_path / f"{name}-in.bin", tmp_path / f"{name}-out.bin"
            write_records(fin, recs)
            res = h._run(exe, ["run", str(fin), str(fout)], tmp_path, backend)
            assert res.ok, res.stderr
            by = {r.name: r for r in recs}
            args = [np.asfortranarray(by[a.name].data.copy()) if a.is_array else _py_value(a, by[a.name].data)
                    for a in f.python_args]
            common = {c.py_name: {m.name: by[m.name].data.copy() for m in c.members if m.name in by}
                      for c in f.commons}
            jobs.append({"kernel": name, "args": args, "common": common})
            expected.append((f, {r.name: r.data for r in read_records(fout, names)}, case.label()))
    cin, cout = tmp_path / "cases.pkl", tmp_path / "out.pkl"
    cin.write_bytes(pickle.dumps(jobs))
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    env = dict(os.environ, PYTHONPATH=str(root / "py"), **hs["blend"].run_env(backend))
    res = subprocess.run([sys.executable, str(script), f"bindtest_{backend}", str(cin), str(cout)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    got = pickle.loads(cout.read_bytes())
    assert got[0]["info"]["backend"] == backend
    if backend in ("serial", "openmp"):
        assert got[0]["info"]["concurrency"] == (1 if backend == "serial" else hs["blend"].threads)
    compared = 0
    for (f, want, label), out in zip(expected, got):
        ret = out["ret"] if len(f.returns) > 1 else (out["ret"],) if f.returns else ()
        assert len(ret) == len(f.returns), (f.name, label)
        for r, v in zip(f.returns, ret):
            assert np.asarray(v, dtype=want[r].dtype) == want[r], (f.name, label, r, v, want[r])
            compared += 1
        for a, v in zip(f.python_args, out["args"]):
            if a.is_array:  # written in place (and intent(in) ones untouched)
                np.testing.assert_array_equal(v, want[a.name], err_msg=f"{f.name} {label} {a.name}")
                compared += 1
        for blk, members in out["common"].items():
            for m, v in members.items():
                np.testing.assert_array_equal(v, want[m], err_msg=f"{f.name} {label} COMMON {blk}.{m}")
    assert compared >= 20


@pytest.fixture()
def first_module(built):
    """The first backend's module (Serial unless PF_BINDINGS_BACKENDS says otherwise)."""
    root = built[0]
    sys.path.insert(0, str(root / "py"))
    try:
        yield importlib.import_module(f"bindtest_{BACKENDS[0]}")
    finally:
        sys.path.remove(str(root / "py"))


def _blend_args(n=5, m=3, lda=None):
    lda = lda or n + 2
    a = np.asfortranarray(np.arange(lda * m, dtype=np.float64).reshape(lda, m, order="F") / 10)
    return dict(mode="A", n=n, m=m, a=a, lda=lda, b=np.linspace(-1, 1, n + 2), z=(np.arange(n) + 1j).astype(np.complex128),
                mask=np.array([1, 0] * n, dtype=np.int32)[:n], count=7)


def _call(mod, kw, **opts):
    return mod.blend(kw["mode"], kw["n"], kw["m"], kw["a"], kw["lda"], kw["b"], kw["z"], kw["mask"], kw["count"],
                     **opts)


def test_scalars_returned_and_arrays_written_in_place(first_module):
    mod = first_module
    mod.common.bcfg.scale[...] = 2.0
    mod.common.bcfg.nsh[...] = 3
    kw = _blend_args()
    b0, z0 = kw["b"].copy(), kw["z"].copy()
    total, count, found = _call(mod, kw)
    s = kw["a"][:5, :].sum(axis=1)
    np.testing.assert_allclose(kw["b"][1:6], b0[1:6] + 2.0 * s)
    assert kw["b"][0] == b0[0] and kw["b"][6] == b0[6]  # b(0) and b(n+1) are read, not written
    np.testing.assert_allclose(kw["z"][kw["mask"] == 1], z0[kw["mask"] == 1] * 1j + 3)
    assert total == pytest.approx(kw["b"][1:6].sum()) and count == 12 and found is (total > 0)
    assert mod.wsum(3, np.ones(3), np.arange(3.0)) == 3.0
    assert mod.__backend__ == BACKENDS[0] and set(mod.__ports__) == {"blend", "wsum"}


def test_wrong_dtype_is_named(first_module):
    kw = _blend_args()
    kw["a"] = kw["a"].astype(np.float32)
    with pytest.raises(TypeError, match=r"blend\(\): argument 4 'a' \(real\(8\) a\(lda, m\), intent\(in\)\): "
                                        r"dtype float32, expected float64; pass a.astype\(np.float64\)"):
        _call(first_module, kw)
    kw = _blend_args()
    kw["mask"] = kw["mask"].astype(bool)
    with pytest.raises(TypeError, match=r"argument 8 'mask'.*dtype bool, expected int32 \(gfortran's LOGICAL"):
        _call(first_module, kw)
    kw = _blend_args()
    kw["a"] = kw["a"].tolist()
    with pytest.raises(TypeError, match=r"'a'.*expected a numpy array of dtype float64, got list"):
        _call(first_module, kw)
    with pytest.raises(TypeError, match=r"argument 2 'n' \(integer\(4\) n, intent\(in\)\): expected an integer"):
        _call(first_module, {**_blend_args(), "n": 5.0})
    with pytest.raises(ValueError, match=r"argument 1 'mode'.*expected one character"):
        _call(first_module, {**_blend_args(), "mode": "AB"})


def test_wrong_shape_is_named(first_module):
    kw = _blend_args(lda=7)
    kw["lda"] = 6  # the array's leading dimension is 7
    with pytest.raises(ValueError, match=r"'a' .*shape \(7, 3\): dimension 1 must have exactly 6 elements "
                                         r"\(1:lda for these arguments\), it has 7"):
        _call(first_module, kw)
    kw = _blend_args()
    kw["b"] = kw["b"][:-1]  # b(0:n+1) needs n+2 elements
    with pytest.raises(ValueError, match=r"'b' .*dimension 1 must have at least 7 elements \(0:n\+1"):
        _call(first_module, kw)
    kw = _blend_args()
    kw["z"] = kw["z"].reshape(1, -1)
    with pytest.raises(ValueError, match=r"'z' .*expected a 1-D array, got a 2-D array of shape \(1, 5\)"):
        _call(first_module, kw)
    kw = _blend_args()
    kw["b"].flags.writeable = False
    with pytest.raises(ValueError, match=r"'b' .*read-only and the routine writes it"):
        _call(first_module, kw)


def test_wrong_order_is_refused_unless_copy_is_asked(first_module):
    mod = first_module
    mod.common.bcfg.scale[...] = 0.5
    mod.common.bcfg.nsh[...] = 1
    ref = _blend_args()
    want = _call(mod, ref)
    kw = _blend_args()
    a_f = kw["a"]
    kw["a"] = np.ascontiguousarray(a_f)  # C order
    with pytest.raises(ValueError, match=r"'a' .*in C \(row-major\) order.*np.asfortranarray\(a\), or call with "
                                         r"copy=True"):
        _call(mod, kw)
    wide = np.zeros(2 * len(kw["b"]))
    wide[::2] = kw["b"]
    kw["b"] = wide[::2]  # a strided view: written through the copy back into `wide`
    with pytest.raises(ValueError, match=r"'b' .*not contiguous \(a strided view\)"):
        _call(mod, {**kw, "a": a_f})
    assert _call(mod, kw, copy=True) == want  # both copied; b's copy written back
    np.testing.assert_array_equal(wide[::2], ref["b"])
    np.testing.assert_array_equal(kw["z"], ref["z"])


def test_run_with_python_records_the_module(tmp_path):
    """`--python` on a run: one module of the verified kernels in OUT/python, in the run
    database and the report (one kernel, one backend: the lean version of a real run)."""
    from port_fortran.reports.db import RunDB

    cfg = tmp_path / "fast.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    rc = main(["run", str(DATA / "bindk.f90"), "--kernel", "wsum", "--backends", BACKENDS[0], "--out", str(out),
               "--config", str(cfg), "--python-module", "wsum_ports", "--quiet"])
    assert rc == 0
    db = RunDB.in_dir(out)
    (row,) = db.python_modules(db.latest_run())
    assert row["ok"] and row["module"] == "wsum_ports" and row["backend"] == BACKENDS[0]
    assert json.loads(row["kernels"]) == ["bindk.f90:wsum"] and "cmake" in row["cmake"]
    db.close()
    report = json.loads((out / "report.json").read_text())
    k = report["kernels"][0]
    assert k["python"]["module"] == "wsum_ports" and k["python"]["ok"] and k["cmake"].startswith("cmake ")
    assert k["sources"]["fortran"]["first_line"] == 46 and "wsum_kokkos" in k["sources"]["kokkos"]["text"]
    assert 'id="python-table"' in (out / "report.html").read_text()
    call = "import numpy as np, wsum_ports as m; print(m.wsum(3, np.ones(3), np.arange(3.0)))"
    res = subprocess.run([sys.executable, "-c", call], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(out / "python"), OMP_PROC_BIND="false"))
    assert res.returncode == 0 and res.stdout.strip() == "3.0", res.stderr
