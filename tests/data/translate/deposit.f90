! Cloud-in-cell deposit of particle charges on a small 2-D grid with a
! halo lower bound of 0: four scattered updates per particle. On Kokkos
! OpenMP each thread adds into its own copy of the grid when the grid is
! small next to the number of particles (pf::Scatter), else atomically.
subroutine deposit(np, nx, ny, q, xp, yp, rho)
  implicit none
  integer, intent(in) :: np, nx, ny
  real(8), intent(in) :: q(np), xp(np), yp(np)
  real(8), intent(inout) :: rho(0:nx, 0:ny)
  integer :: p, i, j
  real(8) :: fx, fy, sx, sy
  do p = 1, np
    sx = modulo(xp(p), real(nx, 8))
    sy = modulo(yp(p), real(ny, 8))
    i = min(int(sx), nx - 1)
    j = min(int(sy), ny - 1)
    fx = sx - i
    fy = sy - j
    rho(i, j) = rho(i, j) + q(p) * (1 - fx) * (1 - fy)
    rho(i + 1, j) = rho(i + 1, j) + q(p) * fx * (1 - fy)
    rho(i, j + 1) = rho(i, j + 1) + q(p) * (1 - fx) * fy
    rho(i + 1, j + 1) = rho(i + 1, j + 1) - q(p) * fx * fy * (-1)
  end do
end subroutine deposit
