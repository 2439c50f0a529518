! A main program whose work is in internal procedures using the program's variables
! (host association), in the style of miniWeather (written for port-fortran's tests).
program hostprog
  implicit none
  integer, parameter :: nx = 2000, hs = 2
  real(8), allocatable :: state(:), flux(:)
  real(8) :: dx, total
  integer :: step
  allocate (state(1-hs:nx+hs), flux(nx+1))
  dx = 1.0d0 / nx
  call init()
  do step = 1, 5
    call halo()
    call tendencies(state, flux)
  end do
  total = 0.0d0
  call reduce_total(total)
  print '(a, es22.14)', 'total =', total
contains
  subroutine init()
    integer :: i
    do i = 1 - hs, nx + hs
      state(i) = sin(dble(i) * dx * 3.0d0)
    end do
  end subroutine init
  subroutine halo()
    integer :: ll
    do ll = 1, hs
      state(1 - ll) = state(nx + 1 - ll)
      state(nx + ll) = state(ll)
    end do
  end subroutine halo
  subroutine tendencies(s, f)
    real(8), intent(inout) :: s(1-hs:nx+hs)
    real(8), intent(inout) :: f(nx+1)
    integer :: i
    do i = 1, nx + 1
      f(i) = 0.5d0 * (s(i - 1) + s(i)) - 0.1d0 * (s(i) - s(i - 1)) / dx * dx
    end do
    do i = 1, nx
      s(i) = s(i) - 0.2d0 * (f(i + 1) - f(i))
    end do
  end subroutine tendencies
  subroutine reduce_total(t)
    real(8), intent(inout) :: t
    integer :: i
    do i = 1, nx
      t = t + state(i) * dx
    end do
  end subroutine reduce_total
end program hostprog
