"""``port-fortran app SRC... --build CMD --run CMD``: modernise a whole application.

1. The application root (the first SRC) is copied to ``OUT/work/original`` and built there
   with the user's command through the compiler wrapper in record mode: every compile
   command is kept (``OUT/compile_commands.json``).
2. The original runs (one thread; also with OpenMP threads when its build uses OpenMP).
3. The routines the program is built from -- those of the files its build compiled, that a
   main program reaches -- are ported with the flags each file was compiled with (the
   pipeline of ``port-fortran SRC``, run database ``OUT/port-fortran.db``, ports in
   ``OUT/ports``); main programs get hybrid ports, proven by the application's output.
4. The verified ports become one library per backend (``OUT/lib/<backend>``), which the
   wrapper ``OUT/bin/pf-fortran`` links.
5. The modern tree (:mod:`.modern`, :mod:`.coherence`) is built per backend with the
   user's command through the wrapper, run, and compared with the original's run
   (:mod:`.proof`). With ``--keep-going``, ports are left out (bisection over them) until
   it matches, and the report says which.
6. ``OUT/modern`` is written only when the modern program matched on every backend
   (otherwise ``OUT/modern.unverified``); the report gets its ``application`` section.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

from ..build_runner.sandbox import Limits
from ..build_runner.toolchain import gfortran_path
from ..errors import ToolMissing, UserError
from . import compile_db
from .proof import Step, compare_runs, copy_tree, run_env, run_program, shell
from .results import BackendResult, Kept, Placed
from .spec import apply_spec

SEPARATE = "-separate"  # suffix of a variant with the device memory emulated on a host backend


class App:
    """One ``port-fortran app`` invocation (state shared by the steps)."""

    def __init__(self, args, out: Path):
        self.args = args
        self.out = out
        self.root = Path(args.sources[0]).resolve()
        if not self.root.is_dir():
            raise UserError(f"{args.sources[0]}: not a directory (the first SRC is the application's root: it is "
                            "copied and --build / --run run at the root of the copy)")
        apply_spec(args, self.root)
        self.others = [Path(s).resolve() for s in args.sources[1:]]
        for o in self.others:
            if not o.exists():
                raise UserError(f"{o}: no such file or directory")
        self.work = out / "work"
        self.orig = self.work / "original"
        self.logs = out / "logs"
        self.bin = out / "bin"
        self.shims = out / "shims"
        self.limits = Limits(wall_s=float(args.timeout), mem_mb=None, stack="unlimited")  # as job scripts run them
        self.backends = _backends(args.backends)
        from ..harness.core import default_threads
        self.threads = int(args.threads or default_threads())
        self.ignore = list(args.ignore or [])
        self.outputs = list(args.output or [])
        self.messages: list[str] = []
        self.files_of: dict[str, str] = {}  # kernel id -> absolute path of its file (in the original's copy)

    # ------------------------------------------------------------------ 1. original build

    def say(self, text: str) -> None:
        self.messages.append(text)
        print(text, flush=True)

    def write_wrapper(self, backends: dict) -> Path:
        from .wrapper import write_wrapper

        fc = gfortran_path()
        if not fc:
            raise ToolMissing("gfortran not found on PATH (or in FC); `port-fortran doctor` says how to get it")
        default = next((b for b in ("openmp", "serial", "cuda", "hip") if b in backends), "serial")
        return write_wrapper(self.bin, self.shims, {"fc": fc, "fc_name": os.path.basename(fc),
                                                     "backends": backends, "default_backend": default})

    def build_original(self) -> list[compile_db.CompileCommand]:
        from .wrapper import build_env

        excl = [self.out] if _inside(self.out, self.root) else []
        copy_tree(self.root, self.orig, exclude=excl)
        script = self.write_wrapper({})
        log = self.work / "original.compile.jsonl"
        if log.exists():
            log.unlink()
        env = build_env(script, self.shims, mode="record", record=log)
        step = shell(self.args.build, self.orig, env, Limits(wall_s=float(self.args.timeout) * 3, mem_mb=None))
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.logs / "original-build.log").write_text(f"$ {self.args.build}\n{step.stdout}\n{step.stderr}")
        if not step.ok:
            raise UserError(f"{self.root}: the original build failed ({step.reason}) running {self.args.build!r} "
                            f"at the root of its copy {self.orig}:\n{step.tail()}\n(full log: "
                            f"{self.logs / 'original-build.log'})")
        cmds = compile_db.relevant(compile_db.read_log(log), str(self.orig))
        cmds += [c for c in compile_db.relevant(compile_db.read_log(log), "/") if c not in cmds
                 and any(compile_db.within(s, str(o)) for o in self.others for s in c.sources)]
        (self.out / "compile_commands.json").write_text(
            json.dumps(compile_db.compile_commands_json(cmds, "/"), indent=1) + "\n")
        if not any(c.sources for c in cmds):
            raise UserError(f"{self.root}: the build ({self.args.build!r}) compiled no Fortran through the compiler "
                            f"wrapper: does it call its compiler by an absolute path? Make it use `gfortran` or "
                            f"$FC (the wrapper is {script}; log of the build: {self.logs / 'original-build.log'})")
        return cmds

    # ------------------------------------------------------------------ 2. original runs

    def run_original(self, openmp: bool) -> dict[str, Step]:
        runs = {}
        base = dict(os.environ)
        for b, label in (("serial", "serial"),) + ((("openmp", "openmp"),) if openmp else ()):
            step = run_program(self.orig, self.args.run, run_env(base, b, self.threads), self.limits, self.outputs,
                               repeat=self.args.repeat)
            runs[label] = step
            (self.logs / f"original-{label}.out").write_text(step.stdout)
            if label == "serial":
                if step.returncode is None:
                    raise UserError(f"{self.root}: the original program did not finish ({step.reason}) running "
                                    f"{self.args.run!r}:\n{step.tail()}")
                if self.args.check:
                    import re
                    if not re.search(self.args.check, step.stdout, re.MULTILINE):
                        raise UserError(f"--check {self.args.check!r}: not in the original program's output "
                                        f"({self.logs / 'original-serial.out'}); give the pattern of its "
                                        "self-check line")
        return runs


    # ------------------------------------------------------------------ 3. porting

    def rel(self, path: str) -> str:
        p = Path(path)
        if _inside(p, self.orig):
            return str(p.resolve().relative_to(self.orig.resolve()))
        return str(p)

    def config(self):
        from ..config import _build, from_args, load_file

        cfg = from_args(self.args)
        given = load_file(self.args.config) if getattr(self.args, "config", None) else {}
        defaults = {"stages_factory": "port_fortran.app.stages:make_stages", "backends": list(self.backends)}
        for k, v in (("bench", False), ("optimize", False)):
            if k not in given:  # the application's run is the timing that matters; a config file may ask
                defaults[k] = v
        return _build(defaults, where="port-fortran app", base=cfg)

    def reachable(self, program, mains: list) -> Optional[set]:
        """(file, name) of every routine a main program reaches through calls: also calls
        and function references inside statements the IR keeps as text (I/O lists, blocks
        the front end did not model), and every specific procedure of a generic interface
        called; None when no main program was compiled (then every routine counts)."""
        import re

        from ..fortran import ir
        from ..fortran.program import norm

        if not mains:
            return None
        known = set(program.routines)
        seen: set = set()
        todo = list(mains)
        while todo:
            k = todo.pop()
            names = list(k.calls)
            for s in ir.walk(k.body):
                if isinstance(s, ir.Unsupported):
                    names += [n for n in re.findall(r"[a-z_]\w*", s.text.lower()) if n in known]
            for n in dict.fromkeys(names):
                c = program.resolve_from(k, n)
                targets = [c.routine] if c is not None and c.routine is not None else []
                if c is not None and c.where == "generic":
                    targets = list(c.alternatives)
                if not targets:
                    defs = [d for d in program.routines.get(n, []) if d.module is None] or program.routines.get(n, [])
                    targets = defs[:1]
                for target in targets:
                    if (target.file, target.name) in seen:
                        continue
                    seen.add((target.file, target.name))
                    todo.append(program.kernel_of(target))
        return {(norm(f), n) for f, n in seen}

    def port(self, db, run_id: str, records: dict, config) -> tuple[list, list, Any, list]:
        """Run the pipeline over the routines the program is built from. Returns (placed,
        kept, the program model, its main programs)."""
        from ..fortran.program import norm
        from ..pipeline.commands import plan_jobs, run_jobs
        from .stages import AppStages

        files = list(records)
        stages = AppStages(config)
        AppStages.file_settings = compile_db.file_settings(records)
        program = stages.build_program([Path(f) for f in files], config.include_dirs, config.defines,
                                       routines=config.routines, fflags=config.fflags)
        mains = [u for f in files for u in program.file(f).program_units]
        reach = self.reachable(program, mains)
        from ..config import KIND_CHANGING_FFLAGS
        kept: list[Kept] = []
        wanted: list[tuple[str, str]] = []
        for r in program.all_routines():
            rel = self.rel(r.file)
            flags = [f for f in records.get(norm(r.file), records.get(r.file)).fflags if f in KIND_CHANGING_FFLAGS] \
                if (norm(r.file) in records or r.file in records) else []
            if reach is not None and (norm(r.file), r.name) not in reach:
                kept.append(Kept(r.name, rel, r.line, "not-called", "no main program of the build calls it "
                                 "(directly or through other routines): a port would never run"))
            elif flags:
                kept.append(Kept(r.name, rel, r.line, "kind-changing-flag", f"{rel} is compiled with {flags[0]}, "
                                 "which changes default kinds; the front end reads gfortran's defaults"))
            elif self.args.kernel and r.name not in self.args.kernel:
                kept.append(Kept(r.name, rel, r.line, "not-selected", "left out by --kernel"))
            else:
                wanted.append((r.file, r.name))
        placed: list[Placed] = []
        if wanted:
            config.kernels = sorted({n for _, n in wanted})
            from ..pipeline.graph import port_dir_for
            # the run database is OUT's; the ports go to OUT/ports/<file>/<routine>
            jobs, errors = plan_jobs(files, config, run_id, self.out, db, stages)
            jobs = [j for j in jobs if (norm(j.file), j.kernel) in {(norm(f), n) for f, n in wanted}]
            for j in jobs:
                j.port_dir = str(port_dir_for(self.out / "ports", j.rel_file, j.kernel))
            self.files_of.update({j.kernel_id: str(Path(j.file).resolve()) for j in jobs})
            for e in errors:
                self.say(f"port-fortran: {e}")
            self.say(f"porting {len(jobs)} routine(s) the program is built from "
                     f"({', '.join(config.backends)}; -j {config.jobs})")
            run_jobs(jobs, config, db, run_id, config.quiet)
        for row in db.kernels(run_id):
            path = self.files_of.get(row["kernel_id"])
            if row["name"] == "(file)" or path is None:
                continue
            rel = self.rel(path)
            if row["status"] == "verified" and row["port_dir"]:
                placed.append(Placed(row["kernel_id"], rel, row["name"], int(row["line_start"] or 0),
                                     row["mode"] or "full", row["port_dir"]))
            else:
                kept.append(Kept(row["name"], rel, int(row["line_start"] or 0), row["reason_code"] or row["status"],
                                 row["reason"] or row["status"]))
        return placed, kept, program, mains

    def port_mains(self, mains: list, program) -> tuple[list, list]:
        """Hybrid ports of the main programs (proven by the application's own output)."""
        from ..records import TranslationRefused
        from ..translate import write_port
        from ..translate.hybrid import hybrid_port

        import re
        from collections import Counter

        placed, kept = [], []
        same = Counter(m.name for m in mains)
        for m in mains:
            rel = self.rel(m.file)
            sf = program.file(m.file)
            # programs of one build sharing a name (ParRes: every program is MAIN) get ports named
            # after their files too: their libraries and modules meet in one link line
            name = m.name if same[m.name] == 1 else f"{m.name}_{re.sub(r'[^a-z0-9_]', '_', Path(m.file).stem.lower())}"
            try:
                port = hybrid_port(m, sf, None, text=Path(m.file).read_text(errors="replace"), program=program,
                                   name=name)
            except TranslationRefused as exc:
                d = exc.diagnostics[0]
                kept.append(Kept(m.name, rel, m.line_start, d.code, f"main program: {d.message}"))
                continue
            except Exception as exc:  # the front end's own failure on this program: kept, said
                kept.append(Kept(m.name, rel, m.line_start, "internal-error",
                                 f"main program: hybrid port failed ({type(exc).__name__}: {exc})"))
                continue
            pdir = self.out / "ports" / Path(rel).parent / Path(rel).stem / m.name
            write_port(port, pdir)
            placed.append(Placed(f"{rel}:{m.name}", rel, m.name, m.line_start, "hybrid", str(pdir),
                                 proof="application", main=True))
        return placed, kept


    # ------------------------------------------------------------------ 4. the modern tree

    def modern_files(self, placed: list, program, mains: list, residency: bool):
        """(text of every file the modern tree changes, by path relative to the root; the
        ports that cannot be placed, as Kept; the coherence plan)."""
        from ..fortran.program import norm
        from . import coherence, modern

        kept: list[Kept] = []
        port_edits: dict[str, list] = {}
        names_in: dict[str, list] = {}
        ported: dict = {}
        protected: dict = {}
        texts: dict = {}
        forms: dict = {}

        def text_of(path: str) -> Optional[list]:
            key = norm(path)
            if key not in texts:
                if not _inside(Path(path), self.orig):
                    return None
                pristine = self.root / self.rel(path)
                try:
                    t = pristine.read_text(errors="replace")
                except OSError:
                    return None
                if Path(path).read_text(errors="replace") != t:
                    return None  # the build changed or generated it
                texts[key] = t.split("\n")
                forms[key] = program.file(path).form if program.has_file(path) else "free"
            return texts[key]

        for p in placed:
            path = str(self.orig / p.file)
            lines = text_of(path)
            if lines is None:
                kept.append(Kept(p.name, p.file, p.line, "outside-tree" if not (self.root / p.file).is_file()
                                 else "source-changed-by-build",
                                 "the file is not part of the application's root, or its build changed it: the "
                                 "modern tree cannot hold the port"))
                continue
            key = norm(path)
            try:
                if p.mode == "full":
                    k = program.kernel(path, p.name)
                    edits = modern.wrapper_edits(k, lines, forms[key])
                    outlined: set = set()
                else:
                    from ..translate.hybrid import load_info
                    info = load_info(p.port_dir) or {}
                    if os.path.realpath(info.get("original", "")) != os.path.realpath(path):
                        raise modern.Keep("hybrid-source-moved", f"the hybrid port was made from {info.get('original')}")
                    edits = modern.hybrid_edits(info)
                    outlined = {int(o["line"]) for o in info.get("outlined", [])}
                    protected.setdefault(key, []).extend((e.first, e.last) for e in edits if e.last >= e.first)
                modern.apply(lines, port_edits.get(key, []) + edits)  # no overlap with the file's other ports
            except modern.Keep as exc:
                kept.append(Kept(p.name, p.file, exc.line or p.line, exc.code, exc.message))
                continue
            port_edits.setdefault(key, []).extend(edits)
            names_in.setdefault(key, []).append(p.name)
            ported[(key, p.name)] = (p.mode, outlined)
        for f in program.order:  # every file's text, for the coherence calls
            text_of(f)
        if residency:
            pl = coherence.plan(program, mains, ported, texts, forms, protected)
        else:
            pl = coherence.Plan(off="residency turned off (--residency off)")
        out: dict[str, str] = {}
        for key in set(port_edits) | set(pl.edits):
            fe = modern.FileEdits(self.rel(key), forms[key], list(port_edits.get(key, [])) + list(pl.edits.get(key, [])),
                                  names_in.get(key, []), pl.calls.get(key, 0))
            try:
                out[fe.path] = modern.modern_text("\n".join(texts[key]), fe, Path(key).name)
            except modern.Keep as exc:  # coherence calls collide with a port's edits: residency off
                if residency:
                    files, k2, pl2 = self.modern_files(placed, program, mains, False)
                    pl2.off = f"{self.rel(key)}:{exc.line}: {exc.message}"
                    return files, k2, pl2
                raise
        return out, kept, pl

    def write_tree(self, dest: Path, files: dict) -> None:
        excl = [self.out] if _inside(self.out, self.root) else []
        copy_tree(self.root, dest, exclude=excl)
        for rel, text in files.items():
            (dest / rel).write_text(text)

    # ------------------------------------------------------------------ 5. libraries, builds, runs

    def libraries(self, placed: list, variants: list[str]) -> dict:
        from .library import build_library

        out = {}
        dirs = [Path(p.port_dir) for p in placed]
        for v in variants:
            base = v[:-len(SEPARATE)] if v.endswith(SEPARATE) else v
            self.say(f"[{v}] building the ports' library ({len(dirs)} port(s))")
            out[v] = build_library(dirs, self.out / "lib" / v, base, separate_memory=v.endswith(SEPARATE))
        return out

    def evaluate(self, variant: str, files: dict, reference: Step, originals: dict, residency_on: bool,
                 final: bool = False) -> BackendResult:
        from .wrapper import build_env

        base = variant[:-len(SEPARATE)] if variant.endswith(SEPARATE) else variant
        res = BackendResult(variant, threads=1 if base == "serial" else self.threads)
        res.residency = "emulated" if variant.endswith(SEPARATE) else (
            "resident" if base in ("cuda", "hip") and residency_on else
            "copies" if base in ("cuda", "hip") else "host memory")
        tree = self.work / f"modern-{variant}"
        self.write_tree(tree, files)
        log = self.work / f"modern-{variant}.compile.jsonl"
        if log.exists():
            log.unlink()
        env = build_env(self.bin / "pf-fortran", self.shims, mode="modern", record=log, backend=variant)
        b = shell(self.args.build, tree, env, Limits(wall_s=float(self.args.timeout) * 3, mem_mb=None))
        res.build_seconds = b.seconds
        (self.logs / f"modern-{variant}-build.log").write_text(f"$ {self.args.build}\n{b.stdout}\n{b.stderr}")
        if not b.ok:
            res.reason = f"the modern tree does not build ({b.reason}): {b.tail(8)}"
            return res
        compiled = {os.path.normpath(x) for c in compile_db.read_log(log) for x in c.sources}
        missing = [rel for rel in files if os.path.normpath(str(tree / rel)) not in compiled]
        if missing:
            res.reason = (f"the build did not compile {', '.join(missing[:3])} through the wrapper (does it call its "
                          "compiler by an absolute path?)")
            return res
        res.built = True
        runs = self.args.repeat if final else 1
        self.say(f"[{variant}] modern tree built in {b.seconds or 0:.0f} s; running it "
                 f"({runs} run{'s' if runs > 1 else ''})")
        run_base = run_env(dict(os.environ), base, self.threads)
        step = run_program(tree, self.args.run, run_base, self.limits, self.outputs, repeat=runs)
        (self.logs / f"modern-{variant}.out").write_text(step.stdout)
        res.ran = step.returncode is not None
        res.modern_seconds = step.seconds
        m = compare_runs(reference, step, self.ignore, self.args.rtol, self.args.check, self.outputs)
        res.matched, res.reason, res.first_difference = m.matched, m.reason, m.first_difference
        res.comparison = m.to_json()
        orig = originals.get("openmp") if base != "serial" and "openmp" in originals else originals.get("serial")
        res.original_seconds = orig.seconds if orig is not None else None
        if res.original_seconds and res.modern_seconds:
            res.speedup = res.original_seconds / res.modern_seconds
        if final and base in ("cuda", "hip") and residency_on and res.matched:
            self.say(f"[{variant}] ran in {step.seconds or 0:.2f} s with arrays resident; again copying every call "
                     "(PF_RESIDENT=0)")
            off = run_program(tree, self.args.run, {**run_base, "PF_RESIDENT": "0"}, self.limits, self.outputs,
                              repeat=self.args.repeat)
            if compare_runs(reference, off, self.ignore, self.args.rtol, self.args.check, self.outputs).matched:
                res.modern_seconds_no_residency = off.seconds
        return res

    # ------------------------------------------------------------------ 6. keep going

    def search(self, placed: list, variants: list[str], program, mains, reference, originals, residency: bool):
        """Evaluate the modern tree with ``placed``; with --keep-going, leave out ports (the
        first whose addition makes a failing backend fail, by bisection) until every backend
        matches. Returns (placed, results, files, plan, dropped)."""
        dropped: list[tuple[Placed, str]] = []
        while True:
            files, kept, pl = self.modern_files(placed, program, mains, residency)
            if kept:  # cannot be placed at all
                names = {(k.file, k.name) for k in kept}
                for p in placed:
                    if (p.file, p.name) in names:
                        k = next(x for x in kept if (x.file, x.name) == (p.file, p.name))
                        dropped.append((p, f"[{k.code}] {k.reason}"))
                placed = [p for p in placed if (p.file, p.name) not in names]
                continue
            results = {v: self.evaluate(v, files, reference, originals, pl.off is None, final=True) for v in variants}
            for v, r in results.items():
                self.say(f"[{v}] {'matched' if r.matched else 'NOT matched'}"
                         + (f": {r.reason}" if not r.matched else
                            f" ({r.comparison.get('lines_compared', 0)} lines, "
                            f"{r.comparison.get('numbers_compared', 0)} numbers)"))
            bad = [v for v, r in results.items() if not r.matched]
            if not bad or not self.args.keep_going or not placed:
                return placed, results, files, pl, dropped
            v = bad[0]
            culprit = self.bisect(placed, v, program, mains, reference, originals, residency)
            why = results[v].reason
            self.say(f"--keep-going: leaving out {culprit.name} ({culprit.file}:{culprit.line}): with it the modern "
                     f"program on {v} fails ({why[:200]})")
            dropped.append((culprit, f"the application's output differs with this port in place on {v}: {why}"))
            placed = [p for p in placed if p is not culprit]

    def bisect(self, placed: list, variant: str, program, mains, reference, originals, residency: bool) -> Placed:
        """The port whose addition to the ones before it makes ``variant`` fail (the empty
        set matches: it is the original)."""
        lo, hi = 0, len(placed)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            files, kept, pl = self.modern_files(placed[:mid], program, mains, residency)
            r = self.evaluate(variant, files, reference, originals, pl.off is None)
            self.say(f"  bisecting on {variant}: the first {mid} of {len(placed)} ports "
                     f"{'match' if r.matched else 'fail'}")
            if r.matched:
                lo = mid
            else:
                hi = mid
        return placed[hi - 1]


    # ------------------------------------------------------------------ the whole run

    def run(self, db, run_id: str) -> int:
        t0 = time.monotonic()
        config = self.config()
        self.say(f"{self.root.name}: building the original through the compiler wrapper ({self.args.build!r})")
        cmds = self.build_original()
        records = compile_db.sources_of(cmds, str(self.orig))
        for o in self.others:
            records.update(compile_db.sources_of(cmds, str(o)))
        openmp = any(c.openmp for c in cmds)
        self.say(f"{self.root.name}: {len(records)} Fortran file(s) compiled by {len(cmds)} command(s) "
                 f"(OUT/compile_commands.json){'; OpenMP' if openmp else ''}")
        originals = self.run_original(openmp)
        ref = originals["serial"]
        self.say(f"original: exit {ref.returncode}, {ref.seconds:.3g} s serial"
                 + (f", {originals['openmp'].seconds:.3g} s on {self.threads} OpenMP threads" if "openmp" in originals
                    else ""))
        state_path = self.out / "app-state.json"
        if self.args.reuse_ports:
            placed, kept, program, mains = self.load_state(state_path, records)
        else:
            placed, kept, program, mains = self.port(db, run_id, records, config)
            if self.args.main != "keep":
                mp, mk = self.port_mains(mains, program)
                placed += mp
                kept += mk
            else:
                kept += [Kept(m.name, self.rel(m.file), m.line_start, "main-kept", "--main keep") for m in mains]
            self.save_state(state_path, run_id, placed, kept, mains)
        placed.sort(key=lambda p: (p.file, p.line))
        self.say(f"ported: {len(placed)} routine(s) ({', '.join(p.name for p in placed) or 'none'}); "
                 f"kept: {len(kept)}")
        variants = list(self.backends)
        if self.args.check_residency:
            variants.append("serial" + SEPARATE)
        libs = self.libraries(placed, variants)
        broken = {v: lib.message for v, lib in libs.items() if not lib.ok}
        mains_placed = [p for p in placed if p.main]
        if broken and mains_placed:  # the main programs' ports are not built by the harness: try without
            why = next(iter(broken.values()))
            kept += [Kept(p.name, p.file, p.line, "does-not-build", f"main program's hybrid port: {why[:400]}")
                     for p in mains_placed]
            placed = [p for p in placed if not p.main]
            libs = self.libraries(placed, variants)
            broken = {v: lib.message for v, lib in libs.items() if not lib.ok}
        backends_cfg = {v: {"compile": [f"-I{lib.recipe.mod_dir}"], "driver": lib.recipe.driver,
                            "libraries": lib.recipe.libraries} for v, lib in libs.items() if lib.ok}
        self.write_wrapper(backends_cfg)
        results: dict[str, BackendResult] = {}
        for v, why in broken.items():
            results[v] = BackendResult(v, reason=why)
        good = [v for v in variants if v not in broken]
        dropped: list = []
        files: dict = {}
        pl = None
        if good:
            placed, res2, files, pl, dropped = self.search(placed, good, program, mains, ref, originals,
                                                           self.args.residency != "off")
            results.update(res2)
        for p, why in dropped:
            kept.append(Kept(p.name, p.file, p.line, "left-out", why))
        matched = bool(results) and all(r.matched for r in results.values())
        final = self.out / ("modern" if matched else "modern.unverified")
        for d in (self.out / "modern", self.out / "modern.unverified"):
            if d.exists():
                shutil.rmtree(d)
        if good:
            self.write_tree(final, files)
        data = self.application_json(matched, results, placed, kept, originals, pl, dropped, final,
                                     time.monotonic() - t0)
        db.set_application(run_id, data)
        (self.out / "application.json").write_text(json.dumps(data, indent=1, default=str) + "\n")
        self.summary(data, final)
        return 0 if matched else 1

    def application_json(self, matched, results, placed, kept, originals, pl, dropped, final, seconds) -> dict:
        import platform

        return {
            "root": str(self.root),
            "build": self.args.build,
            "run": self.args.run,
            "check": self.args.check or "",
            "ignore": list(self.ignore),
            "outputs": list(self.outputs),
            "rtol": self.args.rtol,
            "matched": matched,
            "modern_tree": str(final) if final.exists() else "",
            "wrapper": str(self.bin / "pf-fortran"),
            "compile_commands": str(self.out / "compile_commands.json"),
            "files_compiled": len(json.loads((self.out / "compile_commands.json").read_text())),
            "threads": self.threads,
            "host": platform.node(),
            "seconds": seconds,
            "original": {label: {"seconds": st.seconds, "returncode": st.returncode,
                                 "threads": 1 if label == "serial" else self.threads}
                         for label, st in originals.items()},
            "backends": [r.to_json() for r in results.values()],
            "ported": [{"name": p.name, "file": p.file, "line": p.line, "mode": "main" if p.main else p.mode,
                        "proof": p.proof, "port_dir": p.port_dir, "kernel_id": p.kernel_id} for p in placed],
            "kept": [k.to_json() for k in sorted(kept, key=lambda k: (k.file, k.line))],
            "left_out": [{"name": p.name, "file": p.file, "line": p.line, "why": why} for p, why in dropped],
            "residency": {"on": pl is not None and pl.off is None, "off_reason": (pl.off or "") if pl else "",
                          "calls": pl.count() if pl else 0,
                          "device_routines": list(pl.device_routines) if pl else [],
                          "registered": list(pl.registered) if pl else []},
        }

    def summary(self, data: dict, final: Path) -> None:
        for b in data["backends"]:
            t = ""
            if b["original_seconds"] and b["modern_seconds"]:
                t = f"; {b['original_seconds']:.3g} s original, {b['modern_seconds']:.3g} s modern " \
                    f"({b['speedup']:.2f}x)"
            if b.get("modern_seconds_no_residency"):
                t += f", {b['modern_seconds_no_residency']:.3g} s without residency"
            self.say(f"[{b['backend']}] {'matched' if b['matched'] else 'NOT matched: ' + b['reason']}{t}")
        for d in data["left_out"]:
            self.say(f"left out: {d['name']} ({d['file']}:{d['line']}): {d['why'][:300]}")
        res = data["residency"]
        self.say(f"residency: {'on' if res['on'] else 'off (' + res['off_reason'] + ')'}, "
                 f"{res['calls']} coherence call(s) in the modern tree")
        if final.exists():
            self.say(f"modern tree: {final}{'' if data['matched'] else ' (NOT verified: it does not match)'}")
            backend = next((b for b in ("openmp", "cuda", "hip", "serial") if b in self.backends), "serial")
            self.say(f"build it with your command and the wrapper, e.g.: PORT_FORTRAN_BACKEND={backend} "
                     f"FC={data['wrapper']} {self.args.build}  (docs/app.md)")

    # ------------------------------------------------------------------ state for --reuse-ports

    def save_state(self, path: Path, run_id: str, placed: list, kept: list, mains: list) -> None:
        path.write_text(json.dumps({"run_id": run_id, "placed": [asdict(p) for p in placed],
                                    "kept": [k.to_json() for k in kept], "files_of": self.files_of,
                                    "program": str(self.out / "program" / "program.pickle"),
                                    "mains": [(m.file, m.name) for m in mains]}, indent=1) + "\n")

    def load_state(self, path: Path, records: dict):
        from ..fortran.program import load_program

        if not path.is_file():
            raise UserError(f"--reuse-ports: {path} not found: run `port-fortran app` once without it")
        st = json.loads(path.read_text())
        self.files_of = dict(st.get("files_of", {}))
        placed = [Placed(**p) for p in st["placed"]]
        kept = [Kept(**k) for k in st["kept"]]
        prog_path = Path(st["program"])
        if not prog_path.is_file():
            raise UserError(f"--reuse-ports: {prog_path} is gone: run `port-fortran app` again without it")
        program = load_program(prog_path)
        mains = [u for f, n in st.get("mains", []) for u in program.file(f).program_units if u.name == n]
        return placed, kept, program, mains


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def _backends(text: str) -> list[str]:
    from ..records import BACKENDS

    bs = [b.strip() for b in str(text).split(",") if b.strip()]
    bad = [b for b in bs if b not in BACKENDS]
    if bad or not bs:
        raise UserError(f"--backends {text}: unknown backend(s) {', '.join(bad) or '(none)'}; choose from "
                        f"{', '.join(BACKENDS)}")
    return list(dict.fromkeys(bs))


def cmd_app(args) -> int:
    """``port-fortran app``: exit 0 when the modern program matched on every backend, 1
    when it did not, 2 on bad input (the original does not build or run), 3 when a tool is
    missing."""
    from ..reports.db import RunDB

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    app = App(args, out)
    from ..pipeline.commands import check_tools
    from ..config import Config
    check_tools(Config(backends=list(app.backends)))
    db = RunDB.in_dir(out)
    try:
        prev = None
        if args.reuse_ports and (out / "app-state.json").is_file():
            prev = json.loads((out / "app-state.json").read_text()).get("run_id")
        run_id = db.start_run(prev, command=" ".join(sys.argv), config={"app": vars(args)}, host=socket.gethostname())
        rc = app.run(db, run_id)
        db.finish_run(run_id, "finished")
        from ..pipeline.commands import _render
        _render(db, run_id, out)
        return rc
    except KeyboardInterrupt:
        print("port-fortran: interrupted", file=sys.stderr)
        return 4
    finally:
        db.close()
