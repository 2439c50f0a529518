! privmod.f90 -- a module whose helpers are PRIVATE (SNAP's setup_module and mms_module:
! PRIVATE by default, a few names PUBLIC), written for port-fortran's tests. PSCALE is a
! private procedure reading a private module variable that PSET assigns (state, not a
! constant): the harness compiles a copy of the file with both made PUBLIC, so that its
! driver can call PSCALE and set FACTOR. PHIDDEN is private by an explicit statement: the
! copy drops it from that statement before making it PUBLIC.
module privmod
  implicit none
  private
  public :: pset
  private :: phidden
  double precision :: factor = 1.0d0
contains
  subroutine pset(f)
    double precision, intent(in) :: f
    factor = f
  end subroutine pset

  subroutine pscale(n, x)
    integer, intent(in) :: n
    double precision, intent(inout) :: x(n)
    integer :: i
    do i = 1, n
      x(i) = factor * x(i) + 1.0d0
    end do
    write (*, *) 'pscale', n
  end subroutine pscale

  subroutine phidden(n, x)
    integer, intent(in) :: n
    double precision, intent(inout) :: x(n)
    integer :: i
    do i = 1, n
      x(i) = 2.0d0 * x(i)
    end do
    write (*, *) 'phidden', n
  end subroutine phidden
end module privmod
