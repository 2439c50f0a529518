! params.f90 -- wave90 run parameters (written for port-fortran): read once from wave.in,
! kept as module state.
module params
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: n = 0, nsteps = 0, nout = 1
  real(dp) :: cfl = 0.5_dp, sigma = 0.0_dp, dx = 1.0_dp
contains
  subroutine read_input(fname)
    character(len=*), intent(in) :: fname
    integer :: unit
    open(newunit=unit, file=fname, status='old', action='read')
    read(unit, *) n, nsteps, nout
    read(unit, *) cfl, sigma
    close(unit)
    dx = 1.0_dp / real(n + 1, dp)
  end subroutine read_input
end module params
