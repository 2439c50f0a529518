#!/bin/sh
# md: built by a script, as many small codes are (written for port-fortran). It compiles
# with $FC (gfortran if unset): port-fortran sets FC to its wrapper.
set -e
FC=${FC:-gfortran}
FFLAGS="-O2"
$FC $FFLAGS -c md_state.f90
for f in lattice forces integrate thermo md; do
  $FC $FFLAGS -c $f.f90
done
$FC $FFLAGS -o md md_state.o lattice.o forces.o integrate.o thermo.o md.o
