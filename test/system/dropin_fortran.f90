! Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
!
! dropin.sh: a Fortran program built with this build's mpif90 (use mpi):
! allreduce (also in place), MINLOC on MPI_2DOUBLE_PRECISION, bcast from
! every root, allgather and reduce, each result checked.
program dropin_fortran
    use mpi
    implicit none
    integer, parameter :: n = 1000
    integer :: ierr, rank, nprocs, i, r, root, errs, best
    double precision :: a(n), b(n), pair(2, 5), res(2, 5), v
    integer :: ibuf(100), g(4 * 64), s(3), t(3)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    errs = 0

    do i = 1, n
        a(i) = dble(rank + i)
    end do
    call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, n
        if (b(i) /= dble(nprocs * i + nprocs * (nprocs - 1) / 2)) errs = errs + 1
    end do
    call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    do i = 1, n
        if (a(i) /= dble(nprocs - 1 + i)) errs = errs + 1
    end do

    do i = 1, 5
        pair(1, i) = dble(mod(rank * 7 + i, 3))
        pair(2, i) = dble(rank)
    end do
    call MPI_Allreduce(pair, res, 5, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    do i = 1, 5
        best = 0
        do r = 1, nprocs - 1
            if (mod(r * 7 + i, 3) < mod(best * 7 + i, 3)) best = r
        end do
        v = dble(mod(best * 7 + i, 3))
        if (res(1, i) /= v .or. res(2, i) /= dble(best)) errs = errs + 1
    end do

    do root = 0, nprocs - 1
        do i = 1, 100
            ibuf(i) = -1
            if (rank == root) ibuf(i) = root * 100 + i
        end do
        call MPI_Bcast(ibuf, 100, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        do i = 1, 100
            if (ibuf(i) /= root * 100 + i) errs = errs + 1
        end do
    end do

    if (nprocs <= 64) then
        do i = 1, 4
            ibuf(i) = rank * 10 + i
        end do
        call MPI_Allgather(ibuf, 4, MPI_INTEGER, g, 4, MPI_INTEGER, MPI_COMM_WORLD, ierr)
        do r = 0, nprocs - 1
            do i = 1, 4
                if (g(r * 4 + i) /= r * 10 + i) errs = errs + 1
            end do
        end do
    end if

    s = (/ rank, 1, 2 * rank /)
    do root = 0, nprocs - 1
        t = -1
        call MPI_Reduce(s, t, 3, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
        if (rank == root) then
            if (t(1) /= nprocs * (nprocs - 1) / 2 .or. t(2) /= nprocs .or. &
                t(3) /= nprocs * (nprocs - 1)) errs = errs + 1
        end if
    end do

    call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (errs == 0) then
            print '(A)', ' No Errors'
        else
            print '(A,I0,A)', ' Found ', errs, ' errors'
        end if
    end if
    call MPI_Finalize(ierr)
end program dropin_fortran
