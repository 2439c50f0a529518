! stencil3d.F90 -- 7-point stencils on a 3-D grid with a one-cell halo.
! Written for port-fortran.
! Needs the C preprocessor (-cpp): the real kind is the macro RK,
! 8 by default and 4 when compiled with -DSINGLE. Literals are written
! real(6, RK) because cpp does not expand RK inside a token like 6.0_RK.
#ifdef SINGLE
#define RK 4
#else
#define RK 8
#endif
module stencil3d_mod
  implicit none
  private
  public :: jacobi3d, laplace3d

contains

  ! Weighted 7-point Jacobi update: unew = c0*u + c1*(sum of 6 neighbours).
  ! Halo values of unew are left untouched.
  subroutine jacobi3d(nx, ny, nz, c0, c1, u, unew)
    integer, intent(in) :: nx, ny, nz
    real(RK), intent(in) :: c0, c1
    real(RK), intent(in) :: u(0:nx+1, 0:ny+1, 0:nz+1)
    real(RK), intent(inout) :: unew(0:nx+1, 0:ny+1, 0:nz+1)
    integer :: i, j, k

    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          unew(i, j, k) = c0 * u(i, j, k) &
               + c1 * (u(i-1, j, k) + u(i+1, j, k) &
                     + u(i, j-1, k) + u(i, j+1, k) &
                     + u(i, j, k-1) + u(i, j, k+1))
        end do
      end do
    end do
  end subroutine jacobi3d

  ! Discrete Laplacian of u on the interior, scaled by rh2 = 1/h**2.
  subroutine laplace3d(nx, ny, nz, rh2, u, lu)
    integer, intent(in) :: nx, ny, nz
    real(RK), intent(in) :: rh2
    real(RK), intent(in) :: u(0:nx+1, 0:ny+1, 0:nz+1)
    real(RK), intent(out) :: lu(nx, ny, nz)
    integer :: i, j, k

    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          lu(i, j, k) = rh2 * (u(i-1, j, k) + u(i+1, j, k) + u(i, j-1, k) &
                             + u(i, j+1, k) + u(i, j, k-1) + u(i, j, k+1) &
                             - real(6, RK) * u(i, j, k))
        end do
      end do
    end do
  end subroutine laplace3d

end module stencil3d_mod
