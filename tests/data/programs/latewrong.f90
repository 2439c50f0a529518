! A main program whose output changes only from its fifth run on (written for
! port-fortran's tests): it counts its runs in the file named by its first argument, as a
! program reading memory it never set may print the same wrong value several runs in a row
! and another value later.
program latewrong
  implicit none
  integer :: i, n, u, ios
  real(8) :: a(1000)
  character(len=512) :: path
  call get_command_argument(1, path)
  n = 0
  open(newunit=u, file=trim(path), status='old', action='read', iostat=ios)
  if (ios == 0) then
    read(u, *, iostat=ios) n
    close(u)
  end if
  open(newunit=u, file=trim(path), status='replace', action='write')
  write(u, *) n + 1
  close(u)
  do i = 1, 1000
    a(i) = dble(i)
  end do
  if (n < 4) then
    print *, 'norm', sum(a)
  else
    print *, 'norm', 2 * sum(a)
  end if
end program latewrong
