"""The sample kernel collection (fortran_kernels/) and its oracle EXPECTED.yaml.

* every sample file compiles with gfortran (integration: runs gfortran);
* the driver program links against the kernels' objects, runs, prints a finite checksum;
* EXPECTED.yaml is well formed and matches the routines in the files;
* the rules model (front end + translator) gives the expected outcome for each kernel.
  That test skips only while ``port_fortran.fortran.parse_file`` or
  ``port_fortran.translate.translate_kernel`` cannot be imported; a wrong outcome fails.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "fortran_kernels"
INCLUDE = KERNELS / "include"
DRIVER = KERNELS / "driver" / "timeloop.f90"
SELFCHECK = KERNELS / "driver" / "selfcheck.f90"
EXPECTED_FILE = KERNELS / "EXPECTED.yaml"

PATTERNS = {"parallel_for", "mdrange", "reduce", "scan", "atomic", "serial"}
REASON_CODES = {"io-in-kernel", "equivalence", "entry", "unsupported-construct", "common-block"}
FORTRAN_SUFFIXES = {".f", ".f90", ".F90", ".F", ".for", ".f77"}

# The driver's checksum with gfortran 12 at the default optimisation level.
DRIVER_CHECKSUM = 3.4948951224371690e01


def _expected() -> list[dict]:
    with open(EXPECTED_FILE) as fh:
        return yaml.safe_load(fh)


def _kernel_files() -> list[Path]:
    """Sample source files with routines (the driver and include dirs excluded)."""
    return sorted(
        p for p in KERNELS.iterdir() if p.is_file() and p.suffix in FORTRAN_SUFFIXES
    )


def _is_fixed_form(path: Path) -> bool:
    return path.suffix.lower() in {".f", ".for", ".f77"}


def _code_lines(path: Path) -> list[str]:
    """Source lines without comment lines (fixed form: C, c, *, ! in column 1)."""
    out = []
    for line in path.read_text().splitlines():
        if _is_fixed_form(path) and line[:1] in ("C", "c", "*", "!"):
            continue
        if line.lstrip().startswith("!"):
            continue
        out.append(line)
    return out


_ROUTINE = re.compile(r"\b(?:subroutine|function)\s+([a-z_][a-z0-9_]*)\s*\(", re.IGNORECASE)


def _routines(path: Path) -> set[str]:
    names = set()
    for line in _code_lines(path):
        if re.match(r"\s*end\b", line, re.IGNORECASE):
            continue
        m = _ROUTINE.search(line)
        if m:
            names.add(m.group(1).lower())
    return names


def _gfortran_flags(path: Path) -> list[str]:
    flags = ["-c", "-I", str(INCLUDE)]
    if _is_fixed_form(path):
        flags.append("-std=legacy")
    if path.suffix in {".F90", ".F"}:
        flags.append("-cpp")
    if re.search(r"^\s*[!cC*]\$omp", path.read_text(), re.IGNORECASE | re.MULTILINE):
        flags.append("-fopenmp")
    return flags


def _gfortran() -> str:
    exe = shutil.which("gfortran")
    if exe is None:
        pytest.fail("gfortran is not on PATH (run `make system`)")
    return exe


def _compile(path: Path, out_dir: Path, extra: tuple[str, ...] = ()) -> Path:
    obj = out_dir / (path.stem + "".join(extra).replace("-", "_") + ".o")
    cmd = [_gfortran(), *_gfortran_flags(path), *extra, "-J", str(out_dir),
           str(path), "-o", str(obj)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    return obj


# --------------------------------------------------------------------------- compile


@pytest.mark.integration
@pytest.mark.parametrize("path", _kernel_files(), ids=lambda p: p.name)
def test_sample_file_compiles(path, tmp_path):
    obj = _compile(path, tmp_path)
    assert obj.stat().st_size > 0
    if path.suffix == ".F90":  # the single-precision variant too
        _compile(path, tmp_path, ("-DSINGLE",))


@pytest.fixture(scope="module")
def kernel_objects(tmp_path_factory):
    """Every sample file compiled once (objects and .mod files in one directory)."""
    out = tmp_path_factory.mktemp("kernel_objs")
    return out, [_compile(p, out) for p in _kernel_files()]


def _build_and_run(program: Path, kernel_objects, tmp_path) -> str:
    mod_dir, objs = kernel_objects
    exe = tmp_path / program.stem
    cmd = [_gfortran(), "-fopenmp", "-I", str(mod_dir), str(program),
           *map(str, objs), "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path, env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.integration
def test_driver_links_against_kernels_and_prints_finite_checksum(kernel_objects, tmp_path):
    out = _build_and_run(DRIVER, kernel_objects, tmp_path)
    m = re.search(r"CHECKSUM\s+(\S+)", out)
    assert m, out
    value = float(m.group(1))
    assert math.isfinite(value)
    assert value == pytest.approx(DRIVER_CHECKSUM, rel=1e-8)


@pytest.mark.integration
def test_every_kernel_agrees_with_an_independent_reference(kernel_objects, tmp_path):
    """driver/selfcheck.f90 checks each kernel against intrinsics, conservation laws or
    known values: the originals that ports are compared with must themselves be right."""
    text = SELFCHECK.read_text().lower()
    unchecked = [e["kernel"] for e in _expected() if not re.search(rf"\b{e['kernel']}\b", text)]
    assert not unchecked, f"selfcheck.f90 does not exercise {unchecked}"
    out = _build_and_run(SELFCHECK, kernel_objects, tmp_path)
    assert "SELFCHECK FAILURES 0" in out, out


# --------------------------------------------------------------------------- EXPECTED.yaml


def test_expected_yaml_well_formed():
    entries = _expected()
    assert isinstance(entries, list)
    seen = set()
    for e in entries:
        where = f"{e.get('file')}:{e.get('kernel')}"
        assert {"file", "kernel", "outcome", "note"} <= set(e), where
        path = KERNELS / e["file"]
        assert path.is_file(), f"{where}: no such file"
        assert e["kernel"] == e["kernel"].lower(), where
        assert e["kernel"] in _routines(path), f"{where}: no SUBROUTINE/FUNCTION of that name"
        assert (e["file"], e["kernel"]) not in seen, f"{where}: listed twice"
        seen.add((e["file"], e["kernel"]))
        assert e["note"].strip(), where
        if e["outcome"] == "port":
            assert e.get("patterns"), where
            assert set(e["patterns"]) <= PATTERNS, where
            assert e.get("mode", "full") in ("full", "hybrid"), where
            if e.get("mode") == "hybrid":  # refused as a whole: the reason, and how many nests move
                assert e.get("reason_code") in REASON_CODES and e.get("reason", "").strip(), where
                assert isinstance(e.get("nests"), int) and e["nests"] >= 1, where
            else:
                assert "reason_code" not in e, where
        else:
            assert e["outcome"] == "refuse", where
            assert e.get("reason_code") in REASON_CODES, where
            assert e.get("reason", "").strip(), where
            assert "patterns" not in e, where

    refused = sum(e["outcome"] == "refuse" or e.get("mode") == "hybrid" for e in entries)
    assert len(entries) >= 25
    assert refused / len(entries) <= 0.20


def test_fixed_form_lines_fit_in_72_columns():
    """Text past column 72 is silently dropped by fixed-form compilers."""
    for path in [*_kernel_files(), *INCLUDE.iterdir()]:
        if _is_fixed_form(path) or path.suffix == ".inc":
            for no, line in enumerate(path.read_text().splitlines(), 1):
                assert len(line) <= 72, f"{path.name}:{no} is {len(line)} columns"


def test_every_sample_routine_has_an_expectation():
    """The demo ports every routine it finds; each one needs an oracle entry."""
    listed = {(e["file"], e["kernel"]) for e in _expected()}
    for path in _kernel_files():
        for name in _routines(path):
            assert (path.name, name) in listed, f"{path.name}: {name} missing from EXPECTED.yaml"


def test_expected_covers_every_pattern_and_refusal():
    entries = _expected()
    used = {p for e in entries for p in e.get("patterns", [])}
    assert used == PATTERNS
    codes = {e["reason_code"] for e in entries if e["outcome"] == "refuse" or e.get("mode") == "hybrid"}
    assert {"io-in-kernel", "equivalence", "entry"} <= codes


# --------------------------------------------------------------------------- rules model


def _rules_api():
    """parse_file and translate_kernel, or a skip while those packages are not importable."""
    try:
        from port_fortran.fortran import parse_file
    except ImportError as exc:
        pytest.skip(f"front end not importable yet: {exc}")
    try:
        from port_fortran.translate import translate_kernel
    except ImportError as exc:
        pytest.skip(f"translator not importable yet: {exc}")
    from port_fortran.records import Port, TranslationRefused

    return parse_file, translate_kernel, Port, TranslationRefused


@pytest.mark.parametrize(
    "entry", _expected(), ids=lambda e: f"{e['file']}:{e['kernel']}"
)
def test_rules_outcome_matches_expected(entry):
    parse_file, translate_kernel, Port, TranslationRefused = _rules_api()
    path = KERNELS / entry["file"]
    source = parse_file(str(path), include_dirs=(str(INCLUDE),), defines={})
    found = [k for k in source.kernels if k.name == entry["kernel"]]
    assert found, (
        f"{entry['file']}: kernel {entry['kernel']} not found; front end saw "
        f"{[k.name for k in source.kernels]}, errors {[str(d) for d in source.errors]}"
    )
    kernel = found[0]

    if entry.get("mode") == "hybrid":
        # the full port is refused for the stated reason; --mode auto makes it a hybrid port
        from port_fortran.translate.hybrid import translate_mode

        with pytest.raises(TranslationRefused) as info:
            translate_kernel(kernel, source)
        assert entry["reason_code"] in [d.code for d in info.value.diagnostics]
        port = translate_mode(kernel, source, None, "auto")
        assert port.mode == "hybrid", port.notes
        assert len(port.hybrid["outlined"]) == entry["nests"], port.notes
        missing = [p for p in entry["patterns"] if p not in port.patterns]
        assert not missing, f"patterns {port.patterns} lack {missing}; notes: {port.notes}"
        assert port.hybrid["source"] in port.files and f"{kernel.name}.kokkos.cpp" in port.files
    elif entry["outcome"] == "port":
        try:
            port = translate_kernel(kernel, source)
        except TranslationRefused as exc:
            pytest.fail(f"expected a port with {entry['patterns']}, refused: {exc}")
        assert isinstance(port, Port)
        missing = [p for p in entry["patterns"] if p not in port.patterns]
        assert not missing, f"patterns {port.patterns} lack {missing}; notes: {port.notes}"
    else:
        with pytest.raises(TranslationRefused) as info:
            translate_kernel(kernel, source)
        codes = [d.code for d in info.value.diagnostics]
        assert entry["reason_code"] in codes, f"refused with {codes}, expected {entry['reason_code']}"
        assert all(d.line > 0 for d in info.value.diagnostics), "refusal diagnostics need lines"
