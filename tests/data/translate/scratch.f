c     A line sweep over a grid in the NPB style: a COMMON work array filled for every (j, k)
c     over i = 0, nx - 1 and read at i - 1, i, i + 1. Its values after the routine are those
c     of the last (j, k), as the caller sees them in the block.
      subroutine lsweep
      integer nmax
      parameter (nmax=24)
      integer nx, ny, nz, i, j, k, m
      double precision c1
      double precision q(5, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(5, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision w(0:nmax-1, 5)
      common /dims/ nx, ny, nz
      common /cst/ c1
      common /flds/ q, r
      common /work/ w
      do k = 1, nz - 2
         do j = 1, ny - 2
            do i = 0, nx - 1
               do m = 1, 5
                  w(i, m) = q(m, i, j, k) * c1
               enddo
            enddo
            do i = 1, nx - 2
               do m = 1, 5
                  r(m, i, j, k) = w(i-1, m) + w(i+1, m) - 2.0d0*w(i, m)
               enddo
            enddo
         enddo
      enddo
      return
      end

c     The same work array written only where a condition holds: iterations may write
c     different elements, so it cannot be private with the last iteration writing through.
      subroutine csweep(n, a, b)
      integer n, i, j
      double precision a(n, n), b(n, n), t(10)
      common /cwork/ t
      do j = 1, n
         do i = 1, 10
            if (a(i, j) .gt. 0.0d0) t(i) = a(i, j)
         enddo
         do i = 1, n
            b(i, j) = t(1)
         enddo
      enddo
      return
      end
