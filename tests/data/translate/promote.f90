! promote.f90 -- array elements an inner loop updates in place (translate/promote.py).
! Written for port-fortran's tests.
subroutine rowacc(m, n, a, x, y)
  ! y(i) summed over the columns in place: kept in a register for the loop over l
  integer, intent(in) :: m, n
  real(8), intent(in) :: a(m, n), x(n)
  real(8), intent(inout) :: y(m)
  integer :: i, l
  do i = 1, m
    do l = 1, n
      y(i) = y(i) + a(i, l) * x(l)
    end do
  end do
end subroutine rowacc

subroutine twoel(m, n, j1, j2, a, y)
  ! y(i, j1) and y(i, j2) are the same element when j1 = j2: neither is kept in a register
  integer, intent(in) :: m, n, j1, j2
  real(8), intent(in) :: a(m, n)
  real(8), intent(inout) :: y(m, 2)
  integer :: i, l
  do i = 1, m
    do l = 1, n
      y(i, j1) = y(i, j1) + a(i, l)
      y(i, j2) = y(i, j2) * 0.5d0
    end do
  end do
end subroutine twoel

subroutine backw(m, n, a, y)
  ! a loop running backwards: left as it is
  integer, intent(in) :: m, n
  real(8), intent(in) :: a(m, n)
  real(8), intent(inout) :: y(m)
  integer :: i, l
  do i = 1, m
    do l = n, 1, -1
      y(i) = 0.5d0 * y(i) + a(i, l)
    end do
  end do
end subroutine backw

subroutine rdinv(m, n, kind, a, y)
  ! kind(i) is read at every l and never written: loaded once before the (serial) loop
  ! over l (y(i), written only under a branch, stays in memory)
  integer, intent(in) :: m, n
  integer, intent(in) :: kind(m)
  real(8), intent(in) :: a(m, n)
  real(8), intent(inout) :: y(m)
  integer :: i, l
  do i = 1, m
    do l = 1, n
      if (kind(i) > 0) then
        y(i) = 0.5d0 * y(i) + a(i, l)
      else
        y(i) = y(i) - a(i, l) * y(i)
      end if
    end do
  end do
end subroutine rdinv

subroutine paint(nx, ny, ns, geom, val, lo, u)
  ! shapes painted one after the other over a grid (the state loop turned inside the grid's
  ! nest): on the host each row runs the shapes, and geom(s), read at every cell of the row,
  ! is loaded once per shape and row
  integer, intent(in) :: nx, ny, ns
  integer, intent(in) :: geom(ns)
  real(8), intent(in) :: val(ns), lo(ns)
  real(8), intent(inout) :: u(nx, ny)
  integer :: s, j, k
  do s = 1, ns
    do k = 1, ny
      do j = 1, nx
        if (geom(s) == 1) then
          if (dble(j) >= lo(s)) u(j, k) = val(s)
        else if (geom(s) == 2) then
          if (dble(k) >= lo(s)) u(j, k) = val(s) + u(j, k)
        end if
      end do
    end do
  end do
end subroutine paint
