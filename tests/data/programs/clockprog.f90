! A main program whose output depends on when it runs (written for port-fortran's tests):
! the one number it prints is a clock, so its output proves nothing about a port.
program clockprog
  implicit none
  integer :: i
  integer(8) :: c
  real(8) :: a(1000)
  do i = 1, 1000
    a(i) = dble(i)
  end do
  call system_clock(c)
  if (sum(a) < 0.0d0) print *, 'negative'
  print *, 'tick', c
end program clockprog
