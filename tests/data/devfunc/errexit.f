c     Written for port-fortran's tests: helpers that check their arguments and end the
c     program when they are wrong (an error exit), and a helper that passes a COMMON
c     table on to a routine that only reads it.
      subroutine fatal(msg)
      character*(*) msg
      common /errs/ nerr
      integer nerr
      nerr = nerr + 1
      write(6,*) 'fatal: ', msg
      stop 3
      end

c     weight: ends the program through FATAL when n is out of range
      double precision function wgt(x, n)
      integer n, nmax
      double precision x
      parameter (nmax = 500)
      integer lim
      lim = nmax
      if (n .gt. lim .or. n .lt. 1) then
         write(6,*) 'wgt: n out of range', n
         call fatal('wgt')
      endif
      wgt = x * x + dble(n)
      end

c     the same check ending the program directly (CALL EXIT)
      double precision function wgt2(x, n)
      integer n
      double precision x
      if (n .lt. 1) then
         print *, 'wgt2: bad n'
         call exit(2)
      endif
      wgt2 = x - dble(n)
      end

      subroutine apply(a, b, m, n)
      integer m, n, i, j
      double precision a(m, n), b(m, n), wgt, wgt2
      do j = 1, n
         do i = 1, m
            b(i, j) = wgt(a(i, j), n) + wgt2(a(i, j), m)
         enddo
      enddo
      end

c     a check that only warns (it returns): the WRITE keeps the loop serial
      double precision function warned(x)
      double precision x
      if (x .lt. 0d0) then
         write(6,*) 'warned: negative'
         warned = 0d0
         return
      endif
      warned = x
      end

      subroutine useswarn(a, n)
      integer n, i
      double precision a(n), warned
      do i = 1, n
         a(i) = warned(a(i))
      enddo
      end

c     SUMTAB only reads its dummy; SCL passes it a COMMON table
      subroutine sumtab(r, d)
      double precision r, d(8)
      integer j
      r = 0d0
      do j = 1, 8
         r = r + d(j)
      enddo
      end

      double precision function scl(x)
      double precision x, s
      double precision coef(8)
      common /tab/ coef
      call sumtab(s, coef)
      scl = s * x
      end

      subroutine smooth(a, m)
      integer m, i
      double precision a(m), scl
      double precision coef(8)
      common /tab/ coef
      do i = 1, m
         a(i) = scl(a(i))
      enddo
      end

c     the check reads a local that an earlier IF may change: no value is assumed for it
      double precision function lims(x, n, m)
      integer n, m, lim
      double precision x
      lim = 10
      if (m .gt. 0) then
         lim = n
      endif
      if (m .gt. lim) then
         call fatal('lims')
      endif
      lims = x + dble(m)
      end

c     a READ with END= before the STOP may jump away: no error exit
      double precision function rdchk(x, n)
      integer n, k
      double precision x
      if (n .lt. 1) then
         read(5, *, end=20) k
         stop 4
      endif
   20 rdchk = x
      end
