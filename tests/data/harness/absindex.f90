! Written for port-fortran's tests: an index array whose sign marks something else, read
! through ABS into a local before it subscripts (as connectivity codes do).
subroutine regw(nel, w, ielreg, out)
  integer, intent(in) :: nel
  real(8), intent(in) :: w(*)
  integer, intent(in) :: ielreg(nel)
  real(8), intent(out) :: out(nel)
  integer :: iel, ireg
  do iel = 1, nel
    ireg = abs(ielreg(iel))
    out(iel) = 2.0d0 * w(ireg)
  end do
end subroutine regw
