"""The real-code corpus: ``corpus.yaml`` loaded, checked and resolved into units of files.

A *code* is one public repository at a pinned commit; a *unit* is a group of its files that
form one program (what one ``port-fortran`` run gets). ``load()`` validates the file and
raises :class:`CorpusError` naming the code and key; ``unit_files()`` resolves a unit's
globs against a materialised copy (``get.py``), minus the code's excludes.

Layout of a materialised code: ``<src_root>/<code>/<repository paths>``; the files a code
asks to copy under another name (``copies``, e.g. Nekbone's ``mpi_dummy.h`` as ``mpif.h``,
which its own makefile does) land in ``<src_root>/<code>/_corpus_include/``, which is
added to the code's include directories.
"""
from __future__ import annotations

import re
import sys
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

HERE = Path(__file__).resolve().parent
CORPUS_YAML = HERE / "corpus.yaml"
STUBS_DIR = HERE / "stubs"
COPIES_DIR = "_corpus_include"

# BRIEF.md: the acceptance test, never fetched, read or used (repositories, lower case)
HELD_OUT_REPOSITORIES = {
    "reference-lapack/lapack", "reference-lapack/blas", "uk-mac/cloverleaf_ref", "uk-mac/cloverleaf",
}
HELD_OUT_WORDS = ("lapack", "cloverleaf", "polybench", "npb", "nas-parallel", "nasa-npb", "nas_parallel")
# bundled copies of held-out code inside other codes: must be excluded wherever they appear
HELD_OUT_BUNDLED = {("nek5000/nekbone", "src/blas.f"), ("nek5000/nekbone", "src/dsygv.f"),
                    ("nek5000/nekbone", "src/ssygv.f")}

FORTRAN_SUFFIXES = (".f", ".for", ".f77", ".F", ".FOR", ".F77", ".f90", ".F90", ".f95", ".F95",
                    ".f03", ".F03", ".f08", ".F08", ".fpp", ".FPP")


class CorpusError(ValueError):
    pass


@dataclass
class Exclude:
    files: str  # glob, relative to the code root
    reason: str


@dataclass
class Unit:
    name: str
    files: list[str]  # globs: the unit's own files (their routines are counted in this unit)
    context: list[str] = field(default_factory=list)  # globs: other files of the program (counted elsewhere)
    stubs: list[str] = field(default_factory=list)  # files of bench/realcode/stubs/ passed with the unit
    defines: dict[str, Optional[str]] = field(default_factory=dict)  # added to the code's
    fflags: list[str] = field(default_factory=list)  # added to the code's
    notes: str = ""
    # how the unit's main programs run for their proof: the run configuration's `programs`
    # ({name: {args, inputs, stdin, ignore, rtol}}; files relative to the code root), over the code's
    programs: dict = field(default_factory=dict)
    # what a user states about the unit's routines in the run configuration (`routines`:
    # extents and value ranges per argument, as the code's documentation gives them)
    routines: dict = field(default_factory=dict)


@dataclass
class Code:
    name: str
    repository: str  # github owner/name
    commit: str
    license: str
    fetch: list[str]  # repository path globs to materialise
    files: list[str]  # globs: the code's Fortran sources
    units: list[Unit]
    exclude: list[Exclude] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)  # relative to the code root; '@stubs/x': stubs/x
    defines: dict[str, Optional[str]] = field(default_factory=dict)  # NAME -> value, None: -DNAME
    fflags: list[str] = field(default_factory=list)
    copies: dict[str, str] = field(default_factory=dict)  # repository path -> name in _corpus_include/
    programs: dict = field(default_factory=dict)  # default `programs` of its units (Unit.programs)
    cpp: Optional[bool] = None  # preprocess every file (None: by suffix, .F/.F90 ...)
    notes: str = ""

    def unit(self, name: str) -> Unit:
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(f"{self.name}: no unit {name!r} (units: {', '.join(u.name for u in self.units)})")


# ----------------------------------------------------------------------------- loading


def _req(d: dict, key: str, where: str, types=(str,)):
    if key not in d:
        raise CorpusError(f"{where}: key '{key}' is required")
    v = d[key]
    if not isinstance(v, types):
        raise CorpusError(f"{where}: key '{key}' must be {' or '.join(t.__name__ for t in types)}, got {v!r}")
    return v


