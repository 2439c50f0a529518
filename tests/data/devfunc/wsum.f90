! A function called in a reduction: s = s + weight(x(i), w) where weight takes the
! whole array w (an array dummy) and calls another function.
double precision function horner(x, c)
  implicit none
  double precision, intent(in) :: x, c(3)
  horner = c(1) + x*(c(2) + x*c(3))
end function horner

double precision function weight(x, w)
  implicit none
  double precision, intent(in) :: x, w(3)
  double precision :: horner
  weight = horner(x, w) * 0.5d0
end function weight

subroutine wsum(n, x, w, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), w(3)
  double precision, intent(out) :: s
  double precision :: weight
  integer :: i
  s = 0.0d0
  do i = 1, n
    s = s + weight(x(i), w)
  end do
end subroutine wsum
