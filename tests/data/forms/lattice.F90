! A module whose routines live in a header it #includes (as CCS-QCD keeps its lattice
! routines in .h90 files), with a module counter of the time they take.
module lattice_mod
  implicit none
  integer, parameter :: nsite = 64
  real(8) :: cost = 0d0
contains
#include "lattice_axpy.h90"
end module lattice_mod
