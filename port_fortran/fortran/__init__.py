"""Fortran front end: fparser2 -> typed kernel IR with loop dependence analysis.

    from port_fortran.fortran import parse_file, discover
"""
from .parse import default_include_dirs, discover, parse_file

__all__ = ["default_include_dirs", "discover", "parse_file"]
