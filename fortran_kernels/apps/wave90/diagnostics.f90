! diagnostics.f90 -- wave90 diagnostics as module procedures: the discrete energy and a
! report line.
module diagnostics
  implicit none
contains
  function energy(n, u, uold, c2) result(e)
    integer, intent(in) :: n
    double precision, intent(in) :: u(0:n+1), uold(0:n+1), c2(0:n)
    double precision :: e
    integer :: i
    e = 0.0d0
    do i = 0, n  ! kinetic (cells) and potential (faces) parts of the leapfrog's invariant
      e = e + 0.5d0 * c2(i) * (u(i+1) - u(i)) * (uold(i+1) - uold(i))
      if (i > 0) e = e + 0.5d0 * (u(i) - uold(i))**2
    end do
  end function energy

  subroutine report(step, e, umax)
    integer, intent(in) :: step
    double precision, intent(in) :: e, umax
    write(*, '(a, i7, a, es17.9, a, es17.9)') ' step', step, '  energy', e, '  max|u|', umax
  end subroutine report
end module diagnostics
