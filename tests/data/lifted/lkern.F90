! A benchmark program in the shape of C-derived suites (written for port-fortran): the kernels
! are internal procedures of the program that times them, and the program prints only the
! time. kscale and kstencil use none of the program's variables, so each is proven alone
! (fortran/lift.py); kuses reads the program's factor, so only the program's run proves it.
program lkern
  use ptimer
  implicit none
#include "pbsizes.h"
  integer, parameter :: halo = 1
  REAL_T, allocatable :: a(:, :), b(:, :)
  REAL_T :: factor
  integer :: nx, ny
  nx = NX
  ny = NY
  factor = 0.5d0
  allocate(a(nx, ny), b(nx, ny))
  a = 1.0d0
  b = 0.0d0
  call tstart()
  call kscale(nx, ny, 2.0d0, a)
  call kstencil(nx, ny, a, b)
  call kuses(nx, ny, b)
  call tstop()
  deallocate(a, b)
contains
  subroutine kscale(nx, ny, s, a)
    integer :: nx, ny
    REAL_T :: s
    REAL_T :: a(nx, ny)
    integer :: i, j
    do j = 1, ny
      do i = 1, _PB_NX
        a(i, j) = s * a(i, j) + dble(i - j)
      end do
    end do
  end subroutine kscale

  subroutine kstencil(nx, ny, a, b)
    integer :: nx, ny
    REAL_T :: a(nx, ny), b(nx, ny)
    integer :: i, j
    do j = 1 + halo, ny - halo
      do i = 1 + halo, nx - halo
        b(i, j) = 0.25d0 * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1)) - a(i, j)
      end do
    end do
  end subroutine kstencil

  subroutine kuses(nx, ny, b)
    integer :: nx, ny
    REAL_T :: b(nx, ny)
    integer :: i, j
    do j = 1, ny
      do i = 1, nx
        b(i, j) = factor * b(i, j)
      end do
    end do
  end subroutine kuses
end program lkern
