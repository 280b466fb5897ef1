/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Checking collective tuning files (loading them: csel_load.c).
 *
 * MPICH 4.0.2 trusts a tuning file: an unreadable file is not noticed, bad
 * JSON leaves the tree uninitialized, an unknown key, collective or
 * algorithm ends in an assertion, numbers go through atoi, and an operator
 * used for a collective it is not defined for asserts at the first call.
 * Here the whole file is checked against what the selection code (csel.c and
 * the three container functions) accepts before it is handed to it, and every
 * problem becomes an MPI error that names the file, the key, where it is, and
 * the valid choices. The names of algorithms, compositions, collectives and
 * parameters come from csel_names_autogen.h, which maint/gen_csel_names.sh
 * extracts from those functions, so the two cannot disagree. */

#include "mpiimpl.h"
#include "csel_topo.h"
#include "csel_check.h"
#include "csel_names_autogen.h"
#include <json.h>
#include <ctype.h>
#include <strings.h>

static const struct {
    const char *cvar;
    const char *label;
    const char *leaf;           /* the key prefix of a leaf at this level */
    const char *const *names;
} csel_levels[] = {
    {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", "MPIR", "algorithm=", MPIR_Csel_names_mpir},
    {"MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", "CH4", "composition=", MPIR_Csel_names_ch4},
    {"MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE", "POSIX", "algorithm=",
     MPIR_Csel_names_posix},
};

/* ---------------------------------------------------------------- grammar */

/* the collectives for which csel.c can evaluate the message operators */
static const char *const colls_avg[] = {
    "allreduce", "iallreduce", "bcast", "ibcast", "reduce", "ireduce", "alltoall", "ialltoall",
    NULL
};

static const char *const colls_total[] = {
    "allreduce", "bcast", "reduce", "alltoall", "alltoallv", "alltoallw", "allgather",
    "allgatherv", "gather", "scatter", "reduce_scatter", "reduce_scatter_block", "iallreduce",
    "ibcast", "ireduce", "ialltoall", "ialltoallv", "ialltoallw", "iallgather", "iallgatherv",
    "ireduce_scatter", "ireduce_scatter_block", "igather", "iscatter", NULL
};

static const char *const colls_count[] = {
    "bcast", "allreduce", "iallreduce", "reduce", "ireduce", "allgather", "allgatherv",
    "reduce_scatter", "reduce_scatter_block", "iallgather", "iallgatherv", "ireduce_scatter",
    "ireduce_scatter_block", NULL
};

static const char *const colls_commutative[] = {
    "allreduce", "iallreduce", "reduce", "ireduce", "reduce_scatter", "ireduce_scatter",
    "reduce_scatter_block", "ireduce_scatter_block", NULL
};

static const char *const colls_op_built_in[] = {
    "allreduce", "iallreduce", "reduce", "ireduce", NULL
};

static const char *const colls_inplace[] = {
    "alltoall", "ialltoall", "alltoallv", "ialltoallv", "alltoallw", "ialltoallw", NULL
};

static const char *const colls_block_regular[] = {
    "reduce_scatter", "ireduce_scatter", NULL
};

typedef enum {
    FORM_BOOL,                  /* may be the last key of its object */
    FORM_CMP,                   /* must be followed by another key (csel.c validate_tree) */
    FORM_ANY                    /* holds always: must be the last key */
} csel_form_kind_t;

/* One accepted operator key: `op` followed by `word`, or by a number when
 * word is NULL. Mirrors parse_json_tree in csel.c. Forms of one operator
 * are adjacent, "<=" before "<". */
static const struct csel_form {
    const char *op;
    const char *word;
    csel_form_kind_t kind;
    const char *const *colls;   /* collectives it is defined for; NULL: all */
} csel_forms[] = {
    {"comm_type=", "intra", FORM_BOOL, NULL},
    {"comm_type=", "inter", FORM_BOOL, NULL},
    {"is_multi_threaded=", "yes", FORM_BOOL, NULL},
    {"is_multi_threaded=", "no", FORM_BOOL, NULL},
    {"comm_size<=", NULL, FORM_CMP, NULL},
    {"comm_size<", NULL, FORM_CMP, NULL},
    {"comm_size=", "pow2", FORM_CMP, NULL},
    {"comm_size=", "node_comm_size", FORM_CMP, NULL},
    {"comm_size=", "any", FORM_ANY, NULL},
    {"comm_hierarchy=", "parent", FORM_BOOL, NULL},
    {"comm_hierarchy=", "node_roots", FORM_BOOL, NULL},
    {"comm_hierarchy=", "node", FORM_BOOL, NULL},
    {"comm_hierarchy=", "flat", FORM_BOOL, NULL},
    {"comm_hierarchy=", "any", FORM_BOOL, NULL},
    {"is_node_consecutive=", "yes", FORM_BOOL, NULL},
    {"is_node_consecutive=", "no", FORM_BOOL, NULL},
    {"comm_avg_ppn<=", NULL, FORM_CMP, NULL},
    {"avg_msg_size<=", NULL, FORM_CMP, colls_avg},
    {"avg_msg_size<", NULL, FORM_CMP, colls_avg},
    {"avg_msg_size=", "any", FORM_ANY, NULL},
    {"total_msg_size<=", NULL, FORM_CMP, colls_total},
    {"total_msg_size<", NULL, FORM_CMP, colls_total},
    {"total_msg_size=", "any", FORM_ANY, NULL},
    {"count<=", NULL, FORM_CMP, colls_count},
    {"count<", "pow2", FORM_CMP, colls_count},
    {"count=", "any", FORM_ANY, NULL},
    {"is_commutative=", "yes", FORM_BOOL, colls_commutative},
    {"is_commutative=", "no", FORM_BOOL, colls_commutative},
    {"is_op_built_in=", "yes", FORM_BOOL, colls_op_built_in},
    {"is_op_built_in=", "no", FORM_BOOL, colls_op_built_in},
    {"is_sendbuf_inplace=", "yes", FORM_BOOL, colls_inplace},
    {"is_sendbuf_inplace=", "no", FORM_BOOL, colls_inplace},
    {"is_block_regular=", "yes", FORM_BOOL, colls_block_regular},
    {"is_block_regular=", "no", FORM_BOOL, colls_block_regular},
    /* mpich-topo: topology predicates (csel_topo.c) */
    {"node_count<=", NULL, FORM_CMP, NULL},
    {"node_count<", NULL, FORM_CMP, NULL},
    {"ppn<=", NULL, FORM_CMP, NULL},
    {"ppn<", NULL, FORM_CMP, NULL},
    {"ppn_uniform=", "yes", FORM_BOOL, NULL},
    {"ppn_uniform=", "no", FORM_BOOL, NULL},
    {"numa_per_node<=", NULL, FORM_CMP, NULL},
    {"numa_per_node<", NULL, FORM_CMP, NULL},
    {"is_bound=", "yes", FORM_BOOL, NULL},
    {"is_bound=", "no", FORM_BOOL, NULL},
    {"topo_engine=", "yes", FORM_BOOL, NULL},
    {"topo_engine=", "no", FORM_BOOL, NULL},
};

#define CSEL_NFORMS ((int) (sizeof(csel_forms) / sizeof(csel_forms[0])))

/* ---------------------------------------------------------------- helpers */

#define CSEL_PATH_MAX 512

typedef struct {
    MPIR_Csel_level_t level;
    const char *coll;           /* the collective of the subtree being checked */
    char path[CSEL_PATH_MAX];   /* keys from the top: "collective=bcast > comm_type=intra" */
} csel_check_t;

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

static void append(char *buf, size_t size, const char *s)
{
    size_t len = strlen(buf);
    if (len < size - 1)
        snprintf(buf + len, size - len, "%s", s);
}

static void append_list(char *buf, size_t size, const char *s)
{
    if (buf[0])
        append(buf, size, ", ");
    append(buf, size, s);
}

/* A whole number from 0 to INT_MAX, nothing else. */
static int parse_count(const char *s, int *val)
{
    long v = 0;

    if (*s == '\0' || strlen(s) > 10)
        return 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        v = v * 10 + (*c - '0');
    }
    if (v > INT_MAX)
        return 0;
    *val = (int) v;
    return 1;
}

