! A two-sweep recurrence per column over blocks of rows, through scratch arrays each column
! fills before reading (written for port-fortran's tests, in the style of TeaLeaf's
! block-Jacobi preconditioner): d(0:3) and y(0:3) are private to each column j; the rows
! left over are solved by a second nest reusing the same scratch arrays.
subroutine colsolve(nx, ny, a, b, c, r, x)
  integer, intent(in) :: nx, ny
  real(8), intent(in) :: a(nx, ny), b(nx, ny), c(nx, ny), r(nx, ny)
  real(8), intent(out) :: x(nx, ny)
  integer, parameter :: nb = 4
  real(8) :: d(0:nb-1), y(0:nb-1)
  integer :: j, k, kb, lo, hi, nfull
  d = 0d0
  y = 0d0
  nfull = ny - mod(ny, nb)
  do kb = 1, nfull, nb
    lo = kb
    hi = kb + nb - 1
    do j = 1, nx
      k = lo
      d(k - lo) = r(j, k) / (2d0 + b(j, k))
      do k = lo + 1, hi
        d(k - lo) = (r(j, k) - a(j, k) * d(k - lo - 1)) / (2d0 + b(j, k))
      end do
      k = hi
      y(k - lo) = d(k - lo)
      do k = hi - 1, lo, -1
        y(k - lo) = d(k - lo) - 0.25d0 * c(j, k) * y(k - lo + 1)
      end do
      do k = lo, hi
        x(j, k) = y(k - lo)
      end do
    end do
  end do
  do kb = nfull + 1, ny, nb
    lo = min(kb, ny)
    hi = min(kb + nb - 1, ny)
    do j = 1, nx
      k = lo
      d(k - lo) = r(j, k) / (2d0 + b(j, k))
      do k = lo + 1, hi
        d(k - lo) = (r(j, k) - a(j, k) * d(k - lo - 1)) / (2d0 + b(j, k))
      end do
      k = hi
      y(k - lo) = d(k - lo)
      do k = hi - 1, lo, -1
        y(k - lo) = d(k - lo) - 0.25d0 * c(j, k) * y(k - lo + 1)
      end do
      do k = lo, hi
        x(j, k) = y(k - lo)
      end do
    end do
  end do
end subroutine colsolve
