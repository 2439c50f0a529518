! Stand-in for PnetCDF's `pnetcdf` module, written for the port-fortran corpus: the named
! constants and the external functions miniWeather's output routine uses, with implicit
! interfaces and no implementations. Not counted in the corpus results.
module pnetcdf
  implicit none
  integer, parameter :: nf_noerr = 0, nf90_noerr = 0
  integer, parameter :: nf_clobber = 0, nf90_clobber = 0
  integer, parameter :: nf_write = 1, nf90_write = 1
  integer, parameter :: nf_unlimited = 0, nf90_unlimited = 0
  integer, parameter :: nf_real = 5, nf90_real = 5, nf_double = 6, nf90_double = 6
  integer, external :: nf90mpi_create, nf90mpi_close, nfmpi_create, nfmpi_open, nfmpi_close
  integer, external :: nfmpi_def_dim, nfmpi_def_var, nfmpi_enddef, nfmpi_inq_varid
  integer, external :: nfmpi_begin_indep_data, nfmpi_end_indep_data
  integer, external :: nfmpi_put_vara_real, nfmpi_put_vara_real_all
  integer, external :: nfmpi_put_vara_double, nfmpi_put_vara_double_all
  character(len=80), external :: nf90mpi_strerror, nfmpi_strerror
end module pnetcdf
