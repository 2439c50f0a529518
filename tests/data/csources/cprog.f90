program cprog
  implicit none
  integer, parameter :: n = 5000
  real(8) :: x(n), y(n), t0, t1
  integer :: i
  call wclock(t0)
  do i = 1, n
    x(i) = 0.5d0 * i
    y(i) = 1.0d0 / i
  end do
  call scaled(n, 1.5d0, x, y)
  call wclock(t1)
  print *, 'sum', sum(y)
  print *, 'time', t1 - t0
end program cprog
