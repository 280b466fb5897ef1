! Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
!
! dropin.sh: a Fortran 2008 program (use mpi_f08) built with this build's
! mpif90: blocking allreduce and reduce, nonblocking Iallreduce (in place),
! Ibcast from every root and Iallgather completed together by MPI_Waitall,
! and persistent Allreduce_init, Bcast_init and Allgather_init, each
! started several times (MPI_Startall, then MPI_Start in the other order)
! with new data between starts, then freed.  Every result checked.
program dropin_f08
    use mpi_f08
    implicit none
    integer, parameter :: n = 3000, m = 40, iters = 4
    integer :: rank, nprocs, i, r, root, it, errs
    double precision :: b(n), c(n)
    ! buffers of pending calls: the compiler must not keep them in registers
    double precision, asynchronous :: a(n), pa(n), pr(n)
    integer, asynchronous :: ib(m), ig(m * 64), pb(m), pg(m * 64)
    type(MPI_Request) :: req(3), preq(3)

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    errs = 0
    if (nprocs > 64) then
        if (rank == 0) print '(A)', ' this test needs at most 64 processes'
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end if

    ! blocking
    do i = 1, n
        a(i) = dble(rank * i)
    end do
    call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    do i = 1, n
        if (b(i) /= dble(i) * dble(nprocs * (nprocs - 1) / 2)) errs = errs + 1
    end do
    c = -1.0d0
    call MPI_Reduce(a, c, n, MPI_DOUBLE_PRECISION, MPI_MAX, nprocs - 1, MPI_COMM_WORLD)
    if (rank == nprocs - 1) then
        do i = 1, n
            if (c(i) /= dble((nprocs - 1) * i)) errs = errs + 1
        end do
    end if

    ! nonblocking: three calls outstanding at once, completed together
    do root = 0, nprocs - 1
        do i = 1, n
            a(i) = dble(rank + i + root)
        end do
        do i = 1, m
            ib(i) = -1
            if (rank == root) ib(i) = root * 1000 + i
            pb(i) = rank * 100 + i + root
        end do
        call MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, &
                            MPI_COMM_WORLD, req(1))
        call MPI_Ibcast(ib, m, MPI_INTEGER, root, MPI_COMM_WORLD, req(2))
        call MPI_Iallgather(pb, m, MPI_INTEGER, ig, m, MPI_INTEGER, MPI_COMM_WORLD, req(3))
        call MPI_Waitall(3, req, MPI_STATUSES_IGNORE)
        do i = 1, n
            if (a(i) /= dble(nprocs * (i + root)) + dble(nprocs * (nprocs - 1) / 2)) &
                errs = errs + 1
        end do
        do i = 1, m
            if (ib(i) /= root * 1000 + i) errs = errs + 1
        end do
        do r = 0, nprocs - 1
            do i = 1, m
                if (ig(r * m + i) /= r * 100 + i + root) errs = errs + 1
            end do
        end do
    end do

    ! persistent: init once, start many times with new data between starts
    call MPI_Allreduce_init(pa, pr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                            MPI_INFO_NULL, preq(1))
    call MPI_Bcast_init(pb, m, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq(2))
    call MPI_Allgather_init(ib, m, MPI_INTEGER, pg, m, MPI_INTEGER, MPI_COMM_WORLD, &
                            MPI_INFO_NULL, preq(3))
    do it = 1, iters
        do i = 1, n
            pa(i) = dble(rank + it * i)
        end do
        do i = 1, m
            pb(i) = -1
            if (rank == 0) pb(i) = it * 10 + i
            ib(i) = rank * 7 + it + i
        end do
        pr = -1.0d0
        pg = -1
        if (mod(it, 2) == 1) then
            call MPI_Startall(3, preq)
        else
            do i = 3, 1, -1
                call MPI_Start(preq(i))
            end do
        end if
        call MPI_Waitall(3, preq, MPI_STATUSES_IGNORE)
        do i = 1, n
            if (pr(i) /= dble(nprocs * it * i) + dble(nprocs * (nprocs - 1) / 2)) &
                errs = errs + 1
        end do
        do i = 1, m
            if (pb(i) /= it * 10 + i) errs = errs + 1
        end do
        do r = 0, nprocs - 1
            do i = 1, m
                if (pg(r * m + i) /= r * 7 + it + i) errs = errs + 1
            end do
        end do
    end do
    do i = 1, 3
        call MPI_Request_free(preq(i))
    end do

    call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) then
        if (errs == 0) then
            print '(A)', ' No Errors'
        else
            print '(A,I0,A)', ' Found ', errs, ' errors'
        end if
    end if
    call MPI_Finalize()
end program dropin_f08