/* The collective an algorithm or composition name belongs to: the longest
 * collective name that follows its prefix (MPIR_, MPIDI_, MPIDI_POSIX_mpi_)
 * and is followed by '_' ("MPIR_Reduce_scatter_block_intra_..." is
 * reduce_scatter_block, not reduce or reduce_scatter). NULL if none. */
static const char *coll_of_name(const char *name)
{
    static const char *const prefixes[] = { "MPIDI_POSIX_mpi_", "MPIDI_", "MPIR_", NULL };
    const char *best = NULL;
    size_t best_len = 0;

    for (int i = 0; prefixes[i]; i++) {
        if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
            name += strlen(prefixes[i]);
            break;
        }
    }
    for (int i = 0; MPIR_Csel_coll_names[i]; i++) {
        const char *c = MPIR_Csel_coll_names[i];
        size_t len = strlen(c);
        if (len > best_len && !strncasecmp(name, c, len) && name[len] == '_') {
            best = c;
            best_len = len;
        }
    }
    return best;
}

/* Long texts shortened to fit a 256-character error line. */
const char *MPIR_Csel_clip(const char *s, char *buf, size_t size)
{
    size_t len = strlen(s);
    if (len < size)
        return s;
    snprintf(buf, size, "...%s", s + len - (size - 4));
    return buf;
}

