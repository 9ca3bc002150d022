/* SPDX-License-Identifier: MIT */
/* The health engine's state in the store: its checkpoint as one blob (what a restarted
 * controller starts from), and each element's history of states as rows kept for a bounded
 * time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_store_int.h"
#include "util.h"

int ctl_store_blob_put(ctl_store *s, const char *name, const void *data, size_t len, int64_t now)
{
    sqlite3_stmt *st = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO blobs (name, data, saved) VALUES (?, ?, ?)", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_blob64(st, 2, data, len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, now);
        rv = sqlite3_step(st) == SQLITE_DONE ? 0 : ctl_store_errno(s->db);
    }
    sqlite3_finalize(st);
    ctl_store_wunlock(s);
    return rv;
}

int ctl_store_blob_get(ctl_store *s, const char *name, void **pdata, size_t *plen)
{
    sqlite3_stmt *st = NULL;
    int rv = -EIO;
    *pdata = NULL;
    *plen = 0;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return -EIO;
    }
    if (sqlite3_prepare_v2(db, "SELECT data FROM blobs WHERE name = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            size_t len = (size_t)sqlite3_column_bytes(st, 0);
            *pdata = util_xmalloc(len + 1);
            memcpy(*pdata, sqlite3_column_blob(st, 0), len);
            *plen = len;
            rv = 0;
        } else {
            rv = rc == SQLITE_DONE ? -ENOENT : -EIO;
        }
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return rv;
}

int ctl_store_history_add(ctl_store *s, const ctl_hsample *v, size_t n, int64_t keep_after)
{
    sqlite3_stmt *st = NULL, *del = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        rv = ctl_store_errno(s->db);
        goto out;
    }
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO history (element, time, loss, state) "
                           "VALUES (?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "DELETE FROM history WHERE time < ?", -1, &del, NULL) !=
            SQLITE_OK) {
        goto rollback;
    }
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)v[i].element);
        sqlite3_bind_int64(st, 2, v[i].ms);
        sqlite3_bind_double(st, 3, v[i].loss);
        sqlite3_bind_int(st, 4, v[i].state);
        if (sqlite3_step(st) != SQLITE_DONE) {
            goto rollback;
        }
        sqlite3_reset(st);
    }
    sqlite3_bind_int64(del, 1, keep_after);
    if (sqlite3_step(del) != SQLITE_DONE ||
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        goto rollback;
    }
    rv = 0;
    goto out;
rollback:
    rv = rv == -EIO ? ctl_store_errno(s->db) : rv;
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_finalize(st);
    sqlite3_finalize(del);
    ctl_store_wunlock(s);
    return rv;
}

int ctl_store_history_all(ctl_store *s, int64_t after,
                          void (*fn)(void *user, const ctl_hsample *sample), void *user)
{
    sqlite3_stmt *st = NULL;
    int rv = -EIO;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return -EIO;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT element, time, loss, state FROM history WHERE time >= ? "
                           "ORDER BY element, time",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, after);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ctl_hsample x = {.element = (uint64_t)sqlite3_column_int64(st, 0),
                             .ms = sqlite3_column_int64(st, 1),
                             .loss = (float)sqlite3_column_double(st, 2),
                             .state = (uint8_t)sqlite3_column_int(st, 3)};
            fn(user, &x);
        }
        rv = rc == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return rv;
}
