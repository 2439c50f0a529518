! sparse.f90 -- compressed sparse row (CSR) matrix-vector product.
! Written for port-fortran.
! F90 features: a module procedure with declared intents, integer index
! arrays (rowptr/colidx, 1-based) that make the reads of x indirect.
! Inputs must form a valid CSR structure: rowptr(1) = 1, rowptr is
! non-decreasing, rowptr(nrows+1) = nnz + 1, 1 <= colidx(k) <= ncols.
module csr_mod
  implicit none
  private
  integer, parameter :: dp = kind(1.0d0)
  public :: csr_spmv

contains

  ! y := A*x for the nrows x ncols matrix A held in (rowptr, colidx, vals).
  subroutine csr_spmv(nrows, ncols, nnz, rowptr, colidx, vals, x, y)
    integer, intent(in) :: nrows, ncols, nnz
    integer, intent(in) :: rowptr(nrows + 1), colidx(nnz)
    real(dp), intent(in) :: vals(nnz), x(ncols)
    real(dp), intent(out) :: y(nrows)
    real(dp) :: s
    integer :: i, k

    do i = 1, nrows
      s = 0.0_dp
      do k = rowptr(i), rowptr(i + 1) - 1
        s = s + vals(k) * x(colidx(k))
      end do
      y(i) = s
    end do
  end subroutine csr_spmv

end module csr_mod