/* ---------------------------------------------------------------- errors */

/* A list of valid choices, cut into lines that fit an error message. */
#define CSEL_LINE_MAX 180
#define CSEL_MAX_LINES 8

typedef struct {
    int n;
    char line[CSEL_MAX_LINES][CSEL_LINE_MAX + 64];
} csel_choices_t;

static void choice_add(csel_choices_t * ch, const char *item)
{
    if (ch->n > 0 && strlen(ch->line[ch->n - 1]) + strlen(item) + 2 <= CSEL_LINE_MAX) {
        append(ch->line[ch->n - 1], sizeof(ch->line[0]), ", ");
        append(ch->line[ch->n - 1], sizeof(ch->line[0]), item);
    } else if (ch->n < CSEL_MAX_LINES) {
        if (ch->n > 0)
            append(ch->line[ch->n - 1], sizeof(ch->line[0]), ",");
        snprintf(ch->line[ch->n++], sizeof(ch->line[0]), "%s", item);
    }
}

/* The choices go first into the chain: the newest error of a chain is
 * printed first, so they appear under the description made after them. */
static int csel_choices(const csel_choices_t * ch)
{
    int mpi_errno = MPI_SUCCESS;

    for (int i = ch->n - 1; i >= 0; i--) {
        if (i == 0)
            mpi_errno = MPIR_Err_create_code(mpi_errno, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                             MPI_ERR_OTHER, "**csel_choices",
                                             "**csel_choices %s", ch->line[i]);
        else
            mpi_errno = MPIR_Err_create_code(mpi_errno, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                             MPI_ERR_OTHER, "**csel_more", "**csel_more %s",
                                             ch->line[i]);
    }
    return mpi_errno;
}

/* The errors of a tuning file, each on top of the list of valid choices
 * where there is one.  (MPIR_Err_create_code, not a wrapper: MPICH's
 * extracterrmsgs finds the messages a build needs from these calls.) */
static int csel_unknown_key(const csel_choices_t * ch, const char *key, const char *path)
{
    char k[96], p[128];
    return MPIR_Err_create_code(csel_choices(ch), MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_key", "**csel_key %s %s",
                                MPIR_Csel_clip(key, k, sizeof(k)),
                                MPIR_Csel_clip(path, p, sizeof(p)));
}

static int csel_bad_number(const char *key, const char *path)
{
    char k[96], p[128];
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_number", "**csel_number %s %s",
                                MPIR_Csel_clip(key, k, sizeof(k)),
                                MPIR_Csel_clip(path, p, sizeof(p)));
}

static int csel_unknown_collective(const csel_choices_t * ch, const char *name)
{
    char n[96];
    return MPIR_Err_create_code(csel_choices(ch), MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_coll", "**csel_coll %s",
                                MPIR_Csel_clip(name, n, sizeof(n)));
}

static int csel_unknown_name(const csel_choices_t * ch, const char *kind, const char *name,
                             const char *coll)
{
    char n[128];
    return MPIR_Err_create_code(csel_choices(ch), MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_name", "**csel_name %s %s %s", kind,
                                MPIR_Csel_clip(name, n, sizeof(n)), coll);
}

static int csel_unknown_parameter(const csel_choices_t * ch, const char *param, const char *name)
{
    char k[96];
    return MPIR_Err_create_code(csel_choices(ch), MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_param", "**csel_param %s %s",
                                MPIR_Csel_clip(param, k, sizeof(k)), name);
}

