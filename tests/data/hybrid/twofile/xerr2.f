*     xerr2.f -- an error handler in its own file (port-fortran test
*     data): reports the routine and the argument number.
      SUBROUTINE XERR2(NAME, INFO)
      CHARACTER*(*) NAME
      INTEGER INFO
      WRITE (*, *) ' ** ', NAME, ': ILLEGAL ARGUMENT', INFO
      END
