! Halo faces in the way hydro mini-apps update them (written for port-fortran): per field
! flag and per external face, the halo rows mirrored from the interior (q(j, 1 - k) =
! q(j, k)), the field declared two cells wider than the domain. The conditions read the
! flag and neighbour arrays: computed before each branch, so the faces are kernels; the
! reflections are independent (the rows written and read never meet); the harness keeps
! depth within the two halo cells.
module uh_data
  implicit none
  integer, parameter :: CH_LEFT = 1, CH_RIGHT = 2, CH_BOTTOM = 3, CH_TOP = 4
  integer, parameter :: EXT_FACE = -1
  integer, parameter :: F_DENS = 1, F_ENER = 2, F_PRES = 3, NFIELDS = 3
end module uh_data

module uhalo_mod
contains
subroutine uhalo(x_min, x_max, y_min, y_max, neighbours, fields, depth, dens, ener, pres)
  use uh_data
  implicit none
  integer :: x_min, x_max, y_min, y_max, depth
  integer, dimension(4) :: neighbours
  integer :: fields(NFIELDS)
  real(kind=8), dimension(x_min-2:x_max+2, y_min-2:y_max+2) :: dens, ener, pres
  integer :: j, k
  if (fields(F_DENS) == 1) then
    if (neighbours(CH_BOTTOM) == EXT_FACE) then
      do k = 1, depth
        do j = x_min - depth, x_max + depth
          dens(j, 1 - k) = dens(j, 0 + k)
        end do
      end do
    end if
    if (neighbours(CH_TOP) == EXT_FACE) then
      do k = 1, depth
        do j = x_min - depth, x_max + depth
          dens(j, y_max + k) = dens(j, y_max + 1 - k)
        end do
      end do
    end if
    if (neighbours(CH_LEFT) == EXT_FACE) then
      do k = y_min - depth, y_max + depth
        do j = 1, depth
          dens(1 - j, k) = dens(0 + j, k)
        end do
      end do
    end if
    if (neighbours(CH_RIGHT) == EXT_FACE) then
      do k = y_min - depth, y_max + depth
        do j = 1, depth
          dens(x_max + j, k) = dens(x_max + 1 - j, k)
        end do
      end do
    end if
  end if
  if (fields(F_ENER) == 1) then
    if (neighbours(CH_BOTTOM) == EXT_FACE) then
      do k = 1, depth
        do j = x_min - depth, x_max + depth
          ener(j, 1 - k) = ener(j, 0 + k)
        end do
      end do
    end if
    if (neighbours(CH_LEFT) == EXT_FACE) then
      do k = y_min - depth, y_max + depth
        do j = 1, depth
          ener(1 - j, k) = ener(0 + j, k)
        end do
      end do
    end if
  end if
  if (fields(F_PRES) == 1) then
    if (neighbours(CH_TOP) == EXT_FACE) then
      do k = 1, depth
        do j = x_min - depth, x_max + depth
          pres(j, y_max + k) = -pres(j, y_max + 1 - k)
        end do
      end do
    end if
  end if
end subroutine uhalo
end module uhalo_mod
