! A one-rank MPI for the port-fortran corpus, written for it (not MPI's code): the routines the
! corpus programs call, as an MPI library with a single process would do them, so that a main
! program using MPI (miniWeather) links and runs with plain gfortran and its hybrid port can be
! proven by its output. Messages a rank sends to itself are matched by tag at MPI_WAITALL.
! Buffers are taken as bytes (implicit interfaces; callers compile with
! -fallow-argument-mismatch where gfortran asks). Not counted in the corpus results.
module pf_mpi_serial
  use iso_c_binding, only: c_ptr, c_loc, c_f_pointer, c_null_ptr
  implicit none
  integer, parameter :: max_pending = 256
  type pending
    type(c_ptr) :: buf = c_null_ptr
    integer :: nbytes = 0, tag = 0
    logical :: live = .false.
  end type pending
  type(pending), save :: sends(max_pending), recvs(max_pending)
contains
  integer function type_bytes(datatype)
    integer, intent(in) :: datatype
    include 'mpif.h'
    select case (datatype)
    case (MPI_INTEGER, MPI_REAL, MPI_REAL4, MPI_LOGICAL)
      type_bytes = 4
    case (MPI_INTEGER8, MPI_REAL8, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_COMPLEX8, MPI_2INTEGER)
      type_bytes = 8
    case (MPI_DOUBLE_COMPLEX, MPI_COMPLEX16, MPI_2DOUBLE_PRECISION)
      type_bytes = 16
    case default
      type_bytes = 1
    end select
  end function type_bytes

  subroutine copy_bytes(from, to, nbytes)
    type(c_ptr), intent(in) :: from, to
    integer, intent(in) :: nbytes
    integer(1), pointer :: a(:), b(:)
    if (nbytes <= 0) return
    call c_f_pointer(from, a, [nbytes])
    call c_f_pointer(to, b, [nbytes])
    b(1:nbytes) = a(1:nbytes)
  end subroutine copy_bytes

  integer function slot(list)
    type(pending), intent(in) :: list(:)
    do slot = 1, size(list)
      if (.not. list(slot)%live) return
    end do
    stop 'mpi_serial: too many pending messages'
  end function slot
end module pf_mpi_serial

subroutine mpi_init(ierr)
  integer, intent(out) :: ierr
  ierr = 0
end subroutine mpi_init

subroutine mpi_finalize(ierr)
  integer, intent(out) :: ierr
  ierr = 0
end subroutine mpi_finalize

subroutine mpi_comm_size(comm, size, ierr)
  integer, intent(in) :: comm
  integer, intent(out) :: size, ierr
  size = 1
  ierr = 0
end subroutine mpi_comm_size

subroutine mpi_comm_rank(comm, rank, ierr)
  integer, intent(in) :: comm
  integer, intent(out) :: rank, ierr
  rank = 0
  ierr = 0
end subroutine mpi_comm_rank

subroutine mpi_barrier(comm, ierr)
  integer, intent(in) :: comm
  integer, intent(out) :: ierr
  ierr = 0
end subroutine mpi_barrier

subroutine mpi_allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierr)
  use pf_mpi_serial
  integer(1), target :: sendbuf(*), recvbuf(*)
  integer, intent(in) :: count, datatype, op, comm
  integer, intent(out) :: ierr
  call copy_bytes(c_loc(sendbuf), c_loc(recvbuf), count * type_bytes(datatype))
  ierr = 0
end subroutine mpi_allreduce

subroutine mpi_bcast(buf, count, datatype, root, comm, ierr)
  integer(1) :: buf(*)
  integer, intent(in) :: count, datatype, root, comm
  integer, intent(out) :: ierr
  ierr = 0
end subroutine mpi_bcast

subroutine mpi_isend(buf, count, datatype, dest, tag, comm, request, ierr)
  use pf_mpi_serial
  integer(1), target :: buf(*)
  integer, intent(in) :: count, datatype, dest, tag, comm
  integer, intent(out) :: request, ierr
  integer :: k
  k = slot(sends)
  sends(k) = pending(c_loc(buf), count * type_bytes(datatype), tag, .true.)
  request = k
  ierr = 0
end subroutine mpi_isend

subroutine mpi_irecv(buf, count, datatype, source, tag, comm, request, ierr)
  use pf_mpi_serial
  integer(1), target :: buf(*)
  integer, intent(in) :: count, datatype, source, tag, comm
  integer, intent(out) :: request, ierr
  integer :: k
  k = slot(recvs)
  recvs(k) = pending(c_loc(buf), count * type_bytes(datatype), tag, .true.)
  request = max_pending + k
  ierr = 0
end subroutine mpi_irecv

subroutine mpi_waitall(count, requests, statuses, ierr)
  use pf_mpi_serial
  integer, intent(in) :: count
  integer, intent(inout) :: requests(count)
  integer :: statuses(*)
  integer, intent(out) :: ierr
  integer :: r, s
  do r = 1, max_pending
    if (.not. recvs(r)%live) cycle
    do s = 1, max_pending
      if (sends(s)%live .and. (sends(s)%tag == recvs(r)%tag .or. recvs(r)%tag < 0)) then
        call copy_bytes(sends(s)%buf, recvs(r)%buf, min(sends(s)%nbytes, recvs(r)%nbytes))
        sends(s)%live = .false.
        recvs(r)%live = .false.
        exit
      end if
    end do
  end do
  requests = 94  ! MPI_REQUEST_NULL
  ierr = 0
end subroutine mpi_waitall

double precision function mpi_wtime()
  integer(8) :: c, r
  call system_clock(c, r)
  mpi_wtime = dble(c) / dble(r)
end function mpi_wtime
