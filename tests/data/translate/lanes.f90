! lanes.f90 -- kernels whose host loops may run their iterations as SIMD lanes
! (translate/outer_simd.py). Written for port-fortran's tests.

! potential at each point from all sources: a sum carried through the inner loop
subroutine potsum(n, ns, px, sx, q, phi)
  implicit none
  integer, intent(in) :: n, ns
  real(8), intent(in) :: px(n), sx(ns), q(ns)
  real(8), intent(out) :: phi(n)
  real(8) :: d, acc
  integer :: i, j
  do i = 1, n
    acc = 0.0d0
    do j = 1, ns
      d = px(i) - sx(j)
      acc = acc + q(j) / sqrt(d * d + 1.0d-2)
    end do
    phi(i) = acc
  end do
end subroutine potsum

! Horner's rule per element, coefficients from the highest degree down
subroutine horner(n, nd, c, x, p)
  implicit none
  integer, intent(in) :: n, nd
  real(8), intent(in) :: c(0:nd), x(n)
  real(8), intent(out) :: p(n)
  real(8) :: t
  integer :: i, k
  do i = 1, n
    t = c(nd)
    do k = nd - 1, 0, -1
      t = t * x(i) + c(k)
    end do
    p(i) = t
  end do
end subroutine horner

! column sums: lanes would read a row across columns (a(i, j) with j the kernel's index)
subroutine colsum(m, n, a, s)
  implicit none
  integer, intent(in) :: m, n
  real(8), intent(in) :: a(m, n)
  real(8), intent(out) :: s(n)
  real(8) :: t
  integer :: i, j
  do j = 1, n
    t = 0.0d0
    do i = 1, m
      t = t + a(i, j)
    end do
    s(j) = t
  end do
end subroutine colsum

! compressed rows: each row its own length
subroutine rowdot(n, nnz, ia, ja, v, x, y)
  implicit none
  integer, intent(in) :: n, nnz, ia(n + 1), ja(nnz)
  real(8), intent(in) :: v(nnz), x(n)
  real(8), intent(out) :: y(n)
  real(8) :: t
  integer :: i, k
  do i = 1, n
    t = 0.0d0
    do k = ia(i), ia(i + 1) - 1
      t = t + v(k) * x(ja(k))
    end do
    y(i) = t
  end do
end subroutine rowdot
