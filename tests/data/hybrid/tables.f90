! tables.f90 -- initialised locals (implicit SAVE), written for port-fortran's tests: a table the
! routine never assigns is a constant (full port); a counter it assigns is SAVE state (hybrid).
subroutine wsmooth(n, x, y)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n)
  double precision :: w(3) = (/ 0.25d0, 0.5d0, 0.25d0 /)
  double precision :: scale = 2.0d0
  integer :: i
  y(1) = x(1)
  y(n) = x(n)
  do i = 2, n - 1
    y(i) = scale * (w(1)*x(i-1) + w(2)*x(i) + w(3)*x(i+1))
  end do
end subroutine
subroutine counter(n, x)
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: calls = 0
  integer :: i
  calls = calls + 1
  do i = 1, n
    x(i) = x(i) + calls
  end do
end subroutine
