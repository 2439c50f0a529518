! A kernel that uses a module of another file of the program (tree_b/limits_mod.f90).
subroutine clip(n, x, lo, hi)
  use limits_mod
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  double precision, intent(in) :: lo, hi
  double precision :: v
  integer :: i
  do i = 1, n
    v = x(i)
    call clamp(v, lo, hi)
    x(i) = v
  end do
end subroutine clip
