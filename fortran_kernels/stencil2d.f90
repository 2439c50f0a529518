! stencil2d.f90 -- Jacobi relaxation for -laplace(u) = f on an n x n grid.
! Written for port-fortran.
! F90 features: module procedures, a module kind parameter (dp), declared
! intents, halo bounds (0:n+1, 0:n+1), arrays passed as explicit-shape
! dummies (the caller owns them as allocatables in fields_mod).
module stencil2d_mod
  implicit none
  private
  integer, parameter :: dp = kind(1.0d0)
  public :: jacobi2d, resid2d

contains

  ! One Jacobi sweep over the interior. h2 is the squared mesh width.
  ! Halo values of unew are left untouched (the caller sets them once).
  subroutine jacobi2d(n, h2, f, u, unew)
    integer, intent(in) :: n
    real(dp), intent(in) :: h2
    real(dp), intent(in) :: f(n, n)
    real(dp), intent(in) :: u(0:n+1, 0:n+1)
    real(dp), intent(inout) :: unew(0:n+1, 0:n+1)
    integer :: i, j

    do j = 1, n
      do i = 1, n
        unew(i, j) = 0.25_dp * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) &
                                + h2 * f(i, j))
      end do
    end do
  end subroutine jacobi2d

  ! Root-mean-square change between two iterates over the interior.
  subroutine resid2d(n, u, unew, rms)
    integer, intent(in) :: n
    real(dp), intent(in) :: u(0:n+1, 0:n+1), unew(0:n+1, 0:n+1)
    real(dp), intent(out) :: rms
    real(dp) :: s, d
    integer :: i, j

    s = 0.0_dp
    do j = 1, n
      do i = 1, n
        d = unew(i, j) - u(i, j)
        s = s + d * d
      end do
    end do
    rms = 0.0_dp
    if (n > 0) rms = sqrt(s / real(n * n, dp))
  end subroutine resid2d

end module stencil2d_mod
