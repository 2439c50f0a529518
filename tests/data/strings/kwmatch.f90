! kwmatch.f90 -- CHARACTER locals of a length computed at entry, written for port-fortran's tests.
! Legacy features: character(len=len_trim(s)) locals (sized when the routine starts), upper-
! casing into them through IACHAR/ACHAR, a comparison of the two, a result code.
module kwmatch
  implicit none
contains
  subroutine match_nocase(key, word, ierr)
    character(len=*), intent(in) :: key, word
    integer, intent(out) :: ierr
    character(len=len_trim(key)) :: keyu
    character(len=len_trim(word)) :: wordu
    integer :: i, ic
    keyu = key
    do i = 1, len(keyu)
      ic = iachar(keyu(i:i))
      if (ic >= 97 .and. ic <= 122) keyu(i:i) = achar(ic - 32)
    end do
    wordu = word
    do i = 1, len(wordu)
      ic = iachar(wordu(i:i))
      if (ic >= 97 .and. ic <= 122) wordu(i:i) = achar(ic - 32)
    end do
    ierr = 1
    if (keyu == wordu) ierr = 0
    if (len(keyu) > len(wordu)) ierr = ierr + 10
  end subroutine match_nocase
end module kwmatch
