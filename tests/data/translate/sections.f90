! Local work arrays set by array assignments at the top of every iteration: a whole
! array zeroed then set on some paths (w = 0, then w(1) = 1 when a test holds), a
! section copied from a column (v(:) = a(:, i)), a section with explicit bounds (z(0:nc-1)),
! then read. Each is private to the iteration, the loop one parallel_for. In secl, q is
! read after the loop: private, the last iteration writing through.
subroutine secw(n, a, b)
  implicit none
  integer, parameter :: nc = 4
  integer, intent(in) :: n
  real(8), intent(in) :: a(nc, n)
  real(8), intent(out) :: b(n)
  real(8) :: w(nc), v(nc), z(0:nc-1), f(nc, nc)
  integer :: i, j
  do i = 1, n
    w = 0.0d0
    if (a(1, i) < 0.5d0) w(1) = 1.0d0
    v(:) = a(:, i) * 2.0d0
    z(0:nc-1) = w(1:nc) + v
    f = 0.0d0
    do j = 1, nc
      f(j, 1) = v(j) - z(j - 1)
      f(j, mod(j, nc) + 1) = v(j) * w(j)
    end do
    b(i) = sum(z) + w(2) + sum(f(:, 1)) - f(2, 3)
  end do
end subroutine secw

subroutine secl(n, a, c, last)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a(4, n)
  real(8), intent(out) :: c(n), last
  real(8) :: q(4)
  integer :: i
  do i = 1, n
    q(1:2) = a(1:2, i)
    q(3:4) = a(3:4, i) * 0.5d0
    c(i) = q(1) * q(4) + q(2) - q(3)
  end do
  last = q(1) + q(3)
end subroutine secl
