! A radius-3 star stencil as ParRes-style codes write it: kinds from iso_fortran_env and
! from a module, weights with many digits in one long expression (written for port-fortran).
module star_prec
  use, intrinsic :: iso_fortran_env, only: real64, int32
  implicit none
  integer, parameter :: wp = real64, ik = int32
  real(wp), parameter :: sixth = 1.0_wp / 6.0_wp
end module star_prec

subroutine star3w(n, inp, out)
  use star_prec, only: wp, ik, sixth
  implicit none
  integer(kind=ik), intent(in) :: n
  real(kind=wp), intent(in) :: inp(n, n)
  real(kind=wp), intent(inout) :: out(n, n)
  integer(kind=ik) :: i, j
  do j = 4, n - 3
    do i = 4, n - 3
      out(i, j) = out(i, j) &
                + inp(i, j-3) * (-0.05555555555555555d0) + inp(i, j-2) * (-0.08333333333333333d0) &
                + inp(i, j-1) * (-0.16666666666666666d0) + inp(i-3, j) * (-0.05555555555555555d0) &
                + inp(i-2, j) * (-0.08333333333333333d0) + inp(i-1, j) * (-sixth) &
                + inp(i+1, j) * 0.16666666666666666d0 + inp(i+2, j) * 0.08333333333333333d0 &
                + inp(i+3, j) * 0.05555555555555555d0 + inp(i, j+1) * 0.16666666666666666_wp &
                + inp(i, j+2) * 0.08333333333333333d0 + inp(i, j+3) * 0.05555555555555555d0 &
                + inp(i, j) * 1.2345678901234567d-3
    end do
  end do
end subroutine star3w
