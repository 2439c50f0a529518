! Blocks of four rows solved per column: a forward and a backward recurrence in scratch
! arrays, then the block copied out -- the copy alone is parallel, and only 4 iterations.
subroutine blocksolve(nx, ny, r, d, c, z)
  implicit none
  integer, parameter :: bs = 4
  integer :: nx, ny, j, kb, k, lo, hi
  real(kind=8) :: r(nx, ny), d(nx, ny), c(nx, ny), z(nx, ny)
  real(kind=8) :: f(0:bs-1), g(0:bs-1)
  do kb = 1, ny - bs + 1, bs
    lo = kb
    hi = kb + bs - 1
    do j = 1, nx
      f(0) = r(j, lo) / d(j, lo)
      do k = lo + 1, hi
        f(k - lo) = (r(j, k) - c(j, k) * f(k - lo - 1)) / d(j, k)
      end do
      g(hi - lo) = f(hi - lo)
      do k = hi - 1, lo, -1
        g(k - lo) = f(k - lo) - c(j, k) * g(k - lo + 1)
      end do
      do k = lo, hi
        z(j, k) = g(k - lo)
      end do
    end do
  end do
end subroutine blocksolve

! The same shape with a long inner parallel loop: worth a launch per pass.
subroutine colsweep(nx, ny, a, b)
  implicit none
  integer :: nx, ny, j, k
  real(kind=8) :: a(nx, ny), b(nx, ny)
  do k = 2, ny
    do j = 1, nx
      a(j, k) = a(j, k - 1) * 0.5d0 + b(j, k)
    end do
  end do
end subroutine colsweep

! blocksolve with the first element of each column's sweep carried over from the column
! before (f(0) reads f(bs - 1); the caller's f the first time): f is not private to a
! column, the column loop stays serial, and the block copy is again 4 iterations inside a
! serial loop.
subroutine blockcarry(nx, ny, r, d, c, z, f)
  implicit none
  integer, parameter :: bs = 4
  integer :: nx, ny, j, kb, k, lo, hi
  real(kind=8) :: r(nx, ny), d(nx, ny), c(nx, ny), z(nx, ny)
  real(kind=8) :: f(0:bs-1), g(0:bs-1)
  do kb = 1, ny - bs + 1, bs
    lo = kb
    hi = kb + bs - 1
    do j = 1, nx
      f(0) = 0.5d0 * f(bs - 1) + r(j, lo) / d(j, lo)
      do k = lo + 1, hi
        f(k - lo) = (r(j, k) - c(j, k) * f(k - lo - 1)) / d(j, k)
      end do
      g(hi - lo) = f(hi - lo)
      do k = hi - 1, lo, -1
        g(k - lo) = f(k - lo) - c(j, k) * g(k - lo + 1)
      end do
      do k = lo, hi
        z(j, k) = g(k - lo)
      end do
    end do
  end do
end subroutine blockcarry
