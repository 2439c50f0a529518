! bindk.f90 -- kernels written for port-fortran's tests of the Python bindings.
! blend: every kind of argument a numpy caller passes (a CHARACTER flag, a 2-D array with
! a leading dimension, an array with lower bound 0, complex and LOGICAL data, intent(out)
! and intent(inout) scalars) and a COMMON block the caller fills.
! wsum: a FUNCTION (its result is what Python gets back).
subroutine blend(mode, n, m, a, lda, b, z, mask, total, count, found)
  implicit none
  character(len=1), intent(in) :: mode
  integer, intent(in) :: n, m, lda
  real(8), intent(in) :: a(lda, m)
  real(8), intent(inout) :: b(0:n + 1)
  complex(8), intent(inout) :: z(n)
  logical, intent(in) :: mask(n)
  real(8), intent(out) :: total
  integer, intent(inout) :: count
  logical, intent(out) :: found
  real(8) :: scale
  integer :: nsh
  common /bcfg/ scale, nsh
  integer :: i, j
  real(8) :: s
  do i = 1, n
    s = 0.0d0
    do j = 1, m
      s = s + a(i, j)
    end do
    if (mode == 'A') then
      b(i) = b(i) + scale * s
    else
      b(i) = b(i) - scale * s + b(0)
    end if
  end do
  do i = 1, n
    if (mask(i)) then
      z(i) = z(i) * dcmplx(0.0d0, 1.0d0) + nsh
    end if
  end do
  total = 0.0d0
  do i = 1, n
    total = total + b(i)
  end do
  count = count + n
  found = total > 0.0d0
end subroutine blend

real(8) function wsum(n, w, x)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: w(n), x(n)
  integer :: i
  wsum = 0.0d0
  do i = 1, n
    wsum = wsum + w(i) * x(i)
  end do
end function wsum
