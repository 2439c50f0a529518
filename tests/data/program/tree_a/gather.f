c     Assumed-size dummies the subscripts cannot bound (indirect access): GATHER's extent
c     comes from its call site in RUNG (SRC is declared S(M) there, and M is passed);
c     GATHER2 has no caller: its extent comes from the configuration.
      subroutine gather(n, m, idx, src, dst)
      integer n, m, idx(n), i
      double precision src(*), dst(n)
      do i = 1, n
         dst(i) = src(idx(i))
      end do
      end

      subroutine rung(n, m, idx, s, d)
      integer n, m, idx(n)
      double precision s(m), d(n)
      call gather(n, m, idx, s, d)
      end

      subroutine gather2(n, k, idx, src, dst)
      integer n, k, idx(n), i
      double precision src(*), dst(n)
      do i = 1, n
         dst(i) = 2.0d0 * src(idx(i))
      end do
      end

      subroutine gather3(n, idx, src, dst)
      integer n, idx(n), i
      double precision src(1), dst(n)
      do i = 1, n
         dst(i) = src(idx(i))
      end do
      end
