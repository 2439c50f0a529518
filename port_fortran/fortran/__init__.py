"""Fortran front end: fparser2 -> typed kernel IR with loop dependence analysis.

    from port_fortran.fortran import parse_file, discover
"""
from .parse import discover, parse_file

__all__ = ["discover", "parse_file"]
