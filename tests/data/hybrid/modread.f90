! modread.f90 -- a helper reading module variables, called per (k, j) inside loop nests;
! written for port-fortran's tests (F90 codes keep their sizes and tables in modules).
! MR_CALC declares its dummies with the module scalars nx and nmom and reads the module
! table lma(nmom): it runs as a device function of the outlined nests, which pass it those
! variables. MR_SRC (outside the module) does not see lma: its hybrid copy USEs it under
! another name. MR_GRID_SRC (a procedure of the module) sees it by host association.
! MR_COUNT adds to the module variable total: it stays a Fortran call (MR_TALLY).
module mr_grid
  implicit none
  integer :: nx = 0, ny = 0, nz = 0, nmom = 0
  integer, allocatable :: lma(:)
  double precision :: total = 0.0d0
contains
  subroutine mr_calc(f0, fm, q)
    double precision, dimension(nx), intent(in) :: f0
    double precision, dimension(nmom, nx), intent(in) :: fm
    double precision, dimension(nmom, nx), intent(out) :: q
    integer :: i, l
    do i = 1, nx
      q(1, i) = f0(i)
      do l = 2, nmom
        q(l, i) = fm(l, i) * lma(l) + f0(i)
      end do
    end do
  end subroutine mr_calc

  subroutine mr_count(j, f0)
    integer, intent(in) :: j
    double precision, dimension(nx), intent(in) :: f0
    total = total + f0(j)
  end subroutine mr_count

  subroutine mr_grid_src(f, fm, q)
    double precision, intent(in) :: f(nx, ny, nz)
    double precision, intent(in) :: fm(nmom, nx, ny, nz)
    double precision, intent(out) :: q(nmom, nx, ny, nz)
    integer :: j, k
    do k = 1, nz
      do j = 1, ny
        call mr_calc(f(1, j, k), fm(1, 1, j, k), q(1, 1, j, k))
      end do
    end do
  end subroutine mr_grid_src
end module mr_grid

subroutine mr_src(f, fm, q)
  use mr_grid, only: nx, ny, nz, nmom, mr_calc
  implicit none
  double precision, intent(in) :: f(nx, ny, nz)
  double precision, intent(in) :: fm(nmom, nx, ny, nz)
  double precision, intent(out) :: q(nmom, nx, ny, nz)
  integer :: j, k
  do k = 1, nz
    do j = 1, ny
      call mr_calc(f(1, j, k), fm(1, 1, j, k), q(1, 1, j, k))
    end do
  end do
end subroutine mr_src

subroutine mr_tally(f)
  use mr_grid, only: nx, mr_count
  implicit none
  double precision, intent(in) :: f(nx)
  integer :: j
  do j = 1, nx
    call mr_count(j, f)
  end do
end subroutine mr_tally
