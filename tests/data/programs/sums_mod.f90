! A module the program uses (written for port-fortran's tests).
module sums
  implicit none
contains
  subroutine fill(n, a)
    integer, intent(in) :: n
    real(8), intent(out) :: a(n)
    integer :: i
    do i = 1, n
      a(i) = 1.0d0 / dble(i)
    end do
  end subroutine fill
end module sums
