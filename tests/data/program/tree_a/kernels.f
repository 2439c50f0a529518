c     Kernels of "tree A" that call helpers defined in tree B (tree_b/helpers.f),
c     a module defined in another file (tree_b/limits_mod.f90) and an external library.
      subroutine scale3(n, x, y)
      integer n, i
      double precision x(n), y(n), twice
      do i = 1, n
         y(i) = twice(x(i)) + 1.0d0
      end do
      end

      subroutine scale2(n, x, y)
      integer n, i
      double precision x(n), y(n), twice
      do i = 1, n
         y(i) = twice(x(i))
      end do
      call report(n)
      end

      subroutine mdot(n, x, y, s)
      integer n
      double precision x(n), y(n), s, ddot
      s = ddot(n, x, 1, y, 1)
      end