def _strs(d: dict, key: str, where: str, required: bool = False) -> list[str]:
    if key not in d:
        if required:
            raise CorpusError(f"{where}: key '{key}' is required (a list of strings)")
        return []
    v = d[key]
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise CorpusError(f"{where}: key '{key}' must be a list of non-empty strings, got {v!r}")
    return list(v)


def _defines(d: dict, where: str) -> dict[str, Optional[str]]:
    """NAME: VALUE (``-DNAME=VALUE``; ``""`` defines it empty) or NAME: ~ (``-DNAME``)."""
    v = d.get("defines") or {}
    if not isinstance(v, dict):
        raise CorpusError(f"{where}: key 'defines' must be a mapping NAME: VALUE (or NAME: ~)")
    return {str(k): None if x is None else str(x) for k, x in v.items()}


def define_flags(defines: dict[str, Optional[str]]) -> list[str]:
    return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in defines.items()]


_KNOWN_CODE_KEYS = {"programs", "name", "repository", "commit", "license", "fetch", "files", "units", "exclude",
                    "include_dirs", "defines", "fflags", "copies", "cpp", "notes"}
_KNOWN_UNIT_KEYS = {"name", "files", "context", "stubs", "defines", "fflags", "notes", "programs", "routines"}


def parse_corpus(data: dict, where: str = "corpus.yaml") -> list[Code]:
    if not isinstance(data, dict) or not isinstance(data.get("codes"), list):
        raise CorpusError(f"{where}: expected a mapping with a list 'codes'")
    codes: list[Code] = []
    names = set()
    for i, c in enumerate(data["codes"]):
        w = f"{where}: codes[{i}]"
        if not isinstance(c, dict):
            raise CorpusError(f"{w}: expected a mapping")
        name = _req(c, "name", w)
        w = f"{where}: code '{name}'"
        extra = set(c) - _KNOWN_CODE_KEYS
        if extra:
            raise CorpusError(f"{w}: unknown key(s) {sorted(extra)} (known: {', '.join(sorted(_KNOWN_CODE_KEYS))})")
        if name in names:
            raise CorpusError(f"{w}: duplicate code name")
        names.add(name)
        repo = _req(c, "repository", w)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*", repo):
            raise CorpusError(f"{w}: repository must be 'owner/name', got {repo!r}")
        commit = str(_req(c, "commit", w))
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            raise CorpusError(f"{w}: commit must be 40 lower-case hex digits, got {commit!r}")
        excludes = []
        for j, e in enumerate(c.get("exclude") or []):
            if not isinstance(e, dict) or not isinstance(e.get("files"), str) or not e.get("files"):
                raise CorpusError(f"{w}: exclude[{j}] needs 'files' (a glob)")
            if not isinstance(e.get("reason"), str) or len(e["reason"].strip()) < 10:
                raise CorpusError(f"{w}: exclude[{j}] ({e.get('files')}) needs a 'reason' that says why")
            excludes.append(Exclude(e["files"], e["reason"].strip()))
        units = []
        unames = set()
        for j, u in enumerate(_req(c, "units", w, (list,))):
            uw = f"{w}: units[{j}]"
            if not isinstance(u, dict):
                raise CorpusError(f"{uw}: expected a mapping")
            extra = set(u) - _KNOWN_UNIT_KEYS
            if extra:
                raise CorpusError(f"{uw}: unknown key(s) {sorted(extra)} (known: {', '.join(sorted(_KNOWN_UNIT_KEYS))})")
            un = _req(u, "name", uw)
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", un):
                raise CorpusError(f"{uw}: unit name {un!r} must be letters, digits, '_', '.', '-'")
            if un in unames:
                raise CorpusError(f"{uw}: duplicate unit name {un!r}")
            unames.add(un)
            ufiles = _strs(u, "files", f"{w}: unit '{un}'", required=True)
            if not ufiles:
                raise CorpusError(f"{w}: unit '{un}' names no files")
            units.append(Unit(un, ufiles, _strs(u, "context", uw), _strs(u, "stubs", uw), _defines(u, uw),
                              _strs(u, "fflags", uw), str(u.get("notes") or ""), _programs(u, uw),
                              _routines(u, uw)))
        if not units:
            raise CorpusError(f"{w}: no units")
        copies = c.get("copies") or {}
        if not isinstance(copies, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in copies.items()):
            raise CorpusError(f"{w}: key 'copies' must map repository paths to file names")
        codes.append(Code(name=name, repository=repo, commit=commit, license=str(c.get("license") or "not stated"),
                          fetch=_strs(c, "fetch", w, required=True), files=_strs(c, "files", w, required=True),
                          units=units, exclude=excludes, include_dirs=_strs(c, "include_dirs", w),
                          defines=_defines(c, w), fflags=_strs(c, "fflags", w), copies=dict(copies),
                          cpp=_cpp(c, w), programs=_programs(c, w),
                          notes=str(c.get("notes") or "")))
    check_held_out(codes)
    return codes


