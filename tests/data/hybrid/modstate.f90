! modstate.f90 -- routines reading and writing module state, written for port-fortran's
! tests. MSCALE reads a module scalar and a module table and writes a module counter and a
! module array: its hybrid port is driven with that state like COMMON. MGROW uses a module
! allocatable array: the harness allocates it as the subscripts need. MREGION shares
! the loops of an OpenMP parallel region (TeaLeaf's style) and writes module state: its
! hybrid copy runs the region as serial code around the Kokkos kernels. KCONST reads a
! PRIVATE module variable initialised and never assigned: a constant, so a full port.
! MTRIG passes a module allocatable array whole to a helper that declares it c(lc+1)
! with lc a module scalar (SNAP's mms_flux_1): the harness allocates it nx+1 long.
module state_mod
  implicit none
  integer, parameter :: nt = 4
  double precision :: scale = 2.0d0
  double precision :: table(nt)
  double precision :: last(nt)
  integer :: ncalls = 0
  double precision, allocatable :: grow(:)
end module state_mod

module trig_mod
  implicit none
  integer :: nx = 0
  double precision, allocatable :: cb(:), dx(:)
contains
  subroutine tint(lc, c, f)
    integer, intent(in) :: lc
    double precision, intent(in) :: c(lc + 1)
    double precision, intent(out) :: f(lc)
    integer :: i
    do i = 1, lc
      f(i) = c(i + 1) - c(i)
    end do
  end subroutine tint
end module trig_mod

module kconst_mod
  implicit none
  integer, private :: kind_a = 1, kind_b = 2
contains
  subroutine kconst(n, k, x)
    integer, intent(in) :: n, k
    double precision, intent(inout) :: x(n)
    integer :: i
    do i = 1, n
      if (k == kind_a) then
        x(i) = 2.0d0 * x(i)
      else if (k == kind_b) then
        x(i) = x(i) + 1.0d0
      end if
    end do
  end subroutine kconst
end module kconst_mod

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

subroutine mregion(n, a, b, s)
  use state_mod, only: ncalls
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n)
  double precision, intent(out) :: s
  integer :: i
  s = 0.0d0
  ncalls = ncalls + 1
!$omp parallel reduction(+:s)
!$omp do
  do i = 1, n
    b(i) = 2.0d0 * a(i) + 1.0d0
  end do
!$omp end do
!$omp do
  do i = 1, n
    s = s + a(i) * a(i)
  end do
!$omp end do
!$omp end parallel
end subroutine mregion

subroutine mtrig
  use trig_mod
  implicit none
  double precision :: t(nx)
  integer :: i
  call tint(nx, cb, t)
  do i = 1, nx
    dx(i) = 2.0d0 * t(i)
  end do
end subroutine mtrig
