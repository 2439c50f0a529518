! A main program whose output depends on when it runs (written for port-fortran's tests).
program clockprog
  implicit none
  integer :: i
  integer(8) :: c
  real(8) :: a(1000)
  do i = 1, 1000
    a(i) = dble(i)
  end do
  call system_clock(c)
  print *, 'sum', sum(a), 'tick', c
end program clockprog