def _routines(c: dict, where: str) -> dict:
    """``routines: {name: {args: {arg: {extent, dims, range, values}}}}``, checked as
    port-fortran's configuration checks it."""
    v = c.get("routines")
    if v is None:
        return {}
    sys.path.insert(0, str(HERE.parent.parent))
    from port_fortran.config import _routines as check
    from port_fortran.errors import UserError

    try:
        return check(v, where)
    except UserError as exc:
        raise CorpusError(str(exc))


def _programs(c: dict, where: str) -> dict:
    """``programs: {name: {args, inputs, stdin, ignore, rtol}}``, checked as port-fortran's
    configuration checks it."""
    v = c.get("programs")
    if v is None:
        return {}
    sys.path.insert(0, str(HERE.parent.parent))
    from port_fortran.config import _programs as check
    from port_fortran.errors import UserError

    try:
        check(v, where)
    except UserError as exc:
        raise CorpusError(str(exc))
    return dict(v)


def unit_programs(code: "Code", unit: "Unit", src_root: Path) -> dict:
    """The unit's `programs` configuration (the code's, then the unit's), input files as
    absolute paths under the code's materialised root."""
    root = code_root(src_root, code)
    out: dict = {}
    for name, pv in list(code.programs.items()) + list(unit.programs.items()):
        d = dict(out.get(str(name).lower(), {}))
        d.update(pv or {})
        for key in ("inputs",):
            if d.get(key):
                items = [d[key]] if isinstance(d[key], str) else list(d[key])
                d[key] = [str(root / x) for x in items]
        if d.get("stdin"):
            d["stdin"] = str(root / d["stdin"])
        out[str(name).lower()] = d
    return out


def _cpp(c: dict, where: str) -> Optional[bool]:
    v = c.get("cpp")
    if v is not None and not isinstance(v, bool):
        raise CorpusError(f"{where}: key 'cpp' must be true or false, got {v!r}")
    return v


def check_held_out(codes: list[Code]) -> None:
    """No held-out repository, and the held-out files bundled in a listed code are excluded."""
    for c in codes:
        r = c.repository.lower()
        if r in HELD_OUT_REPOSITORIES or any(w in r for w in HELD_OUT_WORDS):
            raise CorpusError(f"code '{c.name}': repository {c.repository} is held out (BRIEF.md); remove it")
        for repo, path in sorted(HELD_OUT_BUNDLED):
            if repo == r:
                if not any(glob_match(path, e.files) for e in c.exclude):
                    raise CorpusError(f"code '{c.name}': {path} is a bundled copy of held-out code and must be "
                                      "listed under 'exclude'")
                for u in c.units:
                    for g in u.files + u.context:
                        if g == path:
                            raise CorpusError(f"code '{c.name}' unit '{u.name}' names held-out {path}")


def load(path: Path = CORPUS_YAML) -> list[Code]:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: not valid YAML ({exc})")
    return parse_corpus(data, where=str(path))


def select(codes: list[Code], names: Optional[list[str]]) -> list[Code]:
    if not names:
        return codes
    known = {c.name: c for c in codes}
    bad = [n for n in names if n not in known]
    if bad:
        raise CorpusError(f"unknown code(s) {', '.join(bad)}; known: {', '.join(known)}")
    return [known[n] for n in names]


# ----------------------------------------------------------------------------- resolving files


