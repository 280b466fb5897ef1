! Fortran 2018 coarray collectives over OpenCoarrays (Debian's
! libcaf_mpich, built against Debian's MPICH), run by test/system/apps.sh
! on this build.  OpenCoarrays maps co_sum, co_min and co_max to one
! MPI_Allreduce in place (MPI_Reduce in place at result_image and from a
! NULL buffer elsewhere), co_reduce to the same with an MPI_Op_create
! operation, co_broadcast of a scalar to one MPI_Bcast (a derived type as
! MPI_BYTE) and of an array to one MPI_Bcast per element, sync all to
! MPI_Barrier.  Every result is checked on every image; image 1 prints
! "No Errors" or "FAIL n".
program apps_coarray
  implicit none
  integer, parameter :: nbig = 262147
  type :: block_t
    integer :: tag
    real(8) :: v(70001)
  end type block_t
  integer :: me, np, i, j, k, n, root, errs
  integer :: sizes(8) = [1, 3, 17, 1000, 4099, 32768, 100003, nbig]
  integer, allocatable :: a(:)
  real(8), allocatable :: d(:)
  real(4) :: f(513)
  complex(8) :: z(129)
  integer :: small(100)
  type(block_t), allocatable :: blk
  integer :: c(1000)[*]

  errs = 0
  me = this_image()
  np = num_images()
  allocate(a(nbig), d(nbig), blk)

  do k = 1, size(sizes)
    n = sizes(k)
    root = mod(k, np) + 1
    ! co_sum: allreduce in place, integer(4)
    do i = 1, n
      a(i) = me * 3 + i
    end do
    call co_sum(a(1:n))
    do i = 1, n
      if (a(i) /= 3 * np * (np + 1) / 2 + np * i) errs = errs + 1
    end do
    ! co_max to every image, co_min to root: allreduce and reduce of real(8)
    do i = 1, n
      d(i) = real(mod(me + i, np), 8) + 0.25d0 * i
    end do
    call co_max(d(1:n))
    do i = 1, n
      if (d(i) /= real(np - 1, 8) + 0.25d0 * i) errs = errs + 1
    end do
    do i = 1, n
      d(i) = real(mod(me + i, np), 8) - i
    end do
    call co_min(d(1:n), result_image=root)
    if (me == root) then
      do i = 1, n
        if (d(i) /= real(-i, 8)) errs = errs + 1
      end do
    end if
    ! co_reduce with a user function (MPI_Op_create) to every image
    do i = 1, n
      a(i) = mod(me * 7 + i, 11)
    end do
    call co_reduce(a(1:n), imax)
    do i = 1, n
      if (a(i) /= maxval([(mod(j * 7 + i, 11), j = 1, np)])) errs = errs + 1
    end do
  end do

  ! real(4) and complex(8) sums, a scalar co_sum
  f = real(me, 4)
  call co_sum(f)
  if (any(f /= real(np * (np + 1) / 2, 4))) errs = errs + 1
  z = cmplx(me, -2 * me, 8)
  call co_sum(z, result_image=np)
  if (me == np) then
    if (any(z /= cmplx(np * (np + 1) / 2, -np * (np + 1), 8))) errs = errs + 1
  end if
  k = me
  call co_sum(k)
  if (k /= np * (np + 1) / 2) errs = errs + 1

  ! co_broadcast of a 560 KB derived-type scalar (one MPI_Bcast of bytes)
  ! from every image, and of a small array (one MPI_Bcast per element)
  do root = 1, np
    if (me == root) then
      blk%tag = root
      do i = 1, size(blk%v)
        blk%v(i) = root * 1000.0d0 + i
      end do
    else
      blk%tag = -1
      blk%v = -1.0d0
    end if
    call co_broadcast(blk, source_image=root)
    if (blk%tag /= root) errs = errs + 1
    do i = 1, size(blk%v)
      if (blk%v(i) /= root * 1000.0d0 + i) errs = errs + 1
    end do
    small = merge([(i * root, i = 1, 100)], [(-1, i = 1, 100)], me == root)
    call co_broadcast(small, source_image=root)
    if (any(small /= [(i * root, i = 1, 100)])) errs = errs + 1
  end do

  ! sync all (MPI_Barrier) between coarray writes and remote reads
  c(:) = me * 10
  sync all
  do i = 1, size(c), 97
    if (c(i)[mod(me, np) + 1] /= (mod(me, np) + 1) * 10) errs = errs + 1
  end do
  sync all

  call co_sum(errs)
  if (me == 1) then
    if (errs == 0) then
      print '(a)', ' No Errors'
    else
      print '(a,i0)', ' FAIL ', errs
    end if
  end if

contains

  pure function imax(x, y)
    integer, value :: x, y
    integer :: imax
    imax = max(x, y)
  end function imax

end program apps_coarray
