! Written for port-fortran's tests: face codes read from an index array and wrapped by MOD
! before they subscript (as unstructured-mesh codes do: the face across, the next corner).
subroutine nextface(nel, ielfc, v, out)
  integer, parameter :: nface = 4
  integer, intent(in) :: nel
  integer, intent(in) :: ielfc(nface, nel)
  real(8), intent(in) :: v(nface, nel)
  real(8), intent(out) :: out(nface, nel)
  integer :: iel, is, ins, inn
  do iel = 1, nel
    do is = 1, nface
      ins = ielfc(is, iel)
      ins = mod(ins, nface) + 1
      inn = mod(ielfc(is, iel) + is, nface) + 1
      out(is, iel) = v(ins, iel) - 2.0d0 * v(inn, iel)
    end do
  end do
end subroutine nextface

subroutine scaled(nel, icnt, v, out)
  ! 2 * icnt(iel) is no index form (an element, +/- c, ABS, or MOD-wrapped): icnt is data
  integer, intent(in) :: nel
  integer, intent(in) :: icnt(nel)
  real(8), intent(in) :: v(*)
  real(8), intent(out) :: out(nel)
  integer :: iel, k
  do iel = 1, nel
    k = 2 * icnt(iel)
    out(iel) = v(k)
  end do
end subroutine scaled

subroutine reused(nel, ielfc, ielel, v, w, out)
  ! ins holds a face code, then an element number: each array indexes what its values reach
  integer, parameter :: nface = 4
  integer, intent(in) :: nel
  integer, intent(in) :: ielfc(nface, nel), ielel(nface, nel)
  real(8), intent(in) :: v(nface, nel), w(nel)
  real(8), intent(out) :: out(nface, nel)
  integer :: iel, is, ins
  do iel = 1, nel
    do is = 1, nface
      ins = ielfc(is, iel)
      ins = modulo(ins, nface) + 1
      out(is, iel) = v(ins, iel)
      ins = ielel(is, iel)
      out(is, iel) = out(is, iel) + w(ins)
    end do
  end do
end subroutine reused

subroutine chased(n, ip, x)
  ! next follows a chain (next = nextp, a copy of an element of ip): ip indexes x
  integer, intent(in) :: n
  integer, intent(in) :: ip(n)
  real(8), intent(inout) :: x(n)
  integer :: j, next, nextp
  next = ip(1)
  do j = 1, n
    x(next) = x(next) + 1.0d0
    nextp = ip(next)
    next = nextp
  end do
end subroutine chased

subroutine copied_count(n, ip, x)
  ! next is also a copy of a count: what reaches x(next) is not only ip's, so ip is no index
  integer, intent(in) :: n
  integer, intent(in) :: ip(n)
  real(8), intent(inout) :: x(n)
  integer :: j, next, cnt
  cnt = n
  next = ip(1)
  do j = 1, n
    x(next) = x(next) + 1.0d0
    next = cnt
  end do
end subroutine copied_count
