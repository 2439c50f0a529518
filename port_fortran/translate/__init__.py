"""Deterministic Fortran IR -> Kokkos C++ translator (the ``rules`` model).

    from port_fortran.translate import translate_kernel, write_port
    port = translate_kernel(kernel, source_file, options)   # raises TranslationRefused
    write_port(port, out_dir)

Modules, one job each: ``structure`` (GOTOs -> blocks), ``lower`` (array syntax -> loops),
``plan`` (which Kokkos pattern for which loop), ``cexpr`` (expressions -> C++), ``emit``
(plan -> C++ statements), ``render`` (files through the Jinja2 templates), ``engine``
(the pipeline), ``commands`` (``port-fortran translate``)."""
from .engine import scaffold, translate_kernel, write_port

__all__ = ["scaffold", "translate_kernel", "write_port"]
