! A hybrid port (the routine prints a check sum) whose nest fills a small
! scratch array element by element, unrolled by hand over a colour index
! (ic = 1; yt(ic, 1) = ...; ic = 2; ...), and reads each element after
! writing it: the array appears nowhere else in the routine, so the outlined
! kernel holds it as a local, private to each iteration.
subroutine unrolled(n, a, b, c)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a(2, n)
  real(8), intent(out) :: b(2, n), c(n)
  real(8) :: yt(2, 2)
  integer :: i, ic
  do i = 1, n
    ic = 1
    yt(ic, 1) = a(1, i) * 2.0d0
    yt(ic, 2) = a(2, i) - 1.0d0
    ic = 2
    yt(ic, 1) = a(1, i) + a(2, i)
    yt(ic, 2) = yt(1, 1) * yt(1, 2)
    yt(1, 1) = yt(1, 1) + yt(2, 2)
    ic = 1
    b(ic, i) = yt(ic, 1) + yt(2, 1)
    b(2, i) = yt(2, 2) - yt(ic, 2)
    c(i) = yt(1, 1)
  end do
  write(*, '(a, es12.4)') ' check: ', sum(c)
end subroutine unrolled
