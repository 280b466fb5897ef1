##
## Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
##

# mpich-topo shared-memory + network pipeline engine.  Included from
# src/mpid/ch4/shm/Makefile.mk, so only built with CH4 shared memory; the
# define tells the MPIR entry points (src/mpi/coll/topo) that it exists.

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch4/shm/topo -DMPIR_TOPO_HAVE_ENGINE

mpi_core_sources += \
    src/mpid/ch4/shm/topo/topo_engine.c \
    src/mpid/ch4/shm/topo/topo_engine_cma.c \
    src/mpid/ch4/shm/topo/topo_engine_segment.c \
    src/mpid/ch4/shm/topo/topo_engine_timeline.c \
    src/mpid/ch4/shm/topo/topo_engine_wait.c \
    src/mpid/ch4/shm/topo/topo_bcast_pipeline.c \
    src/mpid/ch4/shm/topo/topo_allgather_pipeline.c \
    src/mpid/ch4/shm/topo/topo_allgather_multileader.c \
    src/mpid/ch4/shm/topo/topo_allgather_learn.c \
    src/mpid/ch4/shm/topo/topo_learn.c \
    src/mpid/ch4/shm/topo/topo_allreduce_pipeline.c \
    src/mpid/ch4/shm/topo/topo_allreduce_cma.c \
    src/mpid/ch4/shm/topo/topo_barrier_flags.c

noinst_HEADERS += \
    src/mpid/ch4/shm/topo/topo_engine.h
