##
## Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
##

AM_CPPFLAGS += -I$(top_srcdir)/src/mpi/coll/topo

mpi_core_sources += \
    src/mpi/coll/topo/topo_distance.c \
    src/mpi/coll/topo/topo_map.c \
    src/mpi/coll/topo/topo_tree.c \
    src/mpi/coll/topo/topo_ring.c \
    src/mpi/coll/topo/topo_layout.c \
    src/mpi/coll/topo/topo_op.c \
    src/mpi/coll/topo/topo_model.c \
    src/mpi/coll/topo/topo.c \
    src/mpi/coll/topo/topo_basic.c \
    src/mpi/coll/topo/coll_trace.c \
    src/mpi/coll/topo/csel_topo.c \
    src/mpi/coll/topo/csel_cache.c \
    src/mpi/coll/topo/csel_check.c \
    src/mpi/coll/topo/csel_load.c \
    src/mpi/coll/topo/topo_entry.c \
    src/mpi/coll/topo/topo_nb.c \
    src/mpi/coll/topo/topo_split.c \
    src/mpi/coll/topo/allgather_intra_topo_ring.c \
    src/mpi/coll/topo/bcast_intra_topo_tree.c

noinst_HEADERS += \
    src/mpi/coll/topo/topo_logic.h \
    src/mpi/coll/topo/topo_map_impl.h \
    src/mpi/coll/topo/topo.h \
    src/mpi/coll/topo/topo_forced.h \
    src/mpi/coll/topo/coll_trace.h \
    src/mpi/coll/topo/csel_topo.h \
    src/mpi/coll/topo/csel_check.h \
    src/mpi/coll/topo/topo_hooks.h \
    src/mpi/coll/topo/topo_engine_api.h
