c     Scalars whose value after a parallel loop is the last iteration's (written for
c     port-fortran's tests): COMMON temporaries every iteration assigns (COMMON keeps
c     the last value after the routine), a dummy the caller reads, a local read after
c     the loop.
      subroutine xtemps(n, m, a, b, s)
      integer n, m, i, j
      double precision a(m, n), b(m, n), s, t3
      double precision t1, t2
      common /wtmp/ t1, t2
      do j = 1, n
         do i = 1, m
            t1 = 1.0d0 / (1.0d0 + a(i, j) * a(i, j))
            t2 = t1 * t1
            b(i, j) = a(i, j) * t1 + t2
         end do
         s = b(1, j) + t1
         t3 = 2.0d0 * s
      end do
      b(1, 1) = b(1, 1) + t3
      return
      end

c     The temporary is assigned only where a condition holds: the last iteration may
c     not assign it, so its value after the loop is another iteration's: serial.
      subroutine xcondt(n, a, b)
      integer n, i
      double precision a(n), b(n)
      double precision t1, t2
      common /wtmp/ t1, t2
      do i = 1, n
         if (a(i) .gt. 0.0d0) t1 = a(i)
         b(i) = 2.0d0 * a(i)
      end do
      return
      end

c     A block line solve per (j, k) as in blocks.f's csolve, its COMMON /dwork/ holding
c     the work array and two temporaries every point assigns (the last (j, k) leaves
c     them in the block); the end rows set by a helper that addresses the last row
c     through a local set once (l = isz), the elimination with loops bounded by the
c     pivot row (n = l + 1, 3): every iteration writes the same elements, so the work
c     array is private with the last iteration writing through and the temporaries
c     private with the last iteration handing them on.
      subroutine dsolve(nx, ny, nz, u, f)
      integer nmax
      parameter (nmax=16)
      integer nx, ny, nz, i, j, k, m, n, isz
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision f(3, 0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision blk(3, 3, 3, 0:nmax-1), q(3, 0:nmax-1), t1, t2
      common /dwork/ blk, q, t1, t2
      isz = nx - 1
      do k = 1, nz - 2
         do j = 1, ny - 2
            do i = 0, isz
               t1 = 1.0d0 / (1.0d0 + u(1, i, j, k)**2)
               t2 = t1 * t1
               q(1, i) = 1.0d0 + t1
               q(2, i) = 1.0d0 + t2
               q(3, i) = 1.0d0 + t1 * u(3, i, j, k)
            enddo
            call dends(blk, isz)
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
            call dinv(blk(1, 1, 2, 0), blk(1, 1, 3, 0), f(1, 0, j, k))
            do i = 1, isz - 1
               do m = 1, 3
                  do n = 1, 3
                     f(m, i, j, k) = f(m, i, j, k)
     >                             - blk(m, n, 1, i) * f(n, i-1, j, k)
                  enddo
               enddo
               call dinv(blk(1, 1, 2, i), blk(1, 1, 3, i),
     >                   f(1, i, j, k))
            enddo
         enddo
      enddo
      return
      end

      subroutine dends(blk, isz)
      integer isz, m, n, l
      double precision blk(3, 3, 3, 0:isz)
      l = isz
      do n = 1, 3
         do m = 1, 3
            blk(m, n, 1, 0) = 0.0d0
            blk(m, n, 2, 0) = 0.0d0
            blk(m, n, 3, 0) = 0.0d0
            blk(m, n, 1, l) = 0.0d0
            blk(m, n, 2, l) = 0.0d0
            blk(m, n, 3, l) = 0.0d0
         enddo
      enddo
      do m = 1, 3
         blk(m, m, 2, 0) = 1.0d0
         blk(m, m, 2, l) = 1.0d0
      enddo
      return
      end

c     Gauss-Jordan on the diagonal block, the rows right of the pivot only
      subroutine dinv(a, c, r)
      double precision a(3, 3), c(3, 3), r(3), p
      integer m, n, l
      do l = 1, 3
         p = 1.0d0 / a(l, l)
         do n = l + 1, 3
            a(l, n) = a(l, n) * p
         enddo
         do n = 1, 3
            c(l, n) = c(l, n) * p
         enddo
         r(l) = r(l) * p
         do m = 1, 3
            if (m .ne. l) then
               p = a(m, l)
               do n = l + 1, 3
                  a(m, n) = a(m, n) - p * a(l, n)
               enddo
               do n = 1, 3
                  c(m, n) = c(m, n) - p * c(l, n)
               enddo
               r(m) = r(m) - p * r(l)
            endif
         enddo
      enddo
      return
      end
