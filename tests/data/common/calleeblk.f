c     Written for port-fortran's tests: a routine that declares a COMMON block but leaves
c     some of its members to a callee. CELLID divides by NX and NY (0 in a block nobody
c     drew: SIGFPE) and counts its calls in NCALL, so it is no read-only routine the
c     members could be passed to; GRIDSUM's own statements use only NCELL.
      integer function cellid(ie)
      integer ie
      common /grid/ nx, ny, ncell, ncall
      integer nx, ny, ncell, ncall
      ncall = ncall + 1
      cellid = 1 + mod(ie - 1, nx * ny) / nx
      end

      subroutine gridsum(v, w)
      common /grid/ nx, ny, ncell, ncall
      integer nx, ny, ncell, ncall
      double precision v(ncell), w(ncell)
      integer ie, ic, cellid
      ic = cellid(ncell)
      do ie = 1, ncell
         w(ie) = v(ie) * dble(ic)
      enddo
      end

c     the same block laid out differently (a REAL where GRIDOTH has an INTEGER): not mapped
      subroutine other
      common /grid/ rx, ny, ncell, ncall
      real rx
      integer ny, ncell, ncall
      rx = 1.0
      end

      subroutine gridoth(v, n)
      common /grid/ nx, ny, ncell, ncall
      integer nx, ny, ncell, ncall, n, i
      double precision v(n)
      call other
      do i = 1, n
         v(i) = v(i) + 1d0
      enddo
      end

c     a callee whose other block holds CHARACTER names (no C layout for sure): its /GRID/
c     reads still count
      subroutine tagged(ie)
      integer ie
      character*8 names
      common /tags/ names(4)
      common /grid/ nx, ny, ncell, ncall
      integer nx, ny, ncell, ncall
      names(1 + mod(ie, 4)) = 'tagged  '
      nt = ie / nx
      end

      subroutine gridtag(v, n)
      common /grid/ nx, ny, ncell, ncall
      integer nx, ny, ncell, ncall, n, i
      double precision v(n)
      call tagged(n)
      do i = 1, n
         v(i) = v(i) + 1d0
      enddo
      end
