! An OpenMP loop kept in Fortran around a parallel nest (written for port-fortran's tests):
! the call to an external routine keeps the loop over j serial, the nest over i is outlined.
subroutine ompkept(n, m, a)
  integer :: n, m, i, j
  real(8) :: a(n, m)
  !$omp parallel do collapse(2)
  do j = 1, m
    call tick(j)
    do i = 1, n
      a(i, j) = 2.0d0 * a(i, j) + dble(j)
    end do
  end do
  !$omp end parallel do
end subroutine ompkept
