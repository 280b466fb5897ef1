/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef CSEL_CHECK_H_INCLUDED
#define CSEL_CHECK_H_INCLUDED

/* Shared by the tuning-file checker (csel_check.c) and loader
 * (csel_load.c). */

/* A problem of the tree's shape: `what` is a sentence, `path` where. */
int MPIR_Csel_bad_tree(const char *what, const char *path);
/* Long texts shortened to fit an error line (in buf when cut). */
const char *MPIR_Csel_clip(const char *s, char *buf, size_t size);
/* The CVAR that names the tuning file of a level, and the level's name
 * ("MPIR", "CH4", "POSIX"). */
const char *MPIR_Csel_level_cvar(MPIR_Csel_level_t level);
const char *MPIR_Csel_level_label(MPIR_Csel_level_t level);

#endif /* CSEL_CHECK_H_INCLUDED */
