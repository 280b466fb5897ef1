/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Loading collective tuning files: read the file, parse it as JSON (with
 * its line and column on errors, and duplicate keys caught, which json-c
 * would silently merge), check it (csel_check.c), and hand it to MPICH's
 * selection, or, with MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn, say why
 * the built-in tuning of that level is used instead. */

#include "mpiimpl.h"
#include "csel_topo.h"
#include "csel_check.h"
#include <json.h>
#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_COLL_SELECTION_TUNING_ERROR
      category    : COLLECTIVE
      type        : enum
      default     : error
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        What MPI_Init does with a collective tuning file (given with
        MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE,
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE or
        MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE) that cannot be
        read, is not valid JSON, or holds a key, collective, algorithm,
        parameter or number the selection does not know. The message names
        the file, the key, where it is in the file and the valid choices.
        Tuning files may use the topology predicates node_count<=N,
        node_count<N, ppn<=N, ppn<N, ppn_uniform=yes|no, numa_per_node<=N,
        numa_per_node<N and is_bound=yes|no (see README.md, Tuning files).
        error - MPI_Init fails with that error
        warn  - print the error and use the built-in tuning of that level

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* (MPIR_Err_create_code, not a wrapper: see csel_check.c) */
static int csel_unreadable(const char *reason)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_open", "**csel_open %s", reason);
}

static int csel_not_json(int line, int column, const char *what)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**csel_json", "**csel_json %d %d %s", line,
                                column, what);
}

static int csel_tuning_file(int code, const char *cvar, const char *file)
{
    char f[128];
    return MPIR_Err_create_code(code, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_OTHER,
                                "**csel_file", "**csel_file %s %s", cvar,
                                MPIR_Csel_clip(file, f, sizeof(f)));
}

