c     Block-tridiagonal line solves per (j, k) of a grid: a work array of
c     3 x 3 blocks is set up for every line (its end rows by a helper,
c     the inner rows by a loop), eliminated and back-substituted through
c     helpers that get single blocks of it by element (F77 sequence
c     association of blk(1, 1, 2, i) with a(3, 3)). Every read of the
c     work array stays in the part the iteration set up: bsolve's local
c     array is private to each (j, k); csolve's, in COMMON, is private
c     with the last iteration writing through (every iteration writes the
c     same elements, the helpers' writes included).
      subroutine bsolve(nx, ny, nz, u, f)
      integer nmax
      parameter (nmax=16)
      integer nx, ny, nz, i, j, k, m, n, isz
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision f(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision blk(3, 3, 3, 0:nmax-1), q(3, 0:nmax-1)
      isz = nx - 1
      do k = 1, nz - 2
         do j = 1, ny - 2
            do i = 0, isz
               do m = 1, 3
                  q(m, i) = 1.0d0 + u(m, i, j, k)**2
               enddo
            enddo
            call bends(blk, isz)
            do i = 1, isz - 1
               do n = 1, 3
                  do m = 1, 3
                     blk(m, n, 1, i) = -0.1d0 * q(m, i-1)
                     blk(m, n, 2, i) = 0.05d0 * q(n, i)
     >                             + 4.0d0 * dble(1 - min(1, abs(m-n)))
                     blk(m, n, 3, i) = -0.1d0 * q(m, i+1)
                  enddo
               enddo
            enddo
            call binv(blk(1, 1, 2, 0), blk(1, 1, 3, 0), f(1, 0, j, k))
            do i = 1, isz - 1
               call bmv(blk(1, 1, 1, i), f(1, i-1, j, k), f(1, i, j, k))
               call bmm(blk(1, 1, 1, i), blk(1, 1, 3, i-1),
     >                  blk(1, 1, 2, i))
               call binv(blk(1, 1, 2, i), blk(1, 1, 3, i),
     >                   f(1, i, j, k))
            enddo
            do i = isz - 2, 0, -1
               do m = 1, 3
                  do n = 1, 3
                     f(m, i, j, k) = f(m, i, j, k)
     >                             - blk(m, n, 3, i) * f(n, i+1, j, k)
                  enddo
               enddo
            enddo
         enddo
      enddo
      return
      end

      subroutine csolve(nx, ny, nz, u, f)
      integer nmax
      parameter (nmax=16)
      integer nx, ny, nz, i, j, k, m, n, isz
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision f(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision blk(3, 3, 3, 0:nmax-1), q(3, 0:nmax-1)
      common /bwork/ blk, q
      isz = nx - 1
      do k = 1, nz - 2
         do j = 1, ny - 2
            do i = 0, isz
               do m = 1, 3
                  q(m, i) = 1.0d0 + u(m, i, j, k)**2
               enddo
            enddo
            call bends(blk, isz)
            do i = 1, isz - 1
               do n = 1, 3
                  do m = 1, 3
                     blk(m, n, 1, i) = -0.1d0 * q(m, i-1)
                     blk(m, n, 2, i) = 0.05d0 * q(n, i)
     >                             + 4.0d0 * dble(1 - min(1, abs(m-n)))
                     blk(m, n, 3, i) = -0.1d0 * q(m, i+1)
                  enddo
               enddo
            enddo
            call binv(blk(1, 1, 2, 0), blk(1, 1, 3, 0), f(1, 0, j, k))
            do i = 1, isz - 1
               call bmv(blk(1, 1, 1, i), f(1, i-1, j, k), f(1, i, j, k))
               call bmm(blk(1, 1, 1, i), blk(1, 1, 3, i-1),
     >                  blk(1, 1, 2, i))
               call binv(blk(1, 1, 2, i), blk(1, 1, 3, i),
     >                   f(1, i, j, k))
            enddo
            do i = isz - 2, 0, -1
               do m = 1, 3
                  do n = 1, 3
                     f(m, i, j, k) = f(m, i, j, k)
     >                             - blk(m, n, 3, i) * f(n, i+1, j, k)
                  enddo
               enddo
            enddo
         enddo
      enddo
      return
      end

      subroutine bends(blk, isz)
      integer isz, m, n, l
      double precision blk(3, 3, 3, 0:isz)
      do l = 1, 3
         do n = 1, 3
            do m = 1, 3
               blk(m, n, l, 0) = 0.0d0
               blk(m, n, l, isz) = 0.0d0
            enddo
         enddo
      enddo
      do m = 1, 3
         blk(m, m, 2, 0) = 1.0d0
         blk(m, m, 2, isz) = 1.0d0
      enddo
      return
      end

      subroutine bmv(a, x, y)
      double precision a(3, 3), x(3), y(3)
      integer m, n
      do m = 1, 3
         do n = 1, 3
            y(m) = y(m) - a(m, n) * x(n)
         enddo
      enddo
      return
      end

      subroutine bmm(a, b, c)
      double precision a(3, 3), b(3, 3), c(3, 3)
      integer m, n, l
      do n = 1, 3
         do m = 1, 3
            do l = 1, 3
               c(m, n) = c(m, n) - a(m, l) * b(l, n)
            enddo
         enddo
      enddo
      return
      end

c     divide the block row by its diagonal block (no pivoting: the
c     diagonal dominates), c and r along with it
      subroutine binv(a, c, r)
      double precision a(3, 3), c(3, 3), r(3), p
      integer m, n, l
      do l = 1, 3
         p = 1.0d0 / a(l, l)
         do n = 1, 3
            a(l, n) = a(l, n) * p
            c(l, n) = c(l, n) * p
         enddo
         r(l) = r(l) * p
         do m = 1, 3
            if (m .ne. l) then
               p = a(m, l)
               do n = 1, 3
                  a(m, n) = a(m, n) - p * a(l, n)
                  c(m, n) = c(m, n) - p * c(l, n)
               enddo
               r(m) = r(m) - p * r(l)
            endif
         enddo
      enddo
      return
      end