def code_root(src_root: Path, code: Code) -> Path:
    return Path(src_root).resolve() / code.name


def _glob(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.glob(pattern) if p.is_file())


def glob_match(path: str, pattern: str) -> bool:
    """Shell-style match of a '/'-separated path: '*' and '?' stay within one directory,
    '**' crosses directories, '[...]' is a character class."""
    rx, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            rx += ".*"
            i += 2
            continue
        if c == "*":
            rx += "[^/]*"
        elif c == "?":
            rx += "[^/]"
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                rx += re.escape(c)
            else:
                rx += "[" + pattern[i + 1:j].replace("!", "^", 1) + "]"
                i = j
        else:
            rx += re.escape(c)
        i += 1
    return re.fullmatch(rx, path) is not None


def excluded(code: Code, rel: str) -> Optional[Exclude]:
    for e in code.exclude:
        if glob_match(rel, e.files):
            return e
    return None


def _resolve(code: Code, root: Path, globs: list[str], where: str) -> list[Path]:
    out: list[Path] = []
    for g in globs:
        hits = [p for p in _glob(root, g) if p.suffix in FORTRAN_SUFFIXES or (p.suffix == ".c" and "context" in where)]
        if not hits:
            raise CorpusError(f"code '{code.name}' {where}: glob {g!r} matches no Fortran file under {root} "
                              "(materialise the code with get.py, or fix the glob)")
        for p in hits:
            rel = p.relative_to(root).as_posix()
            if excluded(code, rel) is None and p not in out:
                out.append(p)
    return out


def unit_files(code: Code, unit: Unit, src_root: Path) -> list[Path]:
    """The unit's own files (absolute), in corpus order, excludes removed."""
    return _resolve(code, code_root(src_root, code), unit.files, f"unit '{unit.name}' files")


def unit_context(code: Code, unit: Unit, src_root: Path) -> list[Path]:
    own = set(unit_files(code, unit, src_root))
    ctx = [p for p in _resolve(code, code_root(src_root, code), unit.context, f"unit '{unit.name}' context")
           if p not in own]
    return ctx + [stub_path(s) for s in unit.stubs]


def stub_path(name: str) -> Path:
    p = STUBS_DIR / name
    if not p.is_file():
        raise CorpusError(f"stub {name!r}: no file {p}")
    return p


def code_files(code: Code, src_root: Path) -> list[Path]:
    return _resolve(code, code_root(src_root, code), code.files, "files")


def include_dirs(code: Code, src_root: Path) -> list[Path]:
    root = code_root(src_root, code)
    dirs = [STUBS_DIR / d[len("@stubs/"):] if d.startswith("@stubs/") else root / d for d in code.include_dirs]
    if code.copies:
        dirs.append(root / COPIES_DIR)
    return dirs


def unit_defines(code: Code, unit: Unit) -> dict[str, Optional[str]]:
    d = dict(code.defines)
    d.update(unit.defines)
    return d


def unit_fflags(code: Code, unit: Unit) -> list[str]:
    return list(code.fflags) + [f for f in unit.fflags if f not in code.fflags]


def unit_program(code: Code, unit: Unit, src_root: Path):
    """The unit read as one program by the tool on PYTHONPATH (its files, then its context;
    the code's include dirs, defines and flags), as a run over it reads it. Raises what the
    front end raises."""
    from port_fortran.fortran.program_build import build_program

    files = unit_files(code, unit, src_root) + unit_context(code, unit, src_root)
    return build_program([], include_dirs=[str(p) for p in include_dirs(code, src_root)],
                         defines=unit_defines(code, unit), fflags=unit_fflags(code, unit),
                         files=[Path(f) for f in files])


def read_units(src_root: Path, names=None):
    """(code, unit, the unit's own files resolved, its program or the exception the front end
    raised) for every unit of the codes named (default all) that are materialised; a code
    not in ``src_root`` is said on stderr and skipped. For the censuses (no build)."""
    import sys

    for code in select(load(), names):
        if not code_root(src_root, code).exists():
            print(f"{code.name}: not in {src_root} (bench/realcode/get.py)", file=sys.stderr)
            continue
        for unit in code.units:
            own = {str(Path(f).resolve()) for f in unit_files(code, unit, src_root)}
            try:
                prog = unit_program(code, unit, src_root)
            except Exception as exc:  # one unit the front end cannot take must not stop a census
                prog = exc
            yield code, unit, own, prog


