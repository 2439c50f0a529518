! modstate.f90 -- routines reading and writing module state, written for port-fortran's
! tests. MSCALE reads a module scalar and a module table and writes a module counter and a
! module array: its hybrid port is driven with that state like COMMON. MGROW uses a module
! allocatable array: the harness cannot choose its shape (module-state).
module state_mod
  implicit none
  integer, parameter :: nt = 4
  double precision :: scale = 2.0d0
  double precision :: table(nt)
  double precision :: last(nt)
  integer :: ncalls = 0
  double precision, allocatable :: grow(:)
end module state_mod

subroutine mscale(n, x)
  use state_mod
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: i, k
  ncalls = ncalls + 1
  do i = 1, n
    x(i) = scale * x(i) + table(mod(i, nt) + 1)
  end do
  do k = 1, nt
    last(k) = x(min(k, n))
  end do
  write (*, *) 'mscale', n, ncalls
end subroutine mscale

subroutine mgrow(n, x)
  use state_mod
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: i
  do i = 1, n
    x(i) = x(i) + grow(1)
  end do
  write (*, *) 'mgrow', n
end subroutine mgrow
