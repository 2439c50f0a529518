c     Written for port-fortran's tests: routines that check their arguments or the COMMON
c     state they share by raising flags, then end the program when a flag is up.
c
c     ARGCHK checks its arguments LAPACK's way: INFO = 0, an ELSE IF chain setting INFO to
c     a negative code, then IF (INFO .NE. 0) a call to BADARG, which prints and stops.
      subroutine badarg(name, info)
      character*(*) name
      integer info
      write (*, *) ' parameter ', -info, ' of ', name, ' is wrong'
      stop
      end

      subroutine argchk(m, n, lda, a)
      integer m, n, lda, info, i, j
      double precision a(lda, *)
      info = 0
      if (m .lt. 0) then
         info = -1
      else if (n .lt. 0) then
         info = -2
      else if (lda .lt. max(1, m)) then
         info = -3
      end if
      if (info .ne. 0) then
         call badarg('ARGCHK', info)
         return
      end if
      do j = 1, n
         do i = 1, m
            a(i, j) = 2d0 * a(i, j)
         enddo
      enddo
      end

c     CHKST checks invariants of the state the routines share (the Livermore loops' WATCH
c     does it this way): a flag per check in IE, summed into IERR.
      subroutine chkst(mode)
      integer mode
      parameter (ntests = 5)
      common /tau/ tstart, tcheck
      double precision tstart, tcheck
      common /ord/ iseq, isav
      common /spc/ nrun, loop, lp, nx
      integer ie(10), ierr, k
      do 1 k = 1, ntests
    1 ie(k) = 0
      if (tstart .ne. tcheck) ie(1) = 1
      if (iseq .le. 0 .or. iseq .ne. isav) ie(2) = 2
      if (nrun .lt. 1 .or. nrun .gt. 8) ie(3) = 3
      if (loop .lt. 1) ie(4) = 4
      if (loop .ne. lp) ie(5) = 5
      ierr = 0
      do 2 k = 1, ntests
    2 ierr = ierr + ie(k)
      if (ierr .ne. 0) then
         write (*, *) 'chkst: state fault', (ie(k), k = 1, ntests), mode
         stop
      end if
      end

c     TRC counts the calls in ISEQ (so CHKST's checks on ISEQ and ISAV hold after it)
c     and has CHKST check the state.
      subroutine trc(mode)
      integer mode
      common /ord/ iseq, isav
      iseq = iseq + 1
      isav = iseq
      call chkst(mode)
      end

c     STKERN: a loop over the cells that first has the state checked; on drawn members
c     (TSTART and TCHECK different, LOOP and LP different) the original stopped every time.
      subroutine stkern(x, y)
      common /tau/ tstart, tcheck
      double precision tstart, tcheck
      common /spc/ nrun, loop, lp, nx
      double precision x(nx), y(nx)
      integer i
      call trc(1)
      do i = 1, nx
         y(i) = x(i) * dble(nrun) + tstart
      enddo
      end

c     NOBLK declares none of the blocks: TRC and CHKST check them, so the harness declares
c     and draws them itself (NOBLK's own NX is no member: the member becomes PF_SPC_NX)
      subroutine noblk(x, y, nx)
      integer nx, i
      double precision x(nx), y(nx)
      call trc(2)
      do i = 1, nx
         y(i) = 3d0 * x(i)
      enddo
      end

c     GETINF has INFO as an argument, LAPACK's way: it is set to 0 before the checks, so its
c     value on entry is no input the checks look at
      subroutine getinf(m, n, a, info)
      integer m, n, info, i
      double precision a(m)
      info = 0
      if (m .lt. 1) then
         info = -1
      else if (n .gt. m) then
         info = -2
      end if
      if (info .ne. 0) then
         call badarg('GETINF', info)
         return
      end if
      do i = 1, n
         a(i) = a(i) + 1d0
      enddo
      end
