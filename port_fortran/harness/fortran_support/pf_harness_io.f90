! Reading and writing the harness records (see port_fortran/harness/inputs.py):
! int64 ndim, lbound(ndim), ubound(ndim), type code, nbytes, then the raw data.
module pf_harness_io
  use iso_fortran_env, only: int8, int64, real64, error_unit
  implicit none
  private
  public :: pf_rhdr, pf_whdr, pf_now, pf_guard_bad
  ! Each array argument of the driver sits between two guard zones of pf_gbytes bytes
  ! holding the byte pf_gbyte (as the C++ driver's): a routine that writes outside an
  ! argument (an overrun through sequence association, which -fcheck=bounds cannot see)
  ! is reported by name instead of corrupting a neighbouring array.
  integer, parameter, public :: pf_gbytes = 64
  integer(int8), parameter, public :: pf_gbyte = -91_int8  ! 0xA5
contains
  subroutine pf_guard_bad(name, before, after)
    character(*), intent(in) :: name
    logical, intent(in) :: before, after
    if (.not. (before .or. after)) return
    write(error_unit, '(4a)') 'pf_harness: the routine wrote outside argument ', name, ' (', &
      trim(merge('before its start', 'past its end    ', before)) // ')'
    error stop 3
  end subroutine pf_guard_bad

  subroutine pf_rhdr(u, name, nd_want, nd, lb, ub, tc, nb)
    integer, intent(in) :: u, nd_want
    character(*), intent(in) :: name
    integer(int64), intent(out) :: nd, lb(7), ub(7), tc, nb
    read(u) nd
    if (nd /= nd_want) then
      write(error_unit, '(3a,i0,a,i0)') 'pf_harness: record ', name, ': rank ', nd, ' expected ', nd_want
      error stop 3
    end if
    lb = 1
    ub = 0
    if (nd > 0) then
      read(u) lb(1:nd)
      read(u) ub(1:nd)
    end if
    read(u) tc, nb
  end subroutine pf_rhdr

  subroutine pf_whdr(u, nd, lb, ub, tc, nb)
    integer, intent(in) :: u
    integer(int64), intent(in) :: nd, tc, nb
    integer(int64), intent(in) :: lb(:), ub(:)
    write(u) nd
    if (nd > 0) then
      write(u) lb(1:nd)
      write(u) ub(1:nd)
    end if
    write(u) tc, nb
  end subroutine pf_whdr

  function pf_now() result(t)
    real(real64) :: t
    integer(int64) :: c, r
    call system_clock(c, r)
    t = real(c, real64) / real(r, real64)
  end function pf_now
end module pf_harness_io
