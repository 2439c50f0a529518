! A stencil module in the style of Mantevo mini-apps: the sweeps sit in an OpenMP parallel
! region whose END directives are glued (`!$omp enddo`, `!$omp endparallel`, as gfortran
! takes them), and after the sweeps the routine counts its work and its time in the
! components of a derived-type module variable (kept Fortran in a hybrid port).
module counters_mod
  implicit none
  type perf_t
     integer :: adds = 0
     double precision :: t_comp = 0d0
  end type perf_t
  type(perf_t) :: perf
  integer :: nx, ny
  double precision, allocatable :: flux(:)
  integer :: nb
  parameter (nb = 1001)
  double precision :: edges(nb - 1)  ! bounds from a constant of the module
contains
  double precision function clock()
    clock = 1.0d0
  end function clock

  subroutine smooth(grid, work)
    double precision :: grid(0:nx+1, 0:ny+1), work(0:nx+1, 0:ny+1)
    integer :: i, j
    double precision :: t0
    t0 = clock()
!$omp parallel
!$omp do
    do j = 1, ny
      do i = 1, nx
        work(i, j) = 0.25d0 * (grid(i-1, j) + grid(i+1, j) + grid(i, j-1) + grid(i, j+1))
      end do
    end do
!$omp enddo
!$omp do
    do j = 1, ny
      do i = 1, nx
        grid(i, j) = work(i, j)
      end do
    end do
!$omp enddo
!$omp endparallel
    perf%adds = perf%adds + 4 * nx * ny
    perf%t_comp = perf%t_comp + clock() - t0
  end subroutine smooth

  subroutine accum(grid, ivar)
    ! a sum into one element of a module array (and a corner term per row): a reduction
    ! like a sum into a dummy's element; the routine stays Fortran for its counters
    double precision :: grid(0:nx+1, 0:ny+1)
    integer :: ivar, i, j
    do j = 1, ny
      do i = 1, nx
        flux(ivar) = flux(ivar) + grid(i, j) / 9d0
      end do
      flux(ivar) = flux(ivar) + grid(0, j)
    end do
    perf%adds = perf%adds + nx * ny
  end subroutine accum

  subroutine scale_edges(f)
    double precision :: f
    integer :: i
    do i = 1, nb - 1
      edges(i) = edges(i) * f
    end do
  end subroutine scale_edges

  subroutine report(grid, total)
    ! an I/O statement calling a module function after the loop: the function sees no local
    double precision :: grid(0:nx+1, 0:ny+1), total
    integer :: i
    total = 0d0
    do i = 1, nx
      total = total + grid(i, 1)
    end do
    write(*, *) 'total', total, clock()
  end subroutine report

  subroutine tally(grid, total)
    ! an internal function sees the routine's locals: a component statement calling it may
    ! read the loop variable, which then keeps its last value
    double precision :: grid(0:nx+1, 0:ny+1), total
    integer :: i, j
    total = 0d0
    do j = 1, ny
      do i = 1, nx
        total = total + grid(i, j)
      end do
    end do
    perf%t_comp = peek()
  contains
    double precision function peek()
      peek = dble(i + j)
    end function peek
  end subroutine tally
end module counters_mod
