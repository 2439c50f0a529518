! vecops.F90 -- vector updates with a preprocessor-selected real kind.
! Written for port-fortran.
! Needs the C preprocessor (-cpp): RK is 8 unless -DSINGLE, and SQR is a
! function-like macro expanded inside an expression.
#ifdef SINGLE
#define RK 4
#else
#define RK 8
#endif
#define SQR(a) ((a)*(a))

! w := alpha*x + beta*y
subroutine waxpby(n, alpha, x, beta, y, w)
  implicit none
  integer, intent(in) :: n
  real(RK), intent(in) :: alpha, beta
  real(RK), intent(in) :: x(n), y(n)
  real(RK), intent(out) :: w(n)
  integer :: i

  do i = 1, n
    w(i) = alpha * x(i) + beta * y(i)
  end do
end subroutine waxpby

! Euclidean distance between x and y.
subroutine vdist(n, x, y, d)
  implicit none
  integer, intent(in) :: n
  real(RK), intent(in) :: x(n), y(n)
  real(RK), intent(out) :: d
  real(RK) :: s
  integer :: i

  s = 0
  do i = 1, n
    s = s + SQR(x(i) - y(i))
  end do
  d = sqrt(s)
end subroutine vdist
