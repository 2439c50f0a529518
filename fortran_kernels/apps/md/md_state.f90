! md_state.f90 -- md: the state of a Lennard-Jones fluid in a periodic box (written for
! port-fortran): fixed-size module arrays, as codes without ALLOCATE keep them.
module md_state
  implicit none
  integer, parameter :: nmax = 4096
  integer :: np = 0
  double precision :: box = 1.0d0, dt = 0.005d0, rcut = 2.5d0
  double precision :: x(nmax), y(nmax), z(nmax)
  double precision :: vx(nmax), vy(nmax), vz(nmax)
  double precision :: fx(nmax), fy(nmax), fz(nmax)
end module md_state
