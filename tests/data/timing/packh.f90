! Pack the first `depth` cells of each row of a grid with a ghost-cell border into a buffer,
! shifted by `off` cells once the rows are long (a subscript the spec inference cannot bound:
! how far it reaches is the caller's business, as in TeaLeaf's pack kernels, whose x_inc
! shift is a scalar). Nothing in the declarations ties depth to halo.
subroutine packh(x_min, x_max, y_min, y_max, halo, depth, off, field, buf)
  implicit none
  integer :: x_min, x_max, y_min, y_max, halo, depth, off, j, k
  real(kind=8) :: field(x_min-halo:x_max+halo, y_min-halo:y_max+halo)
  real(kind=8) :: buf(depth, y_min:y_max)
  do k = y_min, y_max
    do j = 1, depth
      buf(j, k) = 2.0d0 * field(x_min - 1 + j + (depth / 1000) * off, k)
    end do
  end do
end subroutine packh
