! heatprog.f90 -- a main program with a time loop, written for port-fortran's tests.
! Its loop nests (the initialisation, the stencil, the copy, the diagnostic sum) become
! Kokkos kernels in a hybrid port; the time loop, the periodic WRITE, the timer and the
! module's allocatable arrays stay Fortran.
module grid_mod
  implicit none
  integer, parameter :: n = 300
  double precision, allocatable :: u(:), unew(:)
end module grid_mod

program heatprog
  use grid_mod
  implicit none
  integer :: i, step, nsteps
  double precision :: dx, r, total, t0, t1
  nsteps = 60
  allocate(u(0:n+1), unew(0:n+1))
  dx = 1.0d0 / (n + 1)
  r = 0.25d0
  do i = 0, n + 1
    u(i) = sin(3.14159d0 * i * dx) + 0.1d0 * cos(17.0d0 * i * dx)
  end do
  unew = u
  call cpu_time(t0)
  do step = 1, nsteps
    do i = 1, n
      unew(i) = u(i) + r * (u(i-1) - 2.0d0*u(i) + u(i+1))
    end do
    do i = 1, n
      u(i) = unew(i)
    end do
    if (mod(step, 20) == 0) then
      total = 0.0d0
      do i = 1, n
        total = total + u(i)
      end do
      write (*, '(a, i4, a, es22.14, a, f12.8)') ' step', step, ' total', total, ' mid', u(n/2)
    end if
  end do
  call cpu_time(t1)
  write (*, '(a, f10.4, a)') ' time ', t1 - t0, ' s'
  deallocate(u, unew)
end program heatprog
