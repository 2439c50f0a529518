! Written for port-fortran's tests: a preconditioner set-up whose block factorisation is a
! routine of its own. BFACT walks blocks of NB rows, each column of a block a short
! recurrence down the rows; the analysis turns that nest (columns outside) for a launch of
! its own, but called from PINIT the routine runs in one thread, in the source's order.
module blk_params
  implicit none
  integer, parameter :: nb = 4
end module blk_params

subroutine bfact(nx, ny, d, e, c, f)
  use blk_params
  implicit none
  integer :: nx, ny
  real(kind=8) :: d(nx, ny), e(nx, ny + 1), c(nx, ny), f(nx, ny)
  integer :: i, k, kb, top
  do kb = 1, ny, nb
    top = min(kb + nb - 1, ny)
    do i = 1, nx
      k = kb
      c(i, k) = -e(i, k + 1) / d(i, k)
      do k = kb + 1, top
        f(i, k) = 1.0d0 / (d(i, k) + e(i, k) * c(i, k - 1))
        c(i, k) = -e(i, k + 1) * f(i, k)
      end do
    end do
  end do
end subroutine bfact

subroutine pinit(nx, ny, blocked, u, d, e, c, f)
  implicit none
  integer :: nx, ny, i, k
  logical :: blocked
  real(kind=8) :: u(nx, ny), d(nx, ny), e(nx, ny + 1), c(nx, ny), f(nx, ny)
  do k = 1, ny
    do i = 1, nx
      d(i, k) = 4.0d0 + abs(u(i, k))
    end do
  end do
  if (blocked) then
    call bfact(nx, ny, d, e, c, f)
  end if
end subroutine pinit

! the factorisation repeated in a loop of the caller: the call stays a function called from
! a kernel (the loop is the caller's, its iterations each run the whole callee)
subroutine psweep(nx, ny, nsweep, d, e, c, f)
  implicit none
  integer :: nx, ny, nsweep, it
  real(kind=8) :: d(nx, ny), e(nx, ny + 1), c(nx, ny), f(nx, ny)
  do it = 1, nsweep
    call bfact(nx, ny, d, e, c, f)
  end do
end subroutine psweep

! the same arrays declared with other bounds than BFACT's dummies: not inlined
subroutine pflat(n, d, e, c, f)
  implicit none
  integer :: n
  real(kind=8) :: d(n), e(n + 4), c(n), f(n)
  call bfact(4, n / 4, d, e, c, f)
end subroutine pflat

! a sum into a scalar dummy, and an expression for a scalar dummy: inlined, the sum is
! PNORM's own reduction into its local S, the bound N - 1 spelled where BSUM reads M
subroutine bsum(m, x, s)
  implicit none
  integer :: m, i
  real(kind=8) :: x(m + 1), s
  s = 0.0d0
  do i = 1, m
    s = s + x(i) * x(i + 1)
  end do
end subroutine bsum

subroutine pnorm(n, x, r)
  implicit none
  integer :: n
  real(kind=8) :: x(n), r, s
  s = -1.0d0
  if (n > 1) call bsum(n - 1, x, s)
  r = sqrt(abs(s))
end subroutine pnorm
