! Stand-in for an MPI library's `mpi` module, written for the port-fortran corpus: the named
! constants of mpif.h (bench/realcode/stubs/include), no interfaces and no implementations.
! Calls to MPI routines stay calls to external routines. Not counted in the corpus results.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
