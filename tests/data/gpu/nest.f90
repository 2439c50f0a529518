subroutine nest2(n, m, a, s)
  integer, intent(in) :: n, m
  real(8), intent(in) :: a(n, m)
  real(8), intent(out) :: s
  integer :: i, j
  s = 0.0d0
  do j = 1, m
    do i = 1, n
      s = s + a(i, j) * a(i, j)
    end do
  end do
end subroutine nest2
subroutine nestmix(n, m, a, s, t)
  integer, intent(in) :: n, m
  real(8), intent(in) :: a(n, m)
  real(8), intent(out) :: s, t
  integer :: i, j
  s = 0.0d0
  t = 0.0d0
  do j = 1, m
    do i = 1, n
      t = max(t, a(i, j))
    end do
    s = s + a(1, j)
  end do
end subroutine nestmix
