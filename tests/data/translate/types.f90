! Features: complex(8) arithmetic (Kokkos::complex), conjg/aimag/cmplx/abs of complex,
! LOGICAL and CHARACTER*1 flag arguments, SELECT CASE, single precision, scattered updates
! (atomics), a several-scalar reduction with an integer count, a LOGICAL(C_BOOL) array
! (one byte per element: BookLeaf's logical kind).
subroutine cplx(trans, n, z, w, flag, big)
  use iso_c_binding, only: c_bool
  implicit none
  character, intent(in) :: trans
  integer, intent(in) :: n
  complex(8), intent(in) :: z(n)
  complex(8), intent(inout) :: w(n)
  logical, intent(in) :: flag
  logical(kind=c_bool), intent(out) :: big(n)
  integer :: i
  do i = 1, n
    select case (mod(i, 3))
    case (0)
      w(i) = w(i) + conjg(z(i)) * z(i)
    case (1:2)
      w(i) = w(i) * (2.0d0, -1.0d0) + cmplx(real(z(i)), aimag(z(i))**2, 8)
    end select
    if (flag .and. i == 1) w(i) = w(i) + abs(z(i))
    if (trans == 'C' .or. trans == 'c') w(i) = conjg(w(i))
    big(i) = abs(w(i)) > 1.0d0 .and. .not. flag
  end do
end subroutine cplx

subroutine scatter(n, nb, idx, v, hist, cnt, vsum)
  implicit none
  integer, intent(in) :: n, nb
  integer, intent(in) :: idx(n)
  real(4), intent(in) :: v(n)
  real(4), intent(inout) :: hist(nb)
  integer, intent(out) :: cnt
  real(4), intent(out) :: vsum
  integer :: i, k
  do i = 1, n
    k = 1 + mod(abs(idx(i)), nb)
    hist(k) = hist(k) + v(i)
  end do
  cnt = 0
  vsum = 0.0
  do i = 1, n
    if (v(i) > 0.5) cnt = cnt + 1
    vsum = vsum + 0.5 * v(i)
  end do
end subroutine scatter

! two complex sums in one loop: one reducer struct of Kokkos::complex fields (Kokkos 3's
! volatile join reads them through pf::nv)
subroutine zsums(n, x, y, sx, sy)
  implicit none
  integer, intent(in) :: n
  complex(8), intent(in) :: x(n), y(n)
  complex(8), intent(out) :: sx, sy
  integer :: i
  sx = (0.0d0, 0.0d0)
  sy = (0.0d0, 0.0d0)
  do i = 1, n
    sx = sx + x(i)
    sy = sy + conjg(y(i)) * x(i)
  end do
end subroutine zsums
