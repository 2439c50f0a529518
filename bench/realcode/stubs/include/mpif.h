! Stand-in for an MPI library's mpif.h, written for the port-fortran corpus (not MPI's
! code): the named constants the corpus codes use, so their files compile with plain
! gfortran. Calls to MPI routines stay calls to external routines (what the tool must
! report as a library), nothing here implements them. Valid in fixed and free form.
      integer MPI_COMM_WORLD, MPI_COMM_NULL, MPI_PROC_NULL
      integer MPI_INFO_NULL, MPI_REQUEST_NULL, MPI_UNDEFINED
      integer MPI_STATUS_SIZE, MPI_SUCCESS, MPI_ANY_SOURCE
      integer MPI_ANY_TAG, MPI_MAX_PROCESSOR_NAME
      integer MPI_INTEGER, MPI_INTEGER8, MPI_REAL, MPI_REAL8
      integer MPI_DOUBLE_PRECISION, MPI_LOGICAL, MPI_CHARACTER
      integer MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_BYTE
      integer MPI_REAL4, MPI_COMPLEX8, MPI_COMPLEX16
      integer MPI_2DOUBLE_PRECISION, MPI_2INTEGER
      integer MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_LAND
      integer MPI_LOR, MPI_MAXLOC, MPI_MINLOC
      integer MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED
      integer MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE
      integer MPI_OFFSET_KIND, MPI_ADDRESS_KIND
      parameter (MPI_COMM_WORLD=91, MPI_COMM_NULL=92)
      parameter (MPI_PROC_NULL=-2, MPI_INFO_NULL=93)
      parameter (MPI_REQUEST_NULL=94, MPI_UNDEFINED=-32766)
      parameter (MPI_STATUS_SIZE=6, MPI_SUCCESS=0)
      parameter (MPI_ANY_SOURCE=-1, MPI_ANY_TAG=-1)
      parameter (MPI_MAX_PROCESSOR_NAME=256)
      parameter (MPI_INTEGER=1, MPI_INTEGER8=2, MPI_REAL=3)
      parameter (MPI_REAL8=4, MPI_DOUBLE_PRECISION=5, MPI_LOGICAL=6)
      parameter (MPI_CHARACTER=7, MPI_COMPLEX=8)
      parameter (MPI_DOUBLE_COMPLEX=9, MPI_BYTE=10)
      parameter (MPI_REAL4=13, MPI_COMPLEX8=14, MPI_COMPLEX16=15)
      parameter (MPI_2DOUBLE_PRECISION=11, MPI_2INTEGER=12)
      parameter (MPI_SUM=21, MPI_MAX=22, MPI_MIN=23, MPI_PROD=24)
      parameter (MPI_LAND=25, MPI_LOR=26, MPI_MAXLOC=27)
      parameter (MPI_MINLOC=28)
      parameter (MPI_THREAD_SINGLE=0, MPI_THREAD_FUNNELED=1)
      parameter (MPI_THREAD_SERIALIZED=2, MPI_THREAD_MULTIPLE=3)
      parameter (MPI_OFFSET_KIND=8, MPI_ADDRESS_KIND=8)
      double precision MPI_WTIME
      external MPI_WTIME
