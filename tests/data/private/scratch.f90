! Scratch arrays each grid point fills before using them (written for port-fortran's tests, in
! the style of miniWeather's flux loops): st(1:4) and v(1:nv) are private to each (i, k).
subroutine scratch(n, m, a, b)
  integer, parameter :: nv = 4
  integer :: n, m, i, k, l, s
  real(8) :: a(n, m), b(n, m)
  real(8) :: st(4), v(nv)
  do k = 1, m
    do i = 3, n - 2
      do l = 1, nv
        do s = 1, 4
          st(s) = a(i - 3 + s, k) * l
        end do
        v(l) = st(1) + 2 * st(2) + st(3) - st(4)
      end do
      b(i, k) = v(1) + v(2) * v(3) - v(4)
    end do
  end do
end subroutine scratch
