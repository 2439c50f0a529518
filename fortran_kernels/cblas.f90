! cblas.f90 -- single-precision complex dot product.
! Written for port-fortran.
! Free form, complex(4) (single) data and accumulator, conjg, the
! result returned through an intent(out) argument.
subroutine cdotc_sub(n, x, y, res)
  implicit none
  integer, intent(in) :: n
  complex(4), intent(in) :: x(n), y(n)
  complex(4), intent(out) :: res
  complex(4) :: acc
  integer :: i

  acc = (0.0, 0.0)
  do i = 1, n
    acc = acc + conjg(x(i)) * y(i)
  end do
  res = acc
end subroutine cdotc_sub
