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
