! PnetCDF calls that write nothing, for the port-fortran corpus (written for it, not
! PnetCDF's code): miniWeather's output routine runs and reports success, so the program's
! printed diagnostics can prove its hybrid port. Not counted in the corpus results.
integer function nf90mpi_create(comm, path, mode, info, ncid)
  integer :: comm, mode, info, ncid
  character(len=*) :: path
  ncid = 1
  nf90mpi_create = 0
end function nf90mpi_create

integer function nfmpi_create(comm, path, mode, info, ncid)
  integer :: comm, mode, info, ncid
  character(len=*) :: path
  ncid = 1
  nfmpi_create = 0
end function nfmpi_create

integer function nfmpi_open(comm, path, mode, info, ncid)
  integer :: comm, mode, info, ncid
  character(len=*) :: path
  ncid = 1
  nfmpi_open = 0
end function nfmpi_open

integer function nf90mpi_close(ncid)
  integer :: ncid
  nf90mpi_close = 0
end function nf90mpi_close

integer function nfmpi_close(ncid)
  integer :: ncid
  nfmpi_close = 0
end function nfmpi_close

integer function nfmpi_def_dim(ncid, name, len, dimid)
  integer :: ncid, dimid
  integer(8) :: len
  character(len=*) :: name
  dimid = 1
  nfmpi_def_dim = 0
end function nfmpi_def_dim

integer function nfmpi_def_var(ncid, name, xtype, ndims, dimids, varid)
  integer :: ncid, xtype, ndims, dimids(*), varid
  character(len=*) :: name
  varid = 1
  nfmpi_def_var = 0
end function nfmpi_def_var

integer function nfmpi_inq_varid(ncid, name, varid)
  integer :: ncid, varid
  character(len=*) :: name
  varid = 1
  nfmpi_inq_varid = 0
end function nfmpi_inq_varid

integer function nfmpi_enddef(ncid)
  integer :: ncid
  nfmpi_enddef = 0
end function nfmpi_enddef

integer function nfmpi_begin_indep_data(ncid)
  integer :: ncid
  nfmpi_begin_indep_data = 0
end function nfmpi_begin_indep_data

integer function nfmpi_end_indep_data(ncid)
  integer :: ncid
  nfmpi_end_indep_data = 0
end function nfmpi_end_indep_data

integer function nfmpi_put_vara_real(ncid, varid, start, count, buf)
  integer :: ncid, varid
  integer(8) :: start(*), count(*)
  real :: buf(*)
  nfmpi_put_vara_real = 0
end function nfmpi_put_vara_real

integer function nfmpi_put_vara_real_all(ncid, varid, start, count, buf)
  integer :: ncid, varid
  integer(8) :: start(*), count(*)
  real :: buf(*)
  nfmpi_put_vara_real_all = 0
end function nfmpi_put_vara_real_all

integer function nfmpi_put_vara_double(ncid, varid, start, count, buf)
  integer :: ncid, varid
  integer(8) :: start(*), count(*)
  double precision :: buf(*)
  nfmpi_put_vara_double = 0
end function nfmpi_put_vara_double

integer function nfmpi_put_vara_double_all(ncid, varid, start, count, buf)
  integer :: ncid, varid
  integer(8) :: start(*), count(*)
  double precision :: buf(*)
  nfmpi_put_vara_double_all = 0
end function nfmpi_put_vara_double_all

character(len=80) function nf90mpi_strerror(code)
  integer :: code
  nf90mpi_strerror = 'no error (port-fortran corpus stand-in)'
end function nf90mpi_strerror

character(len=80) function nfmpi_strerror(code)
  integer :: code
  nfmpi_strerror = 'no error (port-fortran corpus stand-in)'
end function nfmpi_strerror
