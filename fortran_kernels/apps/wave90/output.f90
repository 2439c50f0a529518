! output.f90 -- wave90 snapshot of the displacement, every STRIDE-th point.
subroutine write_snapshot(fname, n, u, stride)
  implicit none
  character(len=*), intent(in) :: fname
  integer, intent(in) :: n, stride
  double precision, intent(in) :: u(0:n+1)
  integer :: i, unit
  open(newunit=unit, file=fname, status='replace', action='write')
  write(unit, '(a, i8)') '# displacement, points: ', n
  do i = 0, n + 1, max(1, stride)
    write(unit, '(i8, es17.9)') i, u(i)
  end do
  close(unit)
end subroutine write_snapshot