static int csel_not_for_collective(const csel_choices_t * ch, const char *key, const char *coll)
{
    return MPIR_Err_create_code(csel_choices(ch), MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_notfor", "**csel_notfor %s %s", key, coll);
}

/* problems of the tree's shape; `what` is a sentence made by the caller */
int MPIR_Csel_bad_tree(const char *what, const char *path)
{
    char p[128];
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_struct", "**csel_struct %s %s", what,
                                MPIR_Csel_clip(path, p, sizeof(p)));
}

/* ---------------------------------------------------------------- checks */

static const char *path_of(const csel_check_t * c)
{
    return c->path[0] ? c->path : "the top level";
}

/* "comm_size<=" -> "comm_size" */
static void op_name(const char *op, char *buf, size_t size)
{
    size_t n = strcspn(op, "<=");
    snprintf(buf, size, "%.*s", (int) MPL_MIN(n, size - 1), op);
}

/* An unknown operator key: list the forms of the operator it names, or all
 * operators if it names none. */
static int describe_unknown_key(const csel_check_t * c, const char *key)
{
    csel_choices_t ch = { 0 };
    char name[64], prev[64] = "", item[96];
    size_t n = strcspn(key, "<=>!");

    for (int i = 0; i < CSEL_NFORMS; i++) {
        op_name(csel_forms[i].op, name, sizeof(name));
        if (strlen(name) == n && !strncmp(name, key, n)) {
            snprintf(item, sizeof(item), "%s%s", csel_forms[i].op,
                     csel_forms[i].word ? csel_forms[i].word : "N");
            choice_add(&ch, item);
        }
    }
    if (ch.n == 0) {
        for (int i = 0; i < CSEL_NFORMS; i++) {
            op_name(csel_forms[i].op, name, sizeof(name));
            if (strcmp(name, prev))
                choice_add(&ch, name);
            strcpy(prev, name);
        }
        choice_add(&ch, "each with its =, <= or < forms (README.md, Tuning files)");
        snprintf(item, sizeof(item), "or a leaf %sNAME", csel_levels[c->level].leaf);
        choice_add(&ch, item);
    }
    return csel_unknown_key(&ch, key, path_of(c));
}

/* Finds the form of an operator key. Returns its index, or -1 with
 * *mpi_errno set. */
static int match_form(const csel_check_t * c, const char *key, int *mpi_errno)
{
    int bad_number = 0, val;

    for (int i = 0; i < CSEL_NFORMS; i++) {
        size_t len = strlen(csel_forms[i].op);
        const char *rest = key + len;

        if (strncmp(key, csel_forms[i].op, len))
            continue;
        if (csel_forms[i].word) {
            if (!strcmp(rest, csel_forms[i].word))
                return i;
        } else if (parse_count(rest, &val)) {
            return i;
        } else if (*rest != '<' && *rest != '=') {
            /* "comm_size<" is a prefix of "comm_size<=...": only complain
             * about the number of the longest operator */
            bad_number = 1;
        }
    }
    *mpi_errno = bad_number ? csel_bad_number(key, path_of(c)) : describe_unknown_key(c, key);
    return -1;
}

static int check_object(csel_check_t * c, struct json_object *obj);