static int read_file(const char *file, char **buf_out, size_t * len_out)
{
    int mpi_errno = MPI_SUCCESS;
    int fd;
    char *buf = NULL;
    size_t len = 0, cap = 0;

    fd = open(file, O_RDONLY);
    if (fd < 0) {
        mpi_errno = csel_unreadable(strerror(errno));
        goto fn_fail;
    }
    for (;;) {
        ssize_t got;
        if (len + 1 >= cap) {
            char *nbuf;
            cap = cap ? 2 * cap : 65536;
            nbuf = MPL_realloc(buf, cap, MPL_MEM_COLL);
            MPIR_ERR_CHKANDJUMP(nbuf == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
            buf = nbuf;
        }
        got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            mpi_errno = csel_unreadable(strerror(errno));
            goto fn_fail;
        }
        if (got == 0)
            break;
        len += got;
    }
    buf[len] = '\0';
    *buf_out = buf;
    *len_out = len;
    buf = NULL;

  fn_exit:
    if (fd >= 0)
        close(fd);
    MPL_free(buf);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int parse_json(const char *buf, size_t len, struct json_object **tree_out)
{
    int mpi_errno = MPI_SUCCESS;
    struct json_tokener *tok = json_tokener_new();
    struct json_object *tree = NULL;
    enum json_tokener_error jerr;
    size_t end = 0, line = 1, column = 1;
    const char *what;

    MPIR_ERR_CHKANDJUMP(tok == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    /* JSON as written down, no json-c extensions (trailing commas, ...) */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    while (end < len && isspace((unsigned char) buf[end]))
        end++;
    if (end == len) {
        mpi_errno = csel_not_json(1, 1, "the file is empty");
        goto fn_fail;
    }
    tree = json_tokener_parse_ex(tok, buf, (int) len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (tree && jerr == json_tokener_success) {
        /* json-c stops after the first value; only white space may follow */
        while (end < len && isspace((unsigned char) buf[end]))
            end++;
        if (end == len)
            goto fn_exit;
        what = "text after the end of the JSON object";
    } else if (jerr == json_tokener_continue || jerr == json_tokener_success) {
        what = "the file ends inside the JSON object";
        end = len;
    } else {
        what = json_tokener_error_desc(jerr);
    }
    for (size_t i = 0; i < end && i < len; i++) {
        if (buf[i] == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    mpi_errno = csel_not_json((int) line, (int) column, what);
    goto fn_fail;

  fn_exit:
    if (tok)
        json_tokener_free(tok);
    *tree_out = tree;
    return mpi_errno;
  fn_fail:
    if (tree)
        json_object_put(tree);
    tree = NULL;
    goto fn_exit;
}

int MPIR_Csel_user_file[3];
/* the collectives ("collective=<name>" keys) each level's user file covers,
 * as ",name,name," */
static char *user_colls[3];

int MPIR_Csel_user_chose(MPIR_Csel_level_t level, const char *coll)
{
    char key[64];

    if (!MPIR_Csel_user_file[level] || user_colls[level] == NULL)
        return 0;
    snprintf(key, sizeof(key), ",%s,", coll);
    return strstr(user_colls[level], key) != NULL;
}

/* json-c keeps only the last of two equal keys of an object, silently; in
 * a selection tree that drops a branch, so it is an error.  Scans the text
 * (already known to be valid JSON) object by object. */
#define DUP_MAX_DEPTH 64
static int check_duplicate_keys(const char *buf, size_t len)
{
    struct level {
        int is_object, expect_key, nkeys, cap;
        const char **key;       /* into buf: the opening quote */
        size_t *klen;
    } lv[DUP_MAX_DEPTH];
    int depth = -1, line = 1, mpi_errno = MPI_SUCCESS;
    char path[256] = "", what[256];

    for (size_t i = 0; i < len && mpi_errno == MPI_SUCCESS; i++) {
        char ch = buf[i];
        if (ch == '\n')
            line++;
        else if (ch == '{' || ch == '[') {
            if (++depth == DUP_MAX_DEPTH)
                return MPI_SUCCESS;     /* deeper than any selection tree */
            memset(&lv[depth], 0, sizeof(lv[depth]));
            lv[depth].is_object = lv[depth].expect_key = (ch == '{');
        } else if ((ch == '}' || ch == ']') && depth >= 0) {
            MPL_free(lv[depth].key);
            MPL_free(lv[depth].klen);
            depth--;
        } else if (ch == ',' && depth >= 0 && lv[depth].is_object)
            lv[depth].expect_key = 1;
        else if (ch == '"') {
            size_t start = i++, n;
            while (i < len && buf[i] != '"')
                i += buf[i] == '\\' ? 2 : 1;
            n = i - start + 1;
            if (depth < 0 || !lv[depth].expect_key)
                continue;
            struct level *l = &lv[depth];
            l->expect_key = 0;
            for (int j = 0; j < l->nkeys; j++) {
                if (l->klen[j] == n && !memcmp(l->key[j], buf + start, n)) {
                    /* the path: the last key of each enclosing object */
                    for (int d = 0; d < depth; d++)
                        if (lv[d].is_object && lv[d].nkeys)
                            snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%.*s",
                                     path[0] ? " > " : "", (int) lv[d].klen[lv[d].nkeys - 1] - 2,
                                     lv[d].key[lv[d].nkeys - 1] + 1);
                    snprintf(what, sizeof(what), "the key %.*s appears twice in one object "
                             "(line %d); JSON keeps only the last, which would drop a branch",
                             (int) MPL_MIN(n, 96), buf + start, line);
                    mpi_errno = MPIR_Csel_bad_tree(what, path[0] ? path : "the top level");
                    break;
                }
            }
            if (mpi_errno == MPI_SUCCESS) {
                if (l->nkeys == l->cap) {
                    int cap = l->cap ? 2 * l->cap : 8;
                    const char **key = MPL_realloc(l->key, cap * sizeof(*key), MPL_MEM_COLL);
                    size_t *klen = key ? MPL_realloc(l->klen, cap * sizeof(*klen),
                                                     MPL_MEM_COLL) : NULL;
                    if (key)
                        l->key = key;
                    if (klen)
                        l->klen = klen;
                    if (key == NULL || klen == NULL) {
                        MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**nomem");
                        break;
                    }
                    l->cap = cap;
                }
                l->key[l->nkeys] = buf + start;
                l->klen[l->nkeys++] = n;
            }
        }
    }
    for (; depth >= 0; depth--) {
        MPL_free(lv[depth].key);
        MPL_free(lv[depth].klen);
    }
    return mpi_errno;
}

/* A file only needs the collectives it changes: MPICH 4.0.2 asserted on
 * the first call of a collective the file left out.  Those are taken from
 * the built-in tree; returns the merged tree as JSON text (to free with
 * MPL_free) or NULL when out of memory. */
static char *with_builtin_collectives(MPIR_Csel_level_t level, struct json_object *tree,
                                      const char *builtin_json)
{
    struct json_object *builtin = json_tokener_parse(builtin_json);
    const char *text;
    char *out;

    {
        /* before the built-in collectives join it */
        size_t n = 2;
        json_object_object_foreach(tree, key, val) {
            (void) val;
            n += strlen(key) + 1;
        }
        MPL_free(user_colls[level]);
        user_colls[level] = MPL_malloc(n, MPL_MEM_COLL);
        if (user_colls[level]) {
            strcpy(user_colls[level], ",");
            json_object_object_foreach(tree, key2, val2) {
                (void) val2;
                if (strncmp(key2, "collective=", 11) == 0) {
                    strcat(user_colls[level], key2 + 11);
                    strcat(user_colls[level], ",");
                }
            }
        }
    }
    if (builtin && json_object_is_type(builtin, json_type_object)) {
        json_object_object_foreach(builtin, key, val) {
            if (!json_object_object_get_ex(tree, key, NULL))
                json_object_object_add(tree, key, json_object_get(val));
        }
    }
    text = json_object_to_json_string_ext(tree, JSON_C_TO_STRING_PLAIN);
    out = text ? MPL_strdup(text) : NULL;
    if (builtin)
        json_object_put(builtin);
    return out;
}

int MPIR_Csel_load(MPIR_Csel_level_t level, const char *file, const char *builtin_json,
                   void *(*create_container) (struct json_object *), void **csel)
{
    int mpi_errno = MPI_SUCCESS;
    const char *cvar = MPIR_Csel_level_cvar(level);
    char *buf = NULL, *merged = NULL;
    size_t len = 0;
    struct json_object *tree = NULL;

    if (file == NULL || file[0] == '\0')
        return MPIR_Csel_create_from_buf(builtin_json, create_container, csel);

    mpi_errno = read_file(file, &buf, &len);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = parse_json(buf, len, &tree);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = check_duplicate_keys(buf, len);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIR_Csel_check_tree(level, tree);
    if (mpi_errno == MPI_SUCCESS) {
        merged = with_builtin_collectives(level, tree, builtin_json);
        if (merged == NULL)
            MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    if (tree)
        json_object_put(tree);

    if (mpi_errno == MPI_SUCCESS) {
        mpi_errno = MPIR_Csel_create_from_buf(merged, create_container, csel);
        MPIR_Csel_user_file[level] = (mpi_errno == MPI_SUCCESS);
    } else if (MPIR_CVAR_COLL_SELECTION_TUNING_ERROR == MPIR_CVAR_COLL_SELECTION_TUNING_ERROR_warn) {
        char msg[4096];
        MPIR_Err_get_string(mpi_errno, msg, sizeof(msg), NULL);
        fprintf(stderr, "mpich-topo: warning: %s=%s is not used; the built-in %s tuning is, "
                "because (MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn):\n%s\n", cvar, file,
                MPIR_Csel_level_label(level), msg);
        fflush(stderr);
        mpi_errno = MPIR_Csel_create_from_buf(builtin_json, create_container, csel);
    } else {
        mpi_errno = csel_tuning_file(mpi_errno, cvar, file);
    }

    MPL_free(merged);
    MPL_free(buf);
    return mpi_errno;
}
