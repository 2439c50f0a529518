"""Python bindings of ports: a pybind11 extension module that calls a port's ``extern "C"``
entry with numpy arrays (``port-fortran bindings PORT_DIR...``, ``--python`` on a run).

Modules, one job each: ``plan`` (the IR of a routine -> what each Python argument must be:
dtype, rank, extents, intent; pure), ``codegen`` (the module's C++ source and CMake project;
pure), ``support/pf_pybind.hpp`` (the argument checks, compiled into every module),
``build`` (write, configure and build against a Kokkos install; side effects), ``commands``
(the command line). docs/python.md is the user's guide."""
