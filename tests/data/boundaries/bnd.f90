! Kernels for tests/test_harness_boundaries.py (written for port-fortran): a 1-D gather
! whose subscript is 64-bit arithmetic ((i-1)*40503 passes 2**31 once i > 53020), a 2-D
! relaxation (an MDRange band) and a dot product (a reduction).
subroutine gathr(n, a, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a, x(n)
  double precision, intent(inout) :: y(n)
  integer :: i
  integer(8) :: k
  do i = 1, n
    k = mod(int(i - 1, 8) * 40503_8, int(n, 8))
    y(i) = y(i) + a * x(k + 1)
  end do
end subroutine gathr

subroutine relax2(m, n, u, v)
  implicit none
  integer, intent(in) :: m, n
  double precision, intent(in) :: u(m, n)
  double precision, intent(out) :: v(m, n)
  integer :: i, j
  do j = 1, n
    do i = 1, m
      v(i, j) = 0.5d0 * u(i, j) + 0.25d0 * (u(max(i - 1, 1), j) + u(i, min(j + 1, n)))
    end do
  end do
end subroutine relax2

subroutine dotp(n, x, y, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), y(n)
  double precision, intent(out) :: s
  integer :: i
  s = 0.0d0
  do i = 1, n
    s = s + x(i) * y(i)
  end do
end subroutine dotp
