! A module function returning an array (F90 style): its C++ entry could not
! return it, so the port is hybrid (the function stays Fortran, its nest a
! Kokkos kernel) and the harness compares the returned array.
module arrfun
  implicit none
contains
  function outer2(m, n, x, y) result(t)
    integer, intent(in) :: m, n
    real(8), intent(in) :: x(m), y(n)
    real(8) :: t(m, n)
    integer :: i, j
    do j = 1, n
      do i = 1, m
        t(i, j) = x(i) * y(j) + 0.5d0 * x(i)
      end do
    end do
  end function outer2

  ! PURE: the outlined kernel's interface is declared pure too (a pure
  ! procedure calls only pure ones)
  pure function ramp(n, x) result(r)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8) :: r(n)
    integer :: i
    do i = 1, n
      r(i) = 2.0d0 * x(i) - real(i, 8)
    end do
  end function ramp
end module arrfun
