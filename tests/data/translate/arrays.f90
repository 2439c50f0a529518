! Features: array syntax (whole arrays and sections), WHERE/ELSEWHERE, array reductions
! (sum, maxval, dot_product) hoisted into parallel_reduce, MDRangePolicy for a 2-D nest,
! a host time loop launching parallel kernels.
subroutine arrsyn(n, m, a, b, c, s, amax, d)
  implicit none
  integer, intent(in) :: n, m
  real(8), intent(in) :: a(n, m), b(n)
  real(8), intent(out) :: c(n, m)
  real(8), intent(out) :: s, amax, d
  c = 2.0d0 * a
  c(1:n, 1) = c(1:n, 1) + b(1:n)
  where (a > 0.5d0)
    c = c - 1.0d0
  elsewhere
    c = c + 1.0d0
  end where
  s = sum(a(1:n, 1:m))
  amax = maxval(a)
  d = dot_product(b(1:n), a(1:n, m))
end subroutine arrsyn

subroutine smooth(n, m, nsteps, u, w)
  implicit none
  integer, intent(in) :: n, m, nsteps
  real(8), intent(inout) :: u(0:n+1, 0:m+1)
  real(8), intent(inout) :: w(0:n+1, 0:m+1)
  integer :: i, j, it
  do it = 1, nsteps
    do j = 1, m
      do i = 1, n
        w(i, j) = 0.2d0 * (u(i, j) + u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
    do j = 1, m
      do i = 1, n
        u(i, j) = w(i, j)
      end do
    end do
  end do
end subroutine smooth

! y := y + 2 A^T x: a parallel loop over columns with an inner dot product (TeamPolicy
! when TranslateOptions.team_reductions, else the inner loop runs sequentially).
subroutine matvt(m, n, a, x, y)
  implicit none
  integer, intent(in) :: m, n
  real(8), intent(in) :: a(m, n), x(m)
  real(8), intent(inout) :: y(n)
  integer :: i, j
  real(8) :: temp
  do j = 1, n
    temp = 0.0d0
    do i = 1, m
      temp = temp + a(i, j) * x(i)
    end do
    y(j) = y(j) + 2.0d0 * temp
  end do
end subroutine matvt
