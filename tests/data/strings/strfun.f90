! strfun.f90 -- CHARACTER function results, written for port-fortran's tests.
! Legacy features: a result of the argument's length (len=len(s)) set character by character
! through a SELECT CASE, a fixed-length result (character(len=8)) assigned whole (padding,
! truncation), a result of a computed length (len=n+2) from an integer dummy.
module strfun
  implicit none
contains
  function lcase(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: i, ic
    do i = 1, len(s)
      ic = iachar(s(i:i))
      select case (ic)
      case (65:90)
        r(i:i) = achar(ic + 32)
      case default
        r(i:i) = s(i:i)
      end select
    end do
  end function lcase

  function first8(s, k) result(r)
    character(len=*), intent(in) :: s
    integer, intent(in) :: k
    character(len=8) :: r
    r = s
    if (k > 0 .and. k <= 8) r(k:k) = '#'
  end function first8

  function framed(s, n) result(r)
    character(len=*), intent(in) :: s
    integer, intent(in) :: n
    character(len=n+2) :: r
    integer :: i
    r = '['
    do i = 1, n
      if (i <= len(s)) then
        r(i+1:i+1) = s(i:i)
      else
        r(i+1:i+1) = '.'
      end if
    end do
    r(n+2:n+2) = ']'
  end function framed
end module strfun
