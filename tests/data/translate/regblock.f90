! regblock.f90 -- bands for register blocking (translate/regblock.py).
! Written for port-fortran's tests.
subroutine mmacc(m, n, k, a, b, c)
  ! c = c + a*b, accumulated in place (no scalar temporary)
  integer, intent(in) :: m, n, k
  real(8), intent(in) :: a(m, k), b(k, n)
  real(8), intent(inout) :: c(m, n)
  integer :: i, j, l
  do j = 1, n
    do i = 1, m
      do l = 1, k
        c(i, j) = c(i, j) + a(i, l) * b(l, j)
      end do
    end do
  end do
end subroutine mmacc

subroutine trimm(n, a, b, c)
  ! the inner loop's bound reads i: not one loop for the block, not blocked
  integer, intent(in) :: n
  real(8), intent(in) :: a(n, n), b(n, n)
  real(8), intent(out) :: c(n, n)
  integer :: i, j, l
  real(8) :: t
  do j = 1, n
    do i = 1, n
      t = 0.0d0
      do l = 1, i
        t = t + a(i, l) * b(l, j)
      end do
      c(i, j) = t
    end do
  end do
end subroutine trimm

subroutine mmlast(m, n, k, a, b, c, jl)
  ! j is read after its loop (serial): only the loop over i is blocked
  integer, intent(in) :: m, n, k
  real(8), intent(in) :: a(m, k), b(k, n)
  real(8), intent(out) :: c(m, n)
  integer, intent(out) :: jl
  integer :: i, j, l
  real(8) :: t
  do j = 1, n
    do i = 1, m
      t = 0.0d0
      do l = 1, k
        t = t + a(i, l) * b(l, j)
      end do
      c(i, j) = t
    end do
  end do
  jl = j
end subroutine mmlast

