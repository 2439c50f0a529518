! A module used by tree_a/clip.f90: compiled first, its .mod found by the kernel's file.
module limits_mod
  implicit none
contains
  subroutine clamp(v, lo, hi)
    double precision, intent(inout) :: v
    double precision, intent(in) :: lo, hi
    if (v < lo) v = lo
    if (v > hi) v = hi
  end subroutine clamp
end module limits_mod
