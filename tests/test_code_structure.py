"""The shape of the package, checked statically (ast, nothing imported):

* imports: the modules of ``port_fortran/`` import each other without circles. Imports at
  module level (the module body, ``if``/``try`` blocks there, class bodies; not
  ``if TYPE_CHECKING``) must form a DAG, strictly: a circle there is an import-order bug
  waiting to happen. Imports inside functions count too (a deferred import that closes a
  circle is the same circle, hidden), except the circles listed in
  :data:`KNOWN_FUNCTION_LEVEL_CIRCLES`, each with the reason it is still there; that list
  may only shrink.
* size: no module over :data:`MAX_LINES` lines unless :data:`ONE_IDEA` says why it is one
  idea.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "port_fortran"
MAX_LINES = 700

# every strongly connected component of the import graph (function-level imports
# included) still present, as the set of its modules, with why it is not broken yet
KNOWN_FUNCTION_LEVEL_CIRCLES: dict[frozenset, str] = {
}

# modules over MAX_LINES that are one idea, with why
ONE_IDEA: dict[str, str] = {
}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


def _targets(name: str, is_pkg: bool, node, mods) -> set[str]:
    """The package modules an import statement of module ``name`` names: ``from pkg import
    sub`` of a submodule is the submodule, ``from pkg import f`` the package's
    ``__init__``. (Python also runs the ``__init__`` of every package above an imported
    module; those edges are left out: a package re-exporting its API is not a circle of
    the modules that do the work.)"""
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    if isinstance(node, ast.Import):
        found = {a.name for a in node.names}
    else:
        mod = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else [])) \
            if node.level else (node.module or "")
        for a in node.names:
            found.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod)
    return {t for t in found if t in mods and t != name}


def _module_level(tree: ast.Module):
    stack = list(tree.body)
    while stack:
        s = stack.pop()
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            yield s
        elif isinstance(s, ast.If):
            if not (isinstance(s.test, ast.Name) and s.test.id == "TYPE_CHECKING"):
                stack += s.body + s.orelse
        elif isinstance(s, ast.Try):
            stack += s.body + s.orelse + s.finalbody + [x for h in s.handlers for x in h.body]
        elif isinstance(s, ast.ClassDef):
            stack += [x for x in s.body if not isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))]


def import_graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level graph, graph of every import), module names without ``port_fortran.``."""
    mods = _modules()
    top, every = {}, {}
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        top[name] = set().union(*[_targets(name, is_pkg, n, mods) for n in _module_level(tree)])
        every[name] = set().union(*[_targets(name, is_pkg, n, mods) for n in ast.walk(tree)
                                    if isinstance(n, (ast.Import, ast.ImportFrom))])
    short = lambda g: {k.split(".", 1)[-1]: {v.split(".", 1)[-1] for v in vs} for k, vs in g.items()}  # noqa: E731
    return short(top), short(every)


def circles(graph: dict[str, set[str]]) -> list[frozenset]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def test_circles_finds_a_planted_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(g) == [frozenset({"a", "b", "c"})]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_module_level_imports_form_a_dag():
    top, _ = import_graphs()
    assert "harness.spec" in top and "fortran.ir" in top["fortran.dependence"]  # the graph is read
    found = circles(top)
    assert not found, "module-level import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


def test_no_import_circles_but_the_known_ones():
    _, every = import_graphs()
    found = set(circles(every))
    new = [c for c in found if c not in KNOWN_FUNCTION_LEVEL_CIRCLES]
    assert not new, "import circles (function-level imports included): " + \
        "; ".join(" <-> ".join(sorted(c)) for c in new)
    gone = [c for c in KNOWN_FUNCTION_LEVEL_CIRCLES if c not in found]
    assert not gone, f"circle(s) broken: remove them from KNOWN_FUNCTION_LEVEL_CIRCLES: {gone}"


def test_no_module_over_the_limit_unless_one_idea():
    sizes = {str(p.relative_to(PKG)): len(p.read_text().splitlines()) for p in PKG.rglob("*.py")}
    over = {m: n for m, n in sizes.items() if n > MAX_LINES and m not in ONE_IDEA}
    assert not over, f"modules over {MAX_LINES} lines (split them, or say in ONE_IDEA why each is one idea): {over}"
    stale = [m for m in ONE_IDEA if sizes.get(m, 0) <= MAX_LINES]
    assert not stale, f"ONE_IDEA lists modules no longer over the limit: {stale}"


def _sources() -> dict[str, str]:
    return {str(p.relative_to(PKG)): p.read_text() for p in PKG.rglob("*.py")}


def test_one_cache_root_and_one_parse_defines():
    """Every cache lives under ``cache.cache_root`` (the only reader of PORT_FORTRAN_CACHE:
    the parse cache used to follow XDG_CACHE_HOME, the Kokkos installs did not), and
    defines are read by ``config.parse_defines`` only."""
    src = _sources()
    readers = sorted(m for m, t in src.items() if "PORT_FORTRAN_CACHE\"" in t or "XDG_CACHE_HOME" in t)
    assert readers == ["cache.py"], readers
    defs = sorted(m for m, t in src.items() if "def parse_defines(" in t)
    assert defs == ["config.py"], defs


def test_no_short_import_aliases():
    """``from . import render as R`` makes every reader look the name up: modules are
    imported under their own names (customary short names of numpy and of
    ``concurrent.futures`` excepted)."""
    short = []
    for path in PKG.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                short += [f"{path.relative_to(PKG)}:{n.lineno} as {a.asname}" for a in n.names
                          if a.asname and len(a.asname) <= 2 and a.asname not in ("np", "cf")]
    assert not short, short

