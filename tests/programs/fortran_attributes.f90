! Predefined attributes asked from Fortran: libmpichfort answers them through an MPICH-internal
! helper (MPII_Comm_get_attr), not MPI_Comm_get_attr; the capture wraps it to record them.
program fortran_attributes
  use mpi
  implicit none
  integer :: ierr, rank
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  print '(A,I0,A,L1,A,I0)', 'rank ', rank, ' tag_ub flag=', flag, ' value=', val
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, val, flag, ierr)
  print '(A,I0,A,L1,A,I0)', 'rank ', rank, ' io flag=', flag, ' value=', val
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, val, flag, ierr)
  print '(A,I0,A,L1)', 'rank ', rank, ' universe_size flag=', flag
  call MPI_Finalize(ierr)
end program fortran_attributes
