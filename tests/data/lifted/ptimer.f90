! A timer module in another file, used by the program of lkern.F90 (written for port-fortran).
module ptimer
  implicit none
  double precision, save :: t0 = 0.0d0
contains
  subroutine tstart()
    integer(8) :: c, r
    call system_clock(c, r)
    t0 = dble(c) / dble(r)
  end subroutine tstart
  subroutine tstop()
    integer(8) :: c, r
    call system_clock(c, r)
    write(*, '(a, f12.6)') 'time:', dble(c) / dble(r) - t0
  end subroutine tstop
end module ptimer
