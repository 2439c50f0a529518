! A routine calling a helper written in C (ctwice, in ctwice.c beside it), outside its
! loop, and a main program timing itself with a C clock (wclock.c): both link the tree's C.
subroutine scaled(n, a, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a, x(n)
  real(8), intent(inout) :: y(n)
  real(8), external :: ctwice
  real(8) :: s
  integer :: i
  s = ctwice(a)
  do i = 1, n
    y(i) = y(i) + s * x(i)
  end do
end subroutine scaled
