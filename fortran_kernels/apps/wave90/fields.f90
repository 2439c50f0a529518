! fields.f90 -- wave90 state: the displacement at three time levels and the squared
! Courant number of a layered medium, allocated once the size is known.
module fields
  use params, only: dp
  implicit none
  real(dp), allocatable :: u(:), uold(:), unew(:), c2(:)
contains
  subroutine allocate_fields(n)
    integer, intent(in) :: n
    allocate(u(0:n+1), uold(0:n+1), unew(0:n+1), c2(0:n))
  end subroutine allocate_fields

  subroutine free_fields()
    deallocate(u, uold, unew, c2)
  end subroutine free_fields
end module fields
