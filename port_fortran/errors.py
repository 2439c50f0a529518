"""Errors that reach the user as one clear line (no traceback unless --debug)."""
from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix: bad input, missing tool, bad configuration.

    ``exit_code`` is what the command exits with (2 for bad input / usage, as documented
    in the README). The message should name the file and line where it applies and say
    what to do."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class ToolMissing(UserError):
    """A required external tool (gfortran, cmake, a Kokkos install...) is missing."""

    def __init__(self, message: str):
        super().__init__(message, exit_code=3)
