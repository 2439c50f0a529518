c     Sums of squares per component over a grid, in the style of the norm routines of
c     CFD codes: the sums go into a small array indexed by an inner component loop, and
c     the exact solution at each point comes from a routine that fills a scratch array.
      subroutine pointval(x, y, z, vals)
      double precision x, y, z, vals(5)
      integer m
      do m = 1, 5
         vals(m) = dble(m) + x*(1.0d0 + y*(2.0d0 + z*dble(m)))
      enddo
      return
      end

      subroutine sqnorm(nx, ny, nz, h, u, rms, big)
      integer nx, ny, nz
      double precision h, u(5, nx, ny, nz), rms(5), big(2)
      integer i, j, k, m
      double precision dev(5), add
      do k = 1, nz
         do j = 1, ny
            do i = 1, nx
               call pointval(dble(i)*h, dble(j)*h, dble(k)*h, dev)
               do m = 1, 5
                  add = u(m, i, j, k) - dev(m)
                  rms(m) = rms(m) + add*add
               enddo
               do m = 1, 2
                  big(m) = max(big(m), abs(u(m, i, j, k)))
               enddo
            enddo
         enddo
      enddo
      return
      end

c     A smoother in the multigrid style: two line buffers, filled for i1 = 1, n1 at each
c     (i2, i3) and read at i1 - 1 and i1 + 1 for i1 = 2, n1 - 1: private to the iteration
c     although never filled over their whole declared extent.
      subroutine psmooth(n1, n2, n3, r, u, c)
      integer n1, n2, n3, m
      parameter (m = 40)
      double precision r(n1,n2,n3), u(n1,n2,n3), c(0:2)
      double precision r1(m), r2(m)
      integer i1, i2, i3
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            do i1 = 1, n1
               r1(i1) = r(i1,i2-1,i3) + r(i1,i2+1,i3)
               r2(i1) = r(i1,i2,i3-1) + r(i1,i2,i3+1)
            enddo
            do i1 = 2, n1-1
               u(i1,i2,i3) = u(i1,i2,i3) + c(0)*r(i1,i2,i3)
     >            + c(1)*(r(i1-1,i2,i3) + r(i1+1,i2,i3) + r1(i1))
     >            + c(2)*(r2(i1) + r1(i1-1) + r1(i1+1))
            enddo
         enddo
      enddo
      return
      end