static int check_leaf(csel_check_t * c, const char *key, struct json_object *val)
{
    int mpi_errno = MPI_SUCCESS;
    const char *leaf = csel_levels[c->level].leaf;
    const char *const *names = csel_levels[c->level].names;
    const char *name, *name_coll;
    csel_choices_t ch = { 0 };
    char kind[32];

    snprintf(kind, sizeof(kind), "%s %.*s", csel_levels[c->level].label,
             (int) strlen(leaf) - 1, leaf);
    name = strchr(key, '=') + 1;
    name_coll = in_list(name, names) ? coll_of_name(name) : NULL;
    if (strncmp(key, leaf, strlen(leaf)) || !in_list(name, names) ||
        (name_coll && strcmp(name_coll, c->coll))) {
        for (int i = 0; names[i]; i++) {
            const char *nc = coll_of_name(names[i]);
            if (nc == NULL || !strcmp(nc, c->coll))
                choice_add(&ch, names[i]);
        }
        if (ch.n == 0)
            choice_add(&ch, "none at this level (leave the collective out: the next level decides)");
        return csel_unknown_name(&ch, kind, key, c->coll);
    }

    /* parameters ("k=3": {}) of the MPIR algorithms that read some */
    if (json_object_object_length(val) > 0) {
        const char *const *params = NULL;

        if (c->level == MPIR_CSEL_LEVEL__MPIR) {
            for (int i = 0; MPIR_Csel_params_mpir[i]; i++) {
                if (!strcmp(MPIR_Csel_params_mpir[i], name)) {
                    params = &MPIR_Csel_params_mpir[i + 1];
                    break;
                }
                while (MPIR_Csel_params_mpir[i])
                    i++;        /* skip this algorithm's parameters */
            }
        }
        json_object_object_foreach(val, pkey, pval) {
            char *ckey = MPL_strdup_no_spaces(pkey);
            const char *eq = strchr(ckey, '=');
            int known = 0, num;

            (void) pval;
            for (int i = 0; params && params[i] && eq; i++)
                if ((size_t) (eq - ckey) == strlen(params[i]) &&
                    !strncmp(ckey, params[i], eq - ckey))
                    known = 1;
            if (!known) {
                char item[96];
                for (int i = 0; params && params[i]; i++) {
                    snprintf(item, sizeof(item), "%s=N", params[i]);
                    choice_add(&ch, item);
                }
                if (ch.n == 0)
                    choice_add(&ch, "none: this algorithm takes no parameters ({})");
                mpi_errno = csel_unknown_parameter(&ch, ckey, name);
            } else if (!parse_count(eq + 1, &num)) {
                mpi_errno = csel_bad_number(ckey, path_of(c));
            }
            MPL_free(ckey);
            if (mpi_errno)
                return mpi_errno;
        }
    }
    return MPI_SUCCESS;
}

/* One object: an ordered list of alternatives (csel.c parse_json_tree): the
 * first key that holds is followed, the next key is what happens otherwise. */
