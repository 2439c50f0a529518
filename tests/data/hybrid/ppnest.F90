! Loop nests among conditional-compilation lines, as CCS-QCD writes them: the loop headers
! once for OpenACC and once for OpenMP around one body, a nest in the branch a build takes
! of an enclosing group, a group inside a nest's body; and two nests that cannot be cut out
! (a #define among their lines, a statement of the routine sharing their branches).
subroutine ppnest(n, m, a, b, s)
  implicit none
  integer :: n, m, i, j
  double precision :: a(n, m), b(n, m), s
#ifdef _OPENACC
  !$acc parallel loop collapse(2)
  do i = 1, n
  do j = 1, m
#else
  !$omp parallel do private(i, j)
  do j = 1, m
  do i = 1, n
#endif
    a(i, j) = 2.0d0 * b(i, j) + 1.0d0
  end do
  end do
#ifdef PF_WITH_HALO
  do j = 1, m
    a(1, j) = a(n, j)
  end do
#else
  s = 0.0d0
  do j = 1, m
    do i = 1, n
      s = s + a(i, j) * b(i, j)
#ifdef _OPENACC
      ! a line of the OpenACC build only
#endif
    end do
  end do
#endif
  do j = 1, m
#define TWICE(x) (2.0d0 * (x))
    b(1, j) = TWICE(a(n, j))
  end do
#ifdef _OPENACC
  do i = 1, n
#else
  s = 0.5d0 * s
  do i = 1, n
#endif
    b(i, m) = b(i, m) + s
  end do
end subroutine ppnest
