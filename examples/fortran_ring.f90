! fortran_ring.f90 - ring token pass and an allreduce from Fortran 90 (`use mpi`).
!
! Exercises: the Fortran MPI bindings (MPI_SEND/MPI_RECV with explicit
! sources and a status array, MPI_ALLREDUCE, MPI_GATHER), so recorders are
! tested on the mpif/`use mpi` entry points, not only on the C ones.
! The digests are computed by the C routines digest_init/digest_update/digest_hex
! of examples/common/digest.c through bind(C) interfaces, and the output
! line has the same format as the C examples.
!
! Usage: example_fortran_ring [laps=3]        (needs >= 2 ranks)
program fortran_ring
  use mpi
  use iso_c_binding, only: c_int64_t, c_size_t, c_ptr, c_char, c_loc
  implicit none

  interface
    subroutine digest_init(h) bind(C, name='digest_init')
      import :: c_int64_t
      integer(c_int64_t), intent(out) :: h
    end subroutine digest_init
    subroutine digest_update(h, p, n) bind(C, name='digest_update')
      import :: c_int64_t, c_ptr, c_size_t
      integer(c_int64_t), intent(inout) :: h
      type(c_ptr), value :: p
      integer(c_size_t), value :: n
    end subroutine digest_update
    subroutine digest_hex(h, out) bind(C, name='digest_hex')
      import :: c_int64_t, c_char
      integer(c_int64_t), value :: h
      character(kind=c_char), intent(out) :: out(16)
    end subroutine digest_hex
  end interface

  integer, parameter :: tag = 7, nsum = 4
  integer :: ierr, rank, nprocs, left, right, lap, laps, i, r, nrecv
  integer :: status(MPI_STATUS_SIZE)
  integer(c_int64_t), target :: token
  double precision, target :: part(nsum), total(nsum)
  integer(c_int64_t) :: hrecv, hcomp, mine(2)
  integer(c_int64_t), allocatable :: all(:)
  character(len=32) :: arg
  character(kind=c_char) :: hexr(16), hexc(16)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  laps = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) laps
  end if
  if (nprocs < 2 .or. laps < 1) then
    if (rank == 0) write (0, '(a)') 'usage: example_fortran_ring [laps>=1], needs >= 2 ranks'
    call MPI_FINALIZE(ierr)
    stop 1
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call digest_init(hrecv)
  call digest_init(hcomp)

  ! Token ring: rank 0 injects, every rank mixes in its rank (kept below 2**31).
  token = 0
  do lap = 1, laps
    if (rank == 0) then
      token = mod(token * 31 + lap, 1000000007_c_int64_t)
      call MPI_SEND(token, 1, MPI_INTEGER8, right, tag, MPI_COMM_WORLD, ierr)
      call MPI_RECV(token, 1, MPI_INTEGER8, left, tag, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_RECV(token, 1, MPI_INTEGER8, left, tag, MPI_COMM_WORLD, status, ierr)
    end if
    call MPI_GET_COUNT(status, MPI_INTEGER8, nrecv, ierr)
    call digest_update(hrecv, c_loc(token), int(8 * nrecv, c_size_t))
    if (rank /= 0) then
      token = mod(token * 31 + rank, 1000000007_c_int64_t)
      call MPI_SEND(token, 1, MPI_INTEGER8, right, tag, MPI_COMM_WORLD, ierr)
    end if
  end do

  ! Allreduce of exact integer-valued doubles.
  do i = 1, nsum
    part(i) = dble(mod(token, 1000_c_int64_t) + rank * i)
  end do
  call MPI_ALLREDUCE(part, total, nsum, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call digest_update(hrecv, c_loc(total), int(8 * nsum, c_size_t))

  call digest_update(hcomp, c_loc(token), 8_c_size_t)
  call digest_update(hcomp, c_loc(part), int(8 * nsum, c_size_t))
  call digest_update(hcomp, c_loc(total), int(8 * nsum, c_size_t))
  if (rank == 0) write (*, '(a,i0,a,i0,a,f0.1)') 'fortran_ring: ', nprocs, ' ranks, token=', &
    token, ' sum=', sum(total)

  ! Report: gather (recv, compute) to rank 0, which prints one line per rank.
  mine(1) = hrecv
  mine(2) = hcomp
  allocate (all(2 * nprocs))
  call MPI_GATHER(mine, 2, MPI_INTEGER8, all, 2, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do r = 0, nprocs - 1
      call digest_hex(all(2 * r + 1), hexr)
      call digest_hex(all(2 * r + 2), hexc)
      write (*, '(a,i0,a,16a,a,16a)') 'digest rank=', r, ' recv=', hexr, ' compute=', hexc
    end do
  end if
  deallocate (all)
  call MPI_FINALIZE(ierr)
end program fortran_ring
