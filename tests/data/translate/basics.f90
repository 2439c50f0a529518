! Features: parallel_for (RangePolicy), reductions with the value before the loop,
! early RETURN, a serial recurrence, integer/real mixing and intrinsics.
subroutine axpy(n, a, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a
  real(8), intent(in) :: x(n)
  real(8), intent(inout) :: y(n)
  integer :: i
  if (n <= 0) return
  do i = 1, n
    y(i) = y(i) + a * x(i)
  end do
end subroutine axpy

subroutine stats(n, x, s, smax, p, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(inout) :: s
  real(8), intent(out) :: smax
  real(8), intent(out) :: p
  real(8), intent(out) :: y(n)
  integer :: i
  real(8) :: acc
  smax = -huge(1.0d0)
  p = 1.0d0
  do i = 1, n
    s = s + x(i)**2
    smax = max(smax, x(i))
    p = p * (1.0d0 + 1.0d-3 * x(i))
  end do
  ! a running sum whose partial values are stored: a prefix sum (parallel_scan)
  acc = 0.0d0
  do i = 1, n
    acc = acc + x(i)
    y(i) = acc
  end do
end subroutine stats

subroutine mixed(n, x, y, k)
  implicit none
  integer, intent(in) :: n, k
  real(8), intent(in) :: x(0:n-1)
  real(8), intent(out) :: y(0:n-1)
  integer :: i
  real(8) :: t
  do i = 0, n - 1
    t = abs(x(i)) + real(mod(i, 7), 8) / 2 + sign(1.5d0, x(i)) * 0.1
    y(i) = sqrt(t) + min(x(i), 0.5d0, t) + modulo(i - 3, 5) + nint(x(i) * 3.0d0) + k**2 + 2.0d0**(-k) &
         + anint(x(i) * 2.5d0) + aint(x(i) * 1.5d0)
  end do
end subroutine mixed

! Bit intrinsics (logical shifts of negative values, shifts by the whole bit size, single
! bits), combined with IEOR so that no sum can overflow.
subroutine bits(n, ix, iy)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: ix(n)
  integer, intent(out) :: iy(n)
  integer :: i, m
  do i = 1, n
    m = ieor(iand(ix(i), 255), ior(ix(i), 3))
    m = ieor(m, not(i))
    m = ieor(m, ishft(ix(i), mod(i, 65) - 32))
    m = ieor(m, ibits(ix(i), mod(i, 20), 1 + mod(i, 12)))
    m = ieor(m, shiftr(ix(i), mod(i, 31)))
    m = ieor(m, shiftl(i, mod(i, 7)))
    if (btest(ix(i), mod(i, 32))) then
      m = ibset(m, mod(i, 31))
    else
      m = ibclr(m, 4)
    end if
    iy(i) = m
  end do
end subroutine bits

! Induction variables (BLAS strides, negative strides start from the far end): the
! strided loops are parallel once ix, iy are computed from i.
subroutine strided(n, x, incx, y, incy, dot)
  implicit none
  integer, intent(in) :: n, incx, incy
  real(8), intent(in) :: x(1 + (n - 1) * abs(incx))
  real(8), intent(inout) :: y(1 + (n - 1) * abs(incy))
  real(8), intent(out) :: dot
  integer :: i, ix, iy
  ix = 1
  iy = 1
  if (incx < 0) ix = (-n + 1) * incx + 1
  if (incy < 0) iy = (-n + 1) * incy + 1
  dot = 0.0d0
  do i = 1, n
    dot = dot + x(ix) * y(iy)
    ix = ix + incx
    iy = iy + incy
  end do
  do i = 1, n
    iy = iy - incy
    y(iy) = 0.5d0 * y(iy) + real(i, 8)
  end do
end subroutine strided

! A minloc-style reduction whose value is computed first in scalars of the iteration
! (BookLeaf's time-step control idiom): parallel_reduce with a (value,
! index) reducer, the temporaries private to each iteration.
subroutine dtctl(n, cu, cv, elen, zerocut, rdt, idt)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: cu(4, n), cv(4, n), elen(n), zerocut
  real(8), intent(out) :: rdt
  integer, intent(out) :: idt
  real(8) :: w1, w2
  integer :: i
  w2 = huge(1.0d0)
  idt = 0
  do i = 1, n
    w1 = max(cu(1, i)**2 + cv(1, i)**2, cu(2, i)**2 + cv(2, i)**2, cu(3, i)**2 + cv(3, i)**2, &
             cu(4, i)**2 + cv(4, i)**2)
    w1 = abs(elen(i)) / max(w1, abs(zerocut) + 1.0d-3)
    if (w1 < w2) then
      w2 = w1
      idt = i
    end if
  end do
  rdt = 0.5d0 * sqrt(w2)
end subroutine dtctl

! The index of the first minimum / maximum, the values read through it (Livermore kernel
! 24's idiom, BookLeaf's CFL control): (value, index) parallel_reduce, then the value at
! the index before the loop read where the data is; integer values to make ties common.
subroutine firstloc(n, x, ix, m, mx)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  integer, intent(in) :: ix(n)
  integer, intent(out) :: m, mx
  integer :: k
  m = 1
  do k = 2, n
    if (x(k) < x(m)) m = k
  end do
  mx = 1
  do k = 2, n
    if (ix(mx) < ix(k)) mx = k
  end do
end subroutine firstloc
