! thermo.f90 -- md kinetic energy (a reduction) and the positions written to a file.
double precision function ekin(n, vx, vy, vz)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: vx(n), vy(n), vz(n)
  integer :: i
  ekin = 0.0d0
  do i = 1, n
    ekin = ekin + 0.5d0 * (vx(i)**2 + vy(i)**2 + vz(i)**2)
  end do
end function ekin

subroutine dump_positions(fname, n, x, y, z, every)
  implicit none
  character(len=*), intent(in) :: fname
  integer, intent(in) :: n, every
  double precision, intent(in) :: x(n), y(n), z(n)
  integer :: i, u
  open(newunit=u, file=fname, status='replace', action='write')
  do i = 1, n, every
    write(u, '(i6, 3f14.8)') i, x(i), y(i), z(i)
  end do
  close(u)
end subroutine dump_positions
