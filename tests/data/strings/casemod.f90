! casemod.f90 -- string kernels in a module, written for port-fortran's tests.
! Legacy features: CHARACTER(LEN=*) dummies, substrings s(i:i) read and assigned,
! ICHAR/CHAR case arithmetic, LEN/LEN_TRIM, a substring compared in a search loop,
! a local CHARACTER*12 buffer (blank padding, truncation), ordering comparison.
module casemod
  implicit none
contains
  subroutine upcase(str, nchg)
    character(len=*), intent(inout) :: str
    integer, intent(out) :: nchg
    integer :: i, ic
    nchg = 0
    do i = 1, len(str)
      ic = ichar(str(i:i))
      if (ic >= 97 .and. ic <= 122) then
        str(i:i) = char(ic - 32)
        nchg = nchg + 1
      end if
    end do
  end subroutine upcase

  subroutine match(pat, str, npat, first, last, order)
    character(len=*), intent(in) :: pat, str
    integer, intent(in) :: npat
    integer, intent(out) :: first, last, order
    character*12 buf
    integer :: i, n
    first = 0
    last = 0
    n = min(npat, len_trim(pat))
    if (n < 1) return
    do i = 1, len(str) - n + 1
      if (str(i:i+n-1) == pat(1:n)) then
        if (first == 0) first = i
        last = i
      end if
    end do
    buf = str
    order = 0
    if (buf < pat) order = -1
    if (buf > pat) order = 1
    if (index(str, pat(1:n)) /= first) order = 99
  end subroutine match
end module casemod