static int check_object(csel_check_t * c, struct json_object *obj)
{
    int mpi_errno = MPI_SUCCESS;
    int nkeys = json_object_object_length(obj), nseen = 0;
    int seen[CSEL_NFORMS] = { 0 };
    size_t path_len = strlen(c->path);
    char what[256];

    json_object_object_foreach(obj, key, val) {
        char *ckey = MPL_strdup_no_spaces(key);
        int last = (++nseen == nkeys), f;

        if (json_object_get_type(val) != json_type_object) {
            snprintf(what, sizeof(what), "the value of \"%.80s\" is not an object {...}", ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            goto done;
        }
        if (!strncmp(ckey, "algorithm=", strlen("algorithm=")) ||
            !strncmp(ckey, "composition=", strlen("composition="))) {
            if (nkeys > 1) {
                snprintf(what, sizeof(what), "\"%.100s\" must be the only key of its object, "
                         "which has %d", ckey, nkeys);
                mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            } else {
                mpi_errno = check_leaf(c, ckey, val);
            }
            goto done;
        }
        if (!strncmp(ckey, "collective=", strlen("collective="))) {
            snprintf(what, sizeof(what), "\"%.80s\" is only allowed at the top level", ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            goto done;
        }

        f = match_form(c, ckey, &mpi_errno);
        if (f < 0)
            goto done;
        seen[f] = 1;
        if (csel_forms[f].colls && !in_list(c->coll, csel_forms[f].colls)) {
            csel_choices_t ch = { 0 };
            for (int i = 0; csel_forms[f].colls[i]; i++)
                choice_add(&ch, csel_forms[f].colls[i]);
            mpi_errno = csel_not_for_collective(&ch, ckey, c->coll);
            goto done;
        }
        if (csel_forms[f].kind == FORM_ANY && !last) {
            snprintf(what, sizeof(what), "\"%.80s\" always holds, so it must be the last key "
                     "of its object", ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            goto done;
        }
        if (last && csel_forms[f].kind == FORM_CMP) {
            snprintf(what, sizeof(what), "\"%.80s\" is the last key of its object, so nothing "
                     "is selected when it does not hold: add a key after it, such as "
                     "\"comm_size=any\"", ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            goto done;
        }
        /* The MPIR level asserts when nothing is selected (MPIR_<Coll>_allcomm_auto);
         * CH4 and POSIX fall back to the next level. */
        if (last && csel_forms[f].kind == FORM_BOOL && c->level == MPIR_CSEL_LEVEL__MPIR) {
            char missing[128] = "";
            int any = 0;
            for (int i = 0; i < CSEL_NFORMS; i++)
                if (seen[i] && !strcmp(csel_forms[i].op, csel_forms[f].op) &&
                    csel_forms[i].word && !strcmp(csel_forms[i].word, "any"))
                    any = 1;
            for (int i = 0; i < CSEL_NFORMS && !any; i++)
                if (!seen[i] && !strcmp(csel_forms[i].op, csel_forms[f].op) &&
                    csel_forms[i].word && strcmp(csel_forms[i].word, "any"))
                    append_list(missing, sizeof(missing), csel_forms[i].word);
            if (missing[0]) {
                snprintf(what, sizeof(what), "\"%.80s\" is the last key of its object, so "
                         "nothing is selected at the MPIR level when it does not hold: add "
                         "\"%s%s\" after it", ckey, csel_forms[f].op, missing);
                mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
                goto done;
            }
        }
        if (json_object_object_length(val) == 0) {
            snprintf(what, sizeof(what), "\"%.80s\" has nothing under it: it needs an %sNAME "
                     "or more keys", ckey, csel_levels[c->level].leaf);
            mpi_errno = MPIR_Csel_bad_tree(what, path_of(c));
            goto done;
        }

        snprintf(c->path + path_len, sizeof(c->path) - path_len, " > %s", ckey);
        mpi_errno = check_object(c, val);
        c->path[path_len] = '\0';

      done:
        MPL_free(ckey);
        if (mpi_errno)
            return mpi_errno;
    }
    return MPI_SUCCESS;
}

int MPIR_Csel_check_tree(MPIR_Csel_level_t level, struct json_object *tree)
{
    int mpi_errno = MPI_SUCCESS;
    int ncolls = 0;
    int seen[64] = { 0 };
    csel_check_t c;
    csel_choices_t ch = { 0 };
    char what[256];

    c.level = level;
    c.coll = NULL;
    c.path[0] = '\0';

    while (MPIR_Csel_coll_names[ncolls])
        ncolls++;
    MPIR_Assert(ncolls <= (int) (sizeof(seen) / sizeof(seen[0])));

    if (json_object_get_type(tree) != json_type_object || json_object_object_length(tree) == 0)
        return MPIR_Csel_bad_tree("the file holds no \"collective=NAME\": {...} keys", "the file");

    json_object_object_foreach(tree, key, val) {
        char *ckey = MPL_strdup_no_spaces(key);
        const char *name = ckey + strlen("collective=");
        int ci = -1;

        if (strncmp(ckey, "collective=", strlen("collective="))) {
            choice_add(&ch, "collective=NAME");
            mpi_errno = csel_unknown_key(&ch, ckey, "the top level, whose keys must be collective=NAME");
            goto done;
        }
        for (int i = 0; i < ncolls; i++)
            if (!strcmp(name, MPIR_Csel_coll_names[i]))
                ci = i;
        if (ci < 0) {
            for (int i = 0; i < ncolls; i++)
                choice_add(&ch, MPIR_Csel_coll_names[i]);
            mpi_errno = csel_unknown_collective(&ch, ckey);
            goto done;
        }
        if (seen[ci]) {
            snprintf(what, sizeof(what), "\"%.60s\" appears twice (the second would replace "
                     "the first)", ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, "the top level");
            goto done;
        }
        seen[ci] = 1;
        if (json_object_get_type(val) != json_type_object ||
            json_object_object_length(val) == 0) {
            snprintf(what, sizeof(what), "the value of \"%.60s\" is not an object with keys",
                     ckey);
            mpi_errno = MPIR_Csel_bad_tree(what, "the top level");
            goto done;
        }
        c.coll = MPIR_Csel_coll_names[ci];
        snprintf(c.path, sizeof(c.path), "%s", ckey);
        mpi_errno = check_object(&c, val);

      done:
        MPL_free(ckey);
        if (mpi_errno)
            return mpi_errno;
    }
    return MPI_SUCCESS;
}

const char *MPIR_Csel_level_cvar(MPIR_Csel_level_t level)
{
    return csel_levels[level].cvar;
}

const char *MPIR_Csel_level_label(MPIR_Csel_level_t level)
{
    return csel_levels[level].label;
}
