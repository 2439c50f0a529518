"""Materialise the corpus codes at their pinned commits (never committed to this repository).

    python bench/realcode/get.py --mirror-root /work/.mirror          # from local git mirrors
    python bench/realcode/get.py                                      # git fetch from GitHub
    python bench/realcode/get.py --codes snap,stream --dest DIR

Each code lands in ``<dest>/<code>/`` (default ``bench/realcode/src/``) with only the
repository paths its ``fetch`` globs name, taken with ``git archive <commit>``; files a
code's own build copies under another name (``copies``) go to ``_corpus_include/``; the
commit is written to ``.corpus-commit``. Held-out files bundled inside a code (BRIEF.md)
are never written, whatever the globs say.

Sources: with ``--mirror-root``, the bare git directory ``<root>/<owner>+<name>/repo``
(or ``repo/.git``); without it, ``git fetch --depth 1 https://github.com/<owner>/<name>
<commit>`` into a cache (``<dest>/.git-cache/``). A code already materialised at its
commit is skipped unless ``--force``.
"""
from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus as cp  # noqa: E402

DEFAULT_DEST = cp.HERE / "src"
STAMP = ".corpus-commit"


class GetError(RuntimeError):
    pass


def _git(git_dir: Path, *args: str, binary: bool = False) -> bytes | str:
    p = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if p.returncode != 0:
        raise GetError(f"git {' '.join(args[:3])} in {git_dir}: {p.stderr.decode(errors='replace').strip()[:400]}")
    return p.stdout if binary else p.stdout.decode(errors="replace")


def mirror_git_dir(mirror_root: Path, repository: str) -> Path:
    base = Path(mirror_root) / repository.replace("/", "+")
    for cand in (base / "repo" / ".git", base / "repo", base):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    raise GetError(f"{repository}: no git mirror under {base} (expected {base}/repo, a bare git directory)")


def fetch_git_dir(cache: Path, code: cp.Code) -> Path:
    """A bare repository holding ``code.commit`` (shallow fetch by commit from GitHub)."""
    git_dir = cache / code.repository.replace("/", "+")
    if not (git_dir / "HEAD").is_file():
        git_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--bare", "-q", str(git_dir)], check=True)
    if subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{code.commit}^{{commit}}"],
                      capture_output=True).returncode != 0:
        url = f"https://github.com/{code.repository}"
        p = subprocess.run(["git", f"--git-dir={git_dir}", "fetch", "-q", "--depth", "1", url, code.commit],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise GetError(f"{code.name}: git fetch {url} {code.commit} failed: {p.stderr.strip()[:400]}")
    return git_dir


def select_paths(all_paths: list[str], code: cp.Code) -> list[str]:
    held = {path for repo, path in cp.HELD_OUT_BUNDLED if repo == code.repository.lower()}
    out = []
    for p in all_paths:
        if p in held:
            continue
        if any(cp.glob_match(p, g) for g in code.fetch):
            out.append(p)
    return out


def materialise(code: cp.Code, git_dir: Path, dest: Path, force: bool = False) -> tuple[Path, int]:
    """Write the code's files at its commit under ``dest/<code>``; (directory, files written)."""
    root = cp.code_root(dest, code)
    stamp = root / STAMP
    if not force and stamp.is_file() and stamp.read_text().strip() == _stamp_text(code).strip():
        return root, 0  # same commit and same fetch globs
    _git(git_dir, "cat-file", "-e", f"{code.commit}^{{commit}}")
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", code.commit).split("\n")
    paths = select_paths([p for p in listing if p], code)
    if not paths:
        raise GetError(f"{code.name}: the fetch globs {code.fetch} match nothing at {code.commit[:12]}")
    data = _git(git_dir, "archive", "--format=tar", code.commit, "--", *paths, binary=True)
    tmp = root.with_name(root.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        members = [m for m in tf.getmembers() if m.isfile() or m.isdir()]
        for m in members:
            if m.name.startswith("/") or ".." in Path(m.name).parts:
                raise GetError(f"{code.name}: unsafe path in archive: {m.name}")
        tf.extractall(tmp, members=members)
    for src, name in code.copies.items():
        s = tmp / src
        if not s.is_file():
            raise GetError(f"{code.name}: copies: {src} is not among the fetched files")
        d = tmp / cp.COPIES_DIR / name
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(s, d)
    (tmp / STAMP).write_text(_stamp_text(code))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root, len(paths)


def _stamp_text(code: cp.Code) -> str:
    """The commit, then the fetch globs (a changed ``fetch:`` materialises again)."""
    return code.commit + "\n" + " ".join(code.fetch) + "\n"


def materialised_commit(dest: Path, code: cp.Code) -> Optional[str]:
    stamp = cp.code_root(dest, code) / STAMP
    return stamp.read_text().split("\n")[0].strip() if stamp.is_file() else None


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror-root", type=Path, default=None,
                    help="directory of local git mirrors <owner>+<name>/repo (default: fetch from GitHub)")
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help=f"where the codes go (default {DEFAULT_DEST})")
    ap.add_argument("--codes", default="", help="comma-separated code names (default: all)")
    ap.add_argument("--corpus", type=Path, default=cp.CORPUS_YAML)
    ap.add_argument("--force", action="store_true", help="materialise again even if present at the commit")
    args = ap.parse_args(argv)
    try:
        codes = cp.select(cp.load(args.corpus), [c for c in args.codes.split(",") if c])
        for code in codes:
            git_dir = (mirror_git_dir(args.mirror_root, code.repository) if args.mirror_root
                       else fetch_git_dir(args.dest / ".git-cache", code))
            root, n = materialise(code, git_dir, args.dest, force=args.force)
            what = f"{n} files" if n else "already there"
            print(f"{code.name}: {code.repository}@{code.commit[:12]} -> {root} ({what})")
    except (cp.CorpusError, GetError) as exc:
        print(f"get.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
