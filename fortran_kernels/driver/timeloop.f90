! timeloop.f90 -- a small legacy-style driver that calls several sample
! kernels in a time loop and prints a checksum.
! Written for port-fortran. Link against the objects of fields.f90,
! stencil2d.f90, blas1.f and heat.f (and their .mod files on -I).
!
! The work arrays are module allocatables (fields_mod); the kernels get
! them as explicit-shape dummy arguments. HEAT1D reads its constants
! from COMMON /HEATC/, which this program sets.
program timeloop
  use fields_mod
  use stencil2d_mod, only: jacobi2d, resid2d
  implicit none
  integer, parameter :: n = 48, m = 1000, nsteps = 20
  double precision, external :: ddot, dnrm2
  double precision :: alpha, dt, rdx2
  common /heatc/ alpha, dt, rdx2
  double precision :: h, h2, rms, dotxy, xnorm, checksum
  integer :: i, j, step

  allocate(u(0:n+1, 0:n+1), unew(0:n+1, 0:n+1), f(n, n))
  allocate(x(m), y(m), rod(0:m+1), rodnew(0:m+1))

  h = 1.0d0 / dble(n + 1)
  h2 = h * h
  u = 0.0d0
  unew = 0.0d0
  do j = 1, n
    do i = 1, n
      f(i, j) = sin(3.0d0 * i * h) * cos(2.0d0 * j * h)
    end do
  end do
  do i = 1, m
    x(i) = 1.0d0 / dble(i)
    y(i) = cos(0.01d0 * i)
  end do
  rod = 0.0d0
  rod(0) = 1.0d0
  rodnew = rod

  alpha = 1.0d0
  rdx2 = dble(m + 1)**2
  dt = 0.4d0 / (alpha * rdx2)

  rms = 0.0d0
  do step = 1, nsteps
    call jacobi2d(n, h2, f, u, unew)
    call jacobi2d(n, h2, f, unew, u)
    call resid2d(n, unew, u, rms)
    call daxpy(m, 1.0d-3, x, 1, y, 1)
    call dscal(m / 2, 0.999d0, y, 2)
    call heat1d(m, rod, rodnew)
    call heat1d(m, rodnew, rod)
  end do

  dotxy = ddot(m, x, 1, y, 1)
  xnorm = dnrm2(m, y, 1)
  checksum = sum(u) + dotxy + xnorm + sum(rod) + rms
  write (*, '(a, es24.16)') ' rms change   ', rms
  write (*, '(a, es24.16)') ' dot(x, y)    ', dotxy
  write (*, '(a, es24.16)') ' norm(y)      ', xnorm
  write (*, '(a, es24.16)') ' CHECKSUM     ', checksum

  deallocate(u, unew, f, x, y, rod, rodnew)
end program timeloop
