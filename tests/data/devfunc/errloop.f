c     Written for port-fortran's tests: an error routine that prints a trace in counted DO
c     loops before it stops (as debugging harnesses of legacy codes do), a helper that
c     calls it on a bad argument, and routines whose loops leave the branch (no error exit).
      subroutine trcstp(code)
      integer code, k, depth
      common /trc/ depth, names(8)
      integer names
      write(6,*) 'trcstp: error', code
      do 10 k = 1, depth
         if (k .gt. 8) exit
         write(6,*) '  called from', names(k)
   10 continue
      do 20 k = 1, 3
         write(6,*) ' *** terminal error ***'
   20 continue
      stop 4
      end

c     clamp: x limited to [0, hi]; a negative hi ends the program through TRCSTP
      double precision function clamp(x, hi)
      double precision x, hi
      if (hi .lt. 0d0) then
         do 5 k = 1, 2
            write(6,*) 'clamp: negative bound', hi
    5    continue
         call trcstp(7)
      endif
      clamp = min(max(x, 0d0), hi)
      end

      subroutine clampall(a, b, n, hi)
      integer n, i
      double precision a(n), b(n), hi, clamp
      do i = 1, n
         b(i) = clamp(a(i), hi)
      enddo
      end

c     its loop may RETURN before the STOP: no error exit
      subroutine mayret(code, n)
      integer code, n, k
      do k = 1, n
         if (k .eq. code) return
      enddo
      stop 5
      end

c     a DO WHILE before the STOP: not counted, not taken as straight
      subroutine waitstp(n)
      integer n
      do while (n .gt. 0)
         n = n - 1
      enddo
      stop 6
      end
