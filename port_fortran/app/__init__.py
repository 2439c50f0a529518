"""Whole applications: build a program with its own build system through a compiler wrapper
that records every compile command, port the routines it is built from, write the modern
tree (ports in place), build and run both, and prove the modern program by its output.

Modules, each with one job:

* :mod:`.compile_db`: compiler command lines -> compile records (files, -I, -D, flags),
  like compile_commands.json (pure);
* :mod:`.wrapper`: the compiler wrapper itself (``OUT/bin/pf-fortran`` and the shims named
  like compilers), recording during the original build, adding the ports at link time in
  the modern one;
* :mod:`.modern`: the modern tree's text (full ports called from the routine's own
  interface, hybrid routines merged through their ``hybrid.json`` edits) (pure);
* :mod:`.coherence`: where host code touches arrays the device may hold, and the
  registration/sync calls that keep both copies coherent (pure);
* :mod:`.library`: the ports' library per backend, the wrapper's link line, the CMake
  package config;
* :mod:`.proof`: build and run the original and the modern tree, compare their output;
* :mod:`.commands`: ``port-fortran app``.
"""
