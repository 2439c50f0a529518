! A benchmark program in the way suites write them (written for port-fortran's tests): it
! times its kernel with a C clock and prints the seconds on standard output, and dumps the
! result array on standard error. The proof compares the array and leaves the timing out.
program tmatmul
  implicit none
  integer, parameter :: n = 160
  double precision, allocatable :: a(:, :), b(:, :), c(:, :)
  double precision :: t0, t1
  integer :: i, j
  allocate(a(n, n), b(n, n), c(n, n))
  do j = 1, n
    do i = 1, n
      a(i, j) = dble(mod(i * j, 7)) / 7.0d0
      b(i, j) = dble(mod(i + 2 * j, 5)) / 5.0d0
    end do
  end do
  call tclock(t0)
  call mult(n, a, b, c)
  call tclock(t1)
  write(*, '(a, f14.9)') 'seconds:', t1 - t0
  do j = 1, n, 7
    write(0, '(8f12.6)') (c(i, j), i = 1, n, 23)
  end do
contains
  subroutine mult(n, a, b, c)
    integer, intent(in) :: n
    double precision, intent(in) :: a(n, n), b(n, n)
    double precision, intent(out) :: c(n, n)
    integer :: i, j, k
    do j = 1, n
      do i = 1, n
        c(i, j) = 0.0d0
        do k = 1, n
          c(i, j) = c(i, j) + a(i, k) * b(k, j)
        end do
      end do
    end do
  end subroutine mult
end program tmatmul
