! Loops that start below zero (written for port-fortran's tests): a stencil weight table
! W(-r:r,-r:r) cleared by array syntax, a 1-D loop and a reduction over negative indices.
subroutine negb(r, w, v, s)
  integer, intent(in) :: r
  real(8), intent(inout) :: w(-r:r, -r:r), v(-2*r:r)
  real(8), intent(out) :: s
  integer :: i
  w = 0.0d0
  do i = -2*r, r
    v(i) = v(i) * dble(i)
  end do
  s = 0.0d0
  do i = -2*r, -1
    s = s + v(i)
  end do
end subroutine negb
