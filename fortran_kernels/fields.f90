! fields.f90 -- module-level allocatable state of a small solver.
! Written for port-fortran.
! Legacy/F90 features: allocatable arrays held in a module and
! allocated by the main program; the kernels never USE this module,
! they receive the arrays as explicit-shape dummy arguments (see
! stencil2d.f90 and driver/timeloop.f90). No routines here.
module fields_mod
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), allocatable :: u(:,:), unew(:,:), f(:,:)
  real(dp), allocatable :: x(:), y(:)
  real(dp), allocatable :: rod(:), rodnew(:)
end module fields_mod
