! A main program taking its size from the command line (written for port-fortran's tests):
! without an argument it stops before any loop; the loop under n > 100000 is never reached
! by a small run.
program sumsprog
  use sums
  implicit none
  integer :: n, i, j
  character(len=32) :: arg
  real(8), allocatable :: a(:), b(:)
  real(8) :: s
  if (command_argument_count() < 1) then
    print *, 'usage: sumsprog <n>'
    stop
  end if
  call get_command_argument(1, arg)
  read (arg, *) n
  allocate (a(n), b(n))
  call fill(n, a)
  do concurrent (i = 1:n)
    b(i) = 2.0d0 * a(i) + 1.0d0
  end do
  if (n > 100000) then
    do j = 1, n
      b(j) = b(j) * 0.5d0
    end do
  end if
  s = 0.0d0
  do i = 1, n
    s = s + b(i) * a(i)
  end do
  print '(a, i6, a, es22.14)', 'n =', n, '  sum =', s
  print *, 'time', 0.001
end program sumsprog
