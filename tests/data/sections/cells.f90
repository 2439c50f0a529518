! cells.f90 -- array sections passed to a per-cell helper, as F90 transport codes do.
! Written for port-fortran.
module cells
  implicit none
contains

  ! each (j, k) updates its own column of group g: the helper writes qg(:, j, k) only
  subroutine sweep(n, ny, nz, ng, g, src, q)
    integer, intent(in) :: n, ny, nz, ng, g
    real(8), intent(in) :: src(n, ny, nz)
    real(8), intent(inout) :: q(n, ny, nz, ng)
    integer :: j, k
    do k = 1, nz
      do j = 1, ny
        call cell(j, k, n, ny, nz, src(:, j, k), q(:, :, :, g))
      end do
    end do
  end subroutine sweep

  subroutine cell(j, k, n, ny, nz, s, qg)
    integer, intent(in) :: j, k, n, ny, nz
    real(8), intent(in) :: s(n)
    real(8), intent(inout) :: qg(n, ny, nz)
    integer :: i
    do i = 1, n
      qg(i, j, k) = 0.5d0*qg(i, j, k) + s(i)
    end do
  end subroutine cell

  ! the helper writes row 1 of every (j, k) it is given: iterations over j share it
  subroutine smear(n, ny, nz, ng, g, src, q)
    integer, intent(in) :: n, ny, nz, ng, g
    real(8), intent(in) :: src(n, ny, nz)
    real(8), intent(inout) :: q(n, ny, nz, ng)
    integer :: j, k
    do k = 1, nz
      do j = 1, ny
        call edge(k, n, ny, nz, src(:, j, k), q(:, :, :, g))
      end do
    end do
  end subroutine smear

  subroutine edge(k, n, ny, nz, s, qg)
    integer, intent(in) :: k, n, ny, nz
    real(8), intent(in) :: s(n)
    real(8), intent(inout) :: qg(n, ny, nz)
    integer :: i
    do i = 1, n
      qg(i, 1, k) = qg(i, 1, k) + s(i)
    end do
  end subroutine edge

  ! the section is reshaped (the dummy's leading extent is n*ny): no dimension maps
  subroutine flat(n, ny, nz, ng, g, src, q)
    integer, intent(in) :: n, ny, nz, ng, g
    real(8), intent(in) :: src(n, ny, nz)
    real(8), intent(inout) :: q(n, ny, nz, ng)
    integer :: j, k
    do k = 1, nz
      do j = 1, ny
        call plane(j, k, n, ny, nz, src(:, j, k), q(:, :, :, g))
      end do
    end do
  end subroutine flat

  subroutine plane(j, k, n, ny, nz, s, qf)
    integer, intent(in) :: j, k, n, ny, nz
    real(8), intent(in) :: s(n)
    real(8), intent(inout) :: qf(n*ny, nz)
    integer :: i
    do i = 1, n
      qf(i + (j - 1)*n, k) = qf(i + (j - 1)*n, k) + s(i)
    end do
  end subroutine plane
end module cells
