! omp_kernels.f90 -- free-form routines that already carry OpenMP.
! Written for port-fortran. Compile with -fopenmp to use the
! directives; without it they are comments and the code is serial.
module omp_kernels_mod
  implicit none
  private
  integer, parameter :: dp = kind(1.0d0)
  public :: omp_dot, omp_smooth2d

contains

  ! s := x . y, an OpenMP sum reduction.
  subroutine omp_dot(n, x, y, s)
    integer, intent(in) :: n
    real(dp), intent(in) :: x(n), y(n)
    real(dp), intent(out) :: s
    integer :: i

    s = 0.0_dp
    !$omp parallel do reduction(+:s)
    do i = 1, n
      s = s + x(i) * y(i)
    end do
    !$omp end parallel do
  end subroutine omp_dot

  ! 5-point average of a (with halo) into the interior of b, collapsed.
  subroutine omp_smooth2d(nx, ny, a, b)
    integer, intent(in) :: nx, ny
    real(dp), intent(in) :: a(0:nx+1, 0:ny+1)
    real(dp), intent(out) :: b(nx, ny)
    integer :: i, j

    !$omp parallel do collapse(2) default(none) shared(nx, ny, a, b) private(i, j)
    do j = 1, ny
      do i = 1, nx
        b(i, j) = 0.2_dp * (a(i, j) + a(i-1, j) + a(i+1, j) + a(i, j-1) + a(i, j+1))
      end do
    end do
    !$omp end parallel do
  end subroutine omp_smooth2d

end module omp_kernels_mod
