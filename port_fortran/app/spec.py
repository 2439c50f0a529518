"""``ROOT/port-fortran-app.yaml``: how to build, run and check an application, read and
checked key by key; the command line wins over it."""
from __future__ import annotations

from pathlib import Path

from ..errors import UserError

SPEC_KEYS = {"build": str, "run": str, "check": str, "ignore": list, "outputs": list, "rtol": float,
             "large_run": str}


def load_spec(root: Path) -> dict:
    """``ROOT/port-fortran-app.yaml`` (how to build, run and check the application), {} if none."""
    import yaml

    from ..fortran.parse import APP_MARKER

    p = root / APP_MARKER
    if not p.is_file():
        return {}
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"{p}: not valid YAML ({exc})")
    if not isinstance(data, dict):
        raise UserError(f"{p}: expected a mapping of {', '.join(SPEC_KEYS)}")
    for k, v in data.items():
        if k not in SPEC_KEYS:
            raise UserError(f"{p}: key '{k}': unknown (known: {', '.join(SPEC_KEYS)})")
        if SPEC_KEYS[k] is list and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise UserError(f"{p}: key '{k}': expected a list of strings")
        if SPEC_KEYS[k] is str and not isinstance(v, str):
            raise UserError(f"{p}: key '{k}': expected a string")
        if SPEC_KEYS[k] is float and not isinstance(v, (int, float)):
            raise UserError(f"{p}: key '{k}': expected a number")
    return data


def apply_spec(args, root: Path) -> None:
    """Fill what the command line left out from ``port-fortran-app.yaml``."""
    spec = load_spec(root)
    for key, attr in (("build", "build"), ("run", "run"), ("check", "check")):
        if getattr(args, attr, None) is None and key in spec:
            setattr(args, attr, spec[key])
    if not getattr(args, "ignore", None):
        args.ignore = list(spec.get("ignore", []))
    if not getattr(args, "output", None):
        args.output = list(spec.get("outputs", []))
    if getattr(args, "rtol", None) is None:
        args.rtol = float(spec.get("rtol", 1e-9))
    missing = [f"--{a}" for a in ("build", "run") if not getattr(args, a, None)]
    if missing:
        raise UserError(f"{root}: give {' and '.join(missing)} (or write them in {root}/port-fortran-app.yaml)")