def check_partition(code: Code, src_root: Path) -> list[str]:
    """Problems with the units of a materialised code: a file of the code in no unit or in
    two, a unit file outside the code's files. Empty when the units partition the files."""
    problems = []
    files = set(code_files(code, src_root))
    owner: dict[Path, str] = {}
    for u in code.units:
        for p in unit_files(code, u, src_root):
            if p in owner:
                problems.append(f"{p.name}: in units '{owner[p]}' and '{u.name}'")
            owner[p] = u.name
            if p not in files:
                problems.append(f"{p.name}: in unit '{u.name}' but not in the code's files")
    for p in sorted(files - set(owner)):
        problems.append(f"{p.relative_to(code_root(src_root, code))}: in no unit")
    return problems


# ----------------------------------------------------------------------------- compile check


def compile_check(code: Code, unit: Unit, src_root: Path, gfortran: str = "gfortran",
                  timeout: float = 300.0, symbols: Optional[dict[str, set[str]]] = None) -> dict[str, str]:
    """Compile the unit's files and context with gfortran (``-c``, the unit's flags) in
    module-dependency order, found by retrying until no file makes progress. Returns
    {file (relative to the code root or stub name): '' if it compiled, else gfortran's first
    error line}. Used to decide which variants belong in the corpus. ``symbols``, when given,
    receives per compiled file the routines its object defines (``nm``: external procedures
    and module procedures, lower case, without gfortran's decorations)."""
    root = code_root(src_root, code)
    files = unit_files(code, unit, src_root) + unit_context(code, unit, src_root)
    flags = unit_fflags(code, unit) + [f"-I{d}" for d in include_dirs(code, src_root)]
    flags += define_flags(unit_defines(code, unit))
    status: dict[Path, str] = {}
    with tempfile.TemporaryDirectory(prefix="corpus-cc-") as tmp:
        todo = list(files)
        while todo:
            progress = False
            for f in list(todo):
                cmd = [gfortran, "-c", "-w", *flags, f"-J{tmp}", f"-I{tmp}", str(f), "-o",
                       str(Path(tmp) / (f.name + ".o"))]
                p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                                   cwd=str(f.parent))
                if p.returncode == 0:
                    status[f] = ""
                    todo.remove(f)
                    progress = True
                    if symbols is not None:
                        symbols[_key(root, f)] = object_routines(Path(tmp) / (f.name + ".o"))
                else:
                    status[f] = _first_error(p.stderr)
            if not progress:
                break

    return {_key(root, f): status.get(f, "not compiled") for f in files}


def _key(root: Path, p: Path) -> str:
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return f"stubs/{p.name}"


def object_routines(obj: Path) -> set[str]:
    """Procedures an object file defines, from ``nm``: external ones (``name_``) and module
    procedures (``__mod_MOD_name``, private ones too); not the main program nor the
    compiler's derived-type helpers (``__copy_*``, ``__final_*``)."""
    out = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    names = set()
    for ln in out.split("\n"):
        parts = ln.split()
        if len(parts) != 3 or parts[1] not in "TtWw":
            continue
        sym = parts[2]
        m = re.match(r"^__\w+?_MOD_(\w+)$", sym)
        if m:
            if not m.group(1).startswith("__"):  # __copy_*, __final_*, __vtab_*: the compiler's
                names.add(m.group(1).lower())
        elif parts[1] in "TW" and sym not in ("main", "MAIN__") and not sym.startswith("__"):
            names.add(sym[:-1].lower() if sym.endswith("_") else sym.lower())
    return names


def _first_error(stderr: str) -> str:
    lines = stderr.strip().split("\n")
    for i, ln in enumerate(lines):
        if "Error:" in ln or "Fatal Error" in ln:
            where = next((lines[k] for k in range(i, -1, -1) if re.match(r"^\S.*:\d+:\d+:$", lines[k])), "")
            return f"{where} {ln.strip()}".strip()
    return (lines[-1] if lines else "failed").strip()
