c     Helpers of "tree B", called from tree A.
      double precision function twice(v)
      double precision v
      twice = 2.0d0 * v
      end

      subroutine report(n)
      integer n
      call mpi_barrier(n)
      end

c     A main program in a file the kernels need: it is never linked as the drivers' main.
      program demo
      double precision x(3), y(3)
      data x /1.0d0, 2.0d0, 3.0d0/
      call scale3(3, x, y)
      print *, y
      end
