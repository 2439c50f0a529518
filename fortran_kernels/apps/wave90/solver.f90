! solver.f90 -- wave90 kernels: initial pulse, one leapfrog step of the 1-D wave equation
! in a layered medium, an absorbing sponge at both ends, the rotation of time levels.
subroutine init_pulse(n, u, uold, c2, cfl, dx)
  implicit none
  integer, intent(in) :: n
  double precision, intent(out) :: u(0:n+1), uold(0:n+1), c2(0:n)
  double precision, intent(in) :: cfl, dx
  integer :: i
  double precision :: x
  do i = 0, n + 1
    x = i * dx
    u(i) = exp(-((x - 0.3d0) / 0.05d0)**2)
    uold(i) = u(i)
  end do
  do i = 0, n  ! on the cell faces i+1/2: the stiffness of a layered string
    x = (i + 0.5d0) * dx
    c2(i) = (cfl * (1.0d0 + 0.5d0 * merge(1.0d0, 0.0d0, x > 0.6d0)))**2
  end do
end subroutine init_pulse

subroutine leapfrog(n, u, uold, unew, c2)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: u(0:n+1), uold(0:n+1), c2(0:n)
  double precision, intent(inout) :: unew(0:n+1)
  integer :: i
  do i = 1, n  ! flux form: conserves the discrete energy of diagnostics.f90
    unew(i) = 2.0d0 * u(i) - uold(i) + c2(i) * (u(i+1) - u(i)) - c2(i-1) * (u(i) - u(i-1))
  end do
  unew(0) = 0.0d0
  unew(n+1) = 0.0d0
end subroutine leapfrog

subroutine sponge(n, unew, u, width, sigma)
  implicit none
  integer, intent(in) :: n, width
  double precision, intent(inout) :: unew(0:n+1)
  double precision, intent(in) :: u(0:n+1), sigma
  integer :: i
  double precision :: s
  do i = 1, min(width, n)
    s = sigma * dble(width - i + 1) / dble(width)
    unew(i) = unew(i) - s * (unew(i) - u(i))
    unew(n + 1 - i) = unew(n + 1 - i) - s * (unew(n + 1 - i) - u(n + 1 - i))
  end do
end subroutine sponge

subroutine rotate(n, uold, u, unew)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: uold(0:n+1), u(0:n+1)
  double precision, intent(in) :: unew(0:n+1)
  integer :: i
  do i = 0, n + 1
    uold(i) = u(i)
    u(i) = unew(i)
  end do
end subroutine rotate
