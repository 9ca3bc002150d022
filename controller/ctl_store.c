/* SPDX-License-Identifier: MIT */
/* The controller's SQLite store. Writes go one at a time through one connection behind a
 * mutex (they are few and each is one short transaction); reads go through a pool of read-only
 * connections, each seeing the last commit, so that a read never waits behind a write. WAL
 * lets a write commit while readers read, and synchronous=FULL makes a commit survive a crash
 * of the machine, not only of the process, before the client hears of it. A write that cannot
 * have the store within busy_ms, or whose disk is full or read-only, changes nothing and says
 * which (-EBUSY, -ENOSPC, -EROFS); reads go on. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "ctl_store_int.h"
#include "util.h"

static const char *const schema =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES ('version', 0);"
    "INSERT OR IGNORE INTO meta VALUES ('window_tick', 0);"
    "CREATE TABLE IF NOT EXISTS denylist ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, element TEXT NOT NULL, scope TEXT NOT NULL,"
    " reason TEXT NOT NULL, source TEXT NOT NULL, author TEXT NOT NULL,"
    " created INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL);"
    /* an add looks for the entry identical to it (ctl_store_deny_find) */
    "CREATE INDEX IF NOT EXISTS denylist_same ON denylist (element, scope, start, end, author);"
    "CREATE TABLE IF NOT EXISTS audit ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, actor TEXT NOT NULL,"
    " action TEXT NOT NULL, entry INTEGER NOT NULL, detail TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS agents ("
    " host TEXT PRIMARY KEY, record TEXT NOT NULL, registered INTEGER NOT NULL);"
    /* the health engine's checkpoint (one blob a name) and its elements' history */
    "CREATE TABLE IF NOT EXISTS blobs (name TEXT PRIMARY KEY, data BLOB NOT NULL,"
    " saved INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS history (element INTEGER NOT NULL, time INTEGER NOT NULL,"
    " loss REAL NOT NULL, state INTEGER NOT NULL, PRIMARY KEY (element, time)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS history_time ON history (time);";

static int deny_add(ctl_store *s, ctl_deny *d, const ctl_change *at);
static bool applied(ctl_store *s, const ctl_change *at);
static int deny_del(ctl_store *s, int64_t id, const char *actor, const char *source,
                    const ctl_change *at);
static int window_tick(ctl_store *s, int64_t now, const ctl_change *at);

int64_t ctl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ctl_time_str(int64_t ms, char *dest, size_t destlen)
{
    /* the civil date from days since 1970 in arithmetic (H. Hinnant's civil_from_days):
     * gmtime_r takes the time zone lock, and pages of health with a time per link queued on it */
    int64_t secs = ms / 1000, days = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
    snprintf(dest, destlen, "%04lld-%02u-%02uT%02u:%02u:%02u.%03dZ", (long long)y, m, d,
             (unsigned)(sod / 3600), (unsigned)(sod / 60 % 60), (unsigned)(sod % 60),
             (int)(ms % 1000));
}

int64_t ctl_time_parse(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) {
            return -1;
        }
    }
    struct tm tm = {0};
    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
           &tm.tm_min, &tm.tm_sec);
    const char *p = s + sizeof(shape) - 1;
    int ms = 0;
    if (*p == '.') {
        int k = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, k++) {
            ms = k < 3 ? ms * 10 + (*p - '0') : ms;
        }
        if (k == 0) {
            return -1;
        }
        for (; k < 3; k++) {
            ms *= 10;
        }
    }
    if (strcmp(p, "Z") != 0) {
        return -1;
    }
    struct tm want = tm;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    struct tm back;
    if (t < 0 || !gmtime_r(&t, &back) || back.tm_year + 1900 != want.tm_year ||
        back.tm_mon + 1 != want.tm_mon || back.tm_mday != want.tm_mday ||
        back.tm_hour != want.tm_hour || back.tm_min != want.tm_min || back.tm_sec != want.tm_sec) {
        return -1;
    }
    return (int64_t)t * 1000 + ms;
}

int ctl_store_errno(sqlite3 *db)
{
    int rc = sqlite3_extended_errcode(db);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
        /* a disk remounted read-only shows as an I/O error of a write */
        return sqlite3_system_errno(db) == EROFS    ? -EROFS
               : sqlite3_system_errno(db) == ENOSPC ? -ENOSPC
                                                    : -EIO;
    default:
        return -EIO;
    }
}

const char *ctl_store_strerror(int rv)
{
    switch (rv) {
    case -EBUSY:
        return "the store is busy: another write held it past the bound";
    case -ENOSPC:
        return "the store's disk is full";
    case -EROFS:
        return "the store is read-only (its file or disk)";
    default:
        return "the store could not commit";
    }
}

void ctl_store_set_busy_ms(ctl_store *s, int busy_ms)
{
    s->busy_ms = busy_ms;
    sqlite3_busy_timeout(s->db, busy_ms);
}

int ctl_store_wlock(ctl_store *s)
{
    if (s->readonly) {
        return -EROFS;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += s->busy_ms / 1000;
    until.tv_nsec += (long)(s->busy_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return pthread_mutex_timedlock(&s->lock, &until) == 0 ? 0 : -EBUSY;
}

void ctl_store_wunlock(ctl_store *s)
{
    pthread_mutex_unlock(&s->lock);
}

sqlite3 *ctl_store_rget(ctl_store *s)
{
    if (s->memory) {
        pthread_mutex_lock(&s->lock);
        return s->db;
    }
    pthread_mutex_lock(&s->rlock);
    for (;;) {
        for (int i = 0; i < CTL_STORE_READERS; i++) {
            if (!s->rbusy[i]) {
                s->rbusy[i] = true;
                sqlite3 *db = s->readers[i];
                pthread_mutex_unlock(&s->rlock);
                if (!db) {
                    /* opened on first use, outside the pool's lock */
                    if (sqlite3_open_v2(s->path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                        NULL) != SQLITE_OK) {
                        util_log(UTIL_LOG_ERR, "store: a reader of %s: %s", s->path,
                                 db ? sqlite3_errmsg(db) : "no memory");
                        sqlite3_close(db);
                        pthread_mutex_lock(&s->rlock);
                        s->rbusy[i] = false;
                        pthread_cond_signal(&s->rfree);
                        pthread_mutex_unlock(&s->rlock);
                        return NULL;
                    }
                    /* only a checkpoint's brief restart or a recovery makes a reader wait */
                    sqlite3_busy_timeout(db, 2000);
                    pthread_mutex_lock(&s->rlock);
                    s->readers[i] = db;
                    pthread_mutex_unlock(&s->rlock);
                }
                return db;
            }
        }
        pthread_cond_wait(&s->rfree, &s->rlock);
    }
}

void ctl_store_rput(ctl_store *s, sqlite3 *db)
{
    if (s->memory) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    pthread_mutex_lock(&s->rlock);
    for (int i = 0; i < CTL_STORE_READERS; i++) {
        if (s->readers[i] == db) {
            s->rbusy[i] = false;
        }
    }
    pthread_cond_signal(&s->rfree);
    pthread_mutex_unlock(&s->rlock);
}

/* Whether |path| is a store there already on a disk mounted read-only. */
static bool on_readonly_disk(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        snprintf(dir, sizeof(dir), ".");
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    struct statvfs vfs;
    return access(path, F_OK) == 0 && statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

/* "file:PATH?immutable=1", the path's characters a URI gives a meaning to escaped. */
static char *immutable_uri(const char *path)
{
    util_buf b = {0};
    util_buf_lit(&b, "file:");
    for (const char *p = path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#') {
            util_buf_printf(&b, "%%%02X", (unsigned char)*p);
        } else {
            util_buf_printf(&b, "%c", *p);
        }
    }
    util_buf_lit(&b, "?immutable=1");
    return b.s;
}

int ctl_store_open(const char *path, ctl_store **pstore, char *err, size_t errlen)
{
    ctl_store *s = util_xcalloc(1, sizeof(*s));
    char *msg = NULL;
    s->memory = strcmp(path, ":memory:") == 0 || path[0] == '\0';
    s->busy_ms = CTL_STORE_BUSY_MS;
    s->readonly = !s->memory && on_readonly_disk(path);
    int rc;
    if (s->readonly) {
        /* the entries as they were, served; no write can be taken (503, -EROFS) */
        s->path = immutable_uri(path);
        rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        util_log(UTIL_LOG_WARNING,
                 "store %s is on a read-only disk: its reads are served, every "
                 "write is refused (503) until it is writable and the controller restarted",
                 path);
        goto opened;
    }
    s->path = util_xstrdup(path);
    rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(s->db, s->busy_ms);
        rc = sqlite3_exec(s->db,
                          "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                          "PRAGMA foreign_keys=ON;",
                          NULL, NULL, &msg);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(s->db, schema, NULL, NULL, &msg);
    }
opened:
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        sqlite3_close(s->db);
        free(s->path);
        free(s);
        return -EIO;
    }
    sqlite3_stmt *st;
    int64_t n = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM denylist", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    atomic_init(&s->ndeny, (size_t)n);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->rlock, NULL);
    pthread_cond_init(&s->rfree, NULL);
    *pstore = s;
    return 0;
}

void ctl_store_close(ctl_store *s)
{
    if (s) {
        for (int i = 0; i < CTL_STORE_READERS; i++) {
            sqlite3_close(s->readers[i]);
        }
        sqlite3_close(s->db);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->rlock);
        pthread_cond_destroy(&s->rfree);
        free(s->path);
        free(s);
    }
}

/* 0, or the errno of the failure (ctl_store_errno) */
static int exec(ctl_store *s, const char *sql)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : ctl_store_errno(s->db);
}

static int audit(ctl_store *s, int64_t time, const char *actor, const char *action, int64_t entry,
                 const char *detail)
{
    sqlite3_stmt *st;
    int rv = -EIO;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO audit (time, actor, action, entry, detail) "
                           "VALUES (?, ?, ?, ?, ?)",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, time);
        sqlite3_bind_text(st, 2, actor, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, action, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, entry);
        sqlite3_bind_text(st, 5, detail, -1, SQLITE_STATIC);
        rv = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    return rv;
}

static int set_meta(ctl_store *s, const char *key, int64_t value)
{
    sqlite3_stmt *st;
    int rv = -EIO;
    if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta VALUES (?, ?)", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, value);
        rv = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    return rv;
}

/* Whether the store holds replicated change |at| already; under the write lock, so that the
 * leader's own apply and its log's follower cannot both take it */
static bool applied(ctl_store *s, const ctl_change *at)
{
    sqlite3_stmt *st;
    bool yes = false;
    if (at && sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'version'", -1, &st,
                                 NULL) == SQLITE_OK) {
        yes = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) >= at->version;
        sqlite3_finalize(st);
    }
    return yes;
}

/* The next version: one more, or a replicated change's own version and epoch (ctl_store_apply) */
static int bump(ctl_store *s, const ctl_change *at)
{
    if (!at) {
        return exec(s, "UPDATE meta SET value = value + 1 WHERE key = 'version'");
    }
    return set_meta(s, "version", at->version) == 0 && set_meta(s, "epoch", at->epoch) == 0 ? 0
                                                                                            : -EIO;
}

json_object *ctl_deny_json(const ctl_deny *d, int64_t now)
{
    char t[40];
    json_object *j = json_object_new_object();
    bool active = !(d->start || d->end) || (d->start <= now && now < d->end);
    json_object_object_add(j, "id", json_object_new_int64(d->id));
    json_object_object_add(j, "element", json_object_new_string(d->element));
    json_object_object_add(j, "scope", json_object_new_string(d->scope));
    json_object_object_add(j, "reason", json_object_new_string(d->reason));
    json_object_object_add(j, "source", json_object_new_string(d->source));
    json_object_object_add(j, "author", json_object_new_string(d->author));
    ctl_time_str(d->created, t, sizeof(t));
    json_object_object_add(j, "created", json_object_new_string(t));
    if (d->start || d->end) {
        json_object *w = json_object_new_object();
        ctl_time_str(d->start, t, sizeof(t));
        json_object_object_add(w, "start", json_object_new_string(t));
        ctl_time_str(d->end, t, sizeof(t));
        json_object_object_add(w, "end", json_object_new_string(t));
        json_object_object_add(j, "window", w);
    }
    json_object_object_add(j, "active", json_object_new_boolean(active));
    return j;
}

void ctl_store_deny_set_max(ctl_store *s, size_t max)
{
    pthread_mutex_lock(&s->lock);
    s->max_deny = max;
    pthread_mutex_unlock(&s->lock);
}

size_t ctl_store_deny_count(ctl_store *s)
{
    return atomic_load(&s->ndeny);
}

int ctl_store_deny_add(ctl_store *s, ctl_deny *d)
{
    d->created = ctl_now_ms();
    return deny_add(s, d, NULL);
}

/* |at| NULL: a new id and the next version; else the change's id, version and epoch */
static int deny_add(ctl_store *s, ctl_deny *d, const ctl_change *at)
{
    sqlite3_stmt *st = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    /* under the lock, so that adds racing past a check outside cannot go over the bound */
    if (!at && s->max_deny && atomic_load(&s->ndeny) >= s->max_deny) {
        rv = -EDQUOT;
        goto out;
    }
    if (applied(s, at)) {
        rv = 1; /* a replica took it already (the leader, or its log) */
        goto out;
    }
    rv = exec(s, "BEGIN IMMEDIATE");
    if (rv != 0) {
        goto out;
    }
    rv = -EIO;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO denylist (element, scope, reason, source, author, "
                           "created, start, end, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        goto rollback;
    }
    if (at) {
        sqlite3_bind_int64(st, 9, d->id);
    } else {
        sqlite3_bind_null(st, 9);
    }
    sqlite3_bind_text(st, 1, d->element, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, d->scope, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, d->reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, d->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, d->author, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, d->created);
    sqlite3_bind_int64(st, 7, d->start);
    sqlite3_bind_int64(st, 8, d->end);
    if (sqlite3_step(st) != SQLITE_DONE) {
        goto rollback;
    }
    d->id = sqlite3_last_insert_rowid(s->db);
    json_object *j = ctl_deny_json(d, d->created);
    if (d->forced) {
        json_object_object_add(j, "forced", json_object_new_boolean(true));
    }
    int a = audit(s, d->created, d->author, "add", d->id, json_object_to_json_string(j));
    json_object_put(j);
    if (a != 0 || bump(s, at) != 0 || exec(s, "COMMIT") != 0) {
        goto rollback;
    }
    atomic_fetch_add(&s->ndeny, 1);
    rv = 0;
    goto out;
rollback:
    /* the failure's own errno, before ROLLBACK clears it */
    rv = rv == -EIO ? ctl_store_errno(s->db) : rv;
    exec(s, "ROLLBACK");
out:
    sqlite3_finalize(st);
    ctl_store_wunlock(s);
    return rv;
}

int ctl_store_deny_del(ctl_store *s, int64_t id, const char *actor)
{
    return ctl_store_deny_del_if(s, id, actor, NULL);
}

int ctl_store_deny_del_if(ctl_store *s, int64_t id, const char *actor, const char *source)
{
    return deny_del(s, id, actor, source, NULL);
}

static int deny_del(ctl_store *s, int64_t id, const char *actor, const char *source,
                    const ctl_change *at)
{
    sqlite3_stmt *st = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    if (applied(s, at)) {
        rv = 1; /* a replica took it already (the leader, or its log) */
        goto out;
    }
    rv = exec(s, "BEGIN IMMEDIATE");
    if (rv != 0) {
        goto out;
    }
    rv = -EIO;
    if (sqlite3_prepare_v2(s->db, "SELECT source FROM denylist WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        goto rollback;
    }
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        rv = -ENOENT;
        goto rollback;
    }
    if (rc != SQLITE_ROW) {
        goto rollback;
    }
    /* the owner is read and the row removed in one transaction: a check apart could pass for
     * an entry replaced in between */
    if (source && strcmp((const char *)sqlite3_column_text(st, 0), source) != 0) {
        rv = -EPERM;
        goto rollback;
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->db, "DELETE FROM denylist WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        goto rollback;
    }
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) != SQLITE_DONE) {
        goto rollback;
    }
    if (audit(s, at ? at->time : ctl_now_ms(), actor, "remove", id, "{}") != 0 ||
        bump(s, at) != 0 || exec(s, "COMMIT") != 0) {
        goto rollback;
    }
    atomic_fetch_sub(&s->ndeny, 1);
    rv = 0;
    goto out;
rollback:
    /* the failure's own errno, before ROLLBACK clears it */
    rv = rv == -EIO ? ctl_store_errno(s->db) : rv;
    exec(s, "ROLLBACK");
out:
    sqlite3_finalize(st);
    ctl_store_wunlock(s);
    return rv;
}

static void row_deny(sqlite3_stmt *st, ctl_deny *d)
{
    memset(d, 0, sizeof(*d));
    d->id = sqlite3_column_int64(st, 0);
    snprintf(d->element, sizeof(d->element), "%s", (const char *)sqlite3_column_text(st, 1));
    snprintf(d->scope, sizeof(d->scope), "%s", (const char *)sqlite3_column_text(st, 2));
    snprintf(d->reason, sizeof(d->reason), "%s", (const char *)sqlite3_column_text(st, 3));
    snprintf(d->source, sizeof(d->source), "%s", (const char *)sqlite3_column_text(st, 4));
    snprintf(d->author, sizeof(d->author), "%s", (const char *)sqlite3_column_text(st, 5));
    d->created = sqlite3_column_int64(st, 6);
    d->start = sqlite3_column_int64(st, 7);
    d->end = sqlite3_column_int64(st, 8);
}

/* Calls |fn| with entry |id|, or every entry (id 0) oldest first. 0 or -EIO. */
static int deny_rows(ctl_store *s, int64_t id, void (*fn)(void *user, const ctl_deny *d),
                     void *user)
{
    sqlite3_stmt *st;
    int rv = -EIO;
    const char *sql = id ? "SELECT id, element, scope, reason, source, author, created, start, "
                           "end FROM denylist WHERE id = ?"
                         : "SELECT id, element, scope, reason, source, author, created, start, "
                           "end FROM denylist ORDER BY id";
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return -EIO;
    }
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (id) {
            sqlite3_bind_int64(st, 1, id);
        }
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ctl_deny d;
            row_deny(st, &d);
            fn(user, &d);
        }
        rv = rc == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return rv;
}

typedef struct json_rows {
    json_object *a;
    int64_t now;
} json_rows;

static void json_row(void *user, const ctl_deny *d)
{
    json_rows *r = user;
    json_object_array_add(r->a, ctl_deny_json(d, r->now));
}

static json_object *deny_query(ctl_store *s, int64_t id)
{
    json_rows r = {json_object_new_array(), ctl_now_ms()};
    if (deny_rows(s, id, json_row, &r) != 0) {
        json_object_put(r.a);
        return NULL;
    }
    return r.a;
}

typedef struct vec_rows {
    ctl_deny *v;
    size_t n, cap;
} vec_rows;

static void vec_row(void *user, const ctl_deny *d)
{
    vec_rows *r = user;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = util_xrealloc(r->v, r->cap * sizeof(*r->v));
    }
    r->v[r->n++] = *d;
}

int ctl_store_deny_all(ctl_store *s, ctl_deny **pv, size_t *pn)
{
    vec_rows r = {0};
    if (deny_rows(s, 0, vec_row, &r) != 0) {
        free(r.v);
        return -EIO;
    }
    *pv = r.v;
    *pn = r.n;
    return 0;
}

json_object *ctl_store_deny_list(ctl_store *s)
{
    return deny_query(s, 0);
}

#define DENY_COLUMNS "SELECT id, element, scope, reason, source, author, created, start, end "

int ctl_store_deny_find(ctl_store *s, const ctl_deny *d, ctl_deny *pfound)
{
    sqlite3_stmt *st;
    int rv = -EIO;
    pthread_mutex_lock(&s->lock);
    if (sqlite3_prepare_v2(s->db,
                           DENY_COLUMNS "FROM denylist WHERE element = ? AND scope = ? AND "
                                        "start = ? AND end = ? AND author = ? ORDER BY id LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, d->element, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, d->scope, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, d->start);
        sqlite3_bind_int64(st, 4, d->end);
        sqlite3_bind_text(st, 5, d->author, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            row_deny(st, pfound);
            rv = 1;
        } else if (rc == SQLITE_DONE) {
            rv = 0;
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return rv;
}

json_object *ctl_store_deny_page(ctl_store *s, int64_t after, unsigned limit, int64_t *pnext)
{
    sqlite3_stmt *st;
    json_object *a = NULL;
    int64_t now = ctl_now_ms(), last = 0;
    unsigned n = 0;
    *pnext = 0;
    pthread_mutex_lock(&s->lock);
    if (sqlite3_prepare_v2(s->db, DENY_COLUMNS "FROM denylist WHERE id > ? ORDER BY id LIMIT ?", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, after);
        sqlite3_bind_int64(st, 2, (int64_t)limit + 1); /* one more says whether more follow */
        a = json_object_new_array();
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (n++ == limit) {
                *pnext = last;
                continue;
            }
            ctl_deny d;
            row_deny(st, &d);
            last = d.id;
            json_object_array_add(a, ctl_deny_json(&d, now));
        }
        if (rc != SQLITE_DONE) {
            json_object_put(a);
            a = NULL;
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return a;
}

json_object *ctl_store_deny_get(ctl_store *s, int64_t id)
{
    if (id <= 0) {
        return NULL; /* ids start at 1; 0 asks deny_query for them all */
    }
    json_object *a = deny_query(s, id);
    json_object *one = NULL;
    if (a && json_object_array_length(a) == 1) {
        one = json_object_get(json_object_array_get_idx(a, 0));
    }
    json_object_put(a);
    return one;
}

/* One value of the meta table read on a reader connection, |dflt| when it cannot be */
static int64_t meta_read(ctl_store *s, const char *key, int64_t dflt)
{
    sqlite3_stmt *st;
    int64_t v = dflt;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return dflt;
    }
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            v = sqlite3_column_int64(st, 0);
        }
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return v;
}

int64_t ctl_store_version(ctl_store *s)
{
    return meta_read(s, "version", -1);
}

json_object *ctl_store_audit(ctl_store *s, int64_t after, unsigned limit)
{
    sqlite3_stmt *st;
    json_object *out = NULL;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return NULL;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT id, time, actor, action, entry, detail FROM audit "
                           "WHERE id > ? ORDER BY id LIMIT ?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, after);
        sqlite3_bind_int64(st, 2, limit);
        out = json_object_new_array();
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            char t[40];
            json_object *r = json_object_new_object();
            json_object_object_add(r, "id", json_object_new_int64(sqlite3_column_int64(st, 0)));
            ctl_time_str(sqlite3_column_int64(st, 1), t, sizeof(t));
            json_object_object_add(r, "time", json_object_new_string(t));
            json_object_object_add(
                r, "actor", json_object_new_string((const char *)sqlite3_column_text(st, 2)));
            json_object_object_add(
                r, "action", json_object_new_string((const char *)sqlite3_column_text(st, 3)));
            json_object_object_add(r, "entry", json_object_new_int64(sqlite3_column_int64(st, 4)));
            json_object *detail = json_tokener_parse((const char *)sqlite3_column_text(st, 5));
            json_object_object_add(r, "detail", detail);
            json_object_array_add(out, r);
        }
        if (rc != SQLITE_DONE) {
            json_object_put(out);
            out = NULL;
        }
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return out;
}

int ctl_store_window_tick(ctl_store *s, int64_t now)
{
    return window_tick(s, now, NULL);
}

/* The entries whose window starts or ends after the last tick and by ?1: what a tick records
 * (window_tick) and what one would (ctl_store_window_due) */
#define WINDOW_CROSSED                                                                             \
    "FROM denylist, (SELECT value AS t FROM meta WHERE key = 'window_tick') WHERE "                \
    "(start > t AND start <= ?1) OR (end > t AND end <= ?1)"

static int window_tick(ctl_store *s, int64_t now, const ctl_change *at)
{
    sqlite3_stmt *st = NULL, *up = NULL;
    int n = 0, rv = -EIO;
    rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    if (applied(s, at)) {
        rv = 1; /* a replica took it already (the leader, or its log) */
        goto out;
    }
    rv = exec(s, "BEGIN IMMEDIATE");
    if (rv != 0) {
        goto out;
    }
    rv = -EIO;
    /* from the last tick, kept in the store: a restart neither misses a boundary that passed
     * while the controller was down nor records one twice */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, start > t AND start <= ?1 " WINDOW_CROSSED " ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK) {
        goto rollback;
    }
    sqlite3_bind_int64(st, 1, now);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bool starts = sqlite3_column_int(st, 1) != 0;
        if (audit(s, now, "controller", starts ? "window start" : "window end",
                  sqlite3_column_int64(st, 0), "{}") != 0) {
            goto rollback;
        }
        n++;
    }
    if (rc != SQLITE_DONE ||
        sqlite3_prepare_v2(s->db, "UPDATE meta SET value = ? WHERE key = 'window_tick'", -1, &up,
                           NULL) != SQLITE_OK) {
        goto rollback;
    }
    sqlite3_bind_int64(up, 1, now);
    /* a replicated tick bumps the version as the leader's did, even with nothing here */
    if (sqlite3_step(up) != SQLITE_DONE || ((n || at) && bump(s, at) != 0) ||
        exec(s, "COMMIT") != 0) {
        goto rollback;
    }
    rv = n;
    goto out;
rollback:
    /* the failure's own errno, before ROLLBACK clears it */
    rv = rv == -EIO ? ctl_store_errno(s->db) : rv;
    exec(s, "ROLLBACK");
out:
    sqlite3_finalize(st);
    sqlite3_finalize(up);
    ctl_store_wunlock(s);
    return rv;
}

int64_t ctl_store_next_boundary(ctl_store *s, int64_t now)
{
    sqlite3_stmt *st;
    int64_t next = 0;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return 0;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT MIN(CASE WHEN start > ?1 THEN start ELSE end END) FROM "
                           "denylist WHERE start > ?1 OR end > ?1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now);
        if (sqlite3_step(st) == SQLITE_ROW) {
            next = sqlite3_column_int64(st, 0);
        }
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return next;
}

int ctl_store_agent_put(ctl_store *s, const char *host, const char *record, int64_t registered)
{
    sqlite3_stmt *st = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = -EIO;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO agents (host, record, registered) VALUES (?, ?, ?) "
                           "ON CONFLICT (host) DO UPDATE SET record = excluded.record, "
                           "registered = excluded.registered",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, record, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, registered);
        rv = sqlite3_step(st) == SQLITE_DONE ? 0 : ctl_store_errno(s->db);
    }
    sqlite3_finalize(st);
    ctl_store_wunlock(s);
    return rv;
}

int ctl_store_agent_all(ctl_store *s,
                        void (*fn)(void *user, const char *host, const char *record,
                                   int64_t registered),
                        void *user)
{
    sqlite3_stmt *st;
    int rv = -EIO;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return -EIO;
    }
    if (sqlite3_prepare_v2(db, "SELECT host, record, registered FROM agents ORDER BY host", -1, &st,
                           NULL) == SQLITE_OK) {
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            fn(user, (const char *)sqlite3_column_text(st, 0),
               (const char *)sqlite3_column_text(st, 1), sqlite3_column_int64(st, 2));
        }
        rv = rc == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return rv;
}

int ctl_store_apply(ctl_store *s, const ctl_change *c)
{
    if (c->version <= ctl_store_version(s)) {
        return 1; /* applied already: a replica reads a change again after a restart */
    }
    switch (c->op) {
    case CTL_CHANGE_ADD: {
        ctl_deny d = c->entry;
        return deny_add(s, &d, c);
    }
    case CTL_CHANGE_REMOVE: {
        /* removed here already (a resync came first) is no fault: the version moves on */
        int rv = deny_del(s, c->id, c->actor, NULL, c);
        return rv == -ENOENT ? ctl_store_resync_version(s, c->version, c->epoch) : rv;
    }
    case CTL_CHANGE_TICK:
        return window_tick(s, c->time, c) < 0 ? -EIO : 0;
    }
    return -EINVAL;
}

int ctl_store_resync_version(ctl_store *s, int64_t version, int64_t epoch)
{
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    ctl_change at = {.version = version, .epoch = epoch};
    rv = bump(s, &at);
    ctl_store_wunlock(s);
    return rv;
}

int64_t ctl_store_epoch(ctl_store *s)
{
    return meta_read(s, "epoch", 0);
}

int ctl_store_resync(ctl_store *s, const ctl_deny *v, size_t n, int64_t version, int64_t epoch,
                     int64_t window_tick)
{
    sqlite3_stmt *st = NULL;
    int rv = ctl_store_wlock(s);
    if (rv != 0) {
        return rv;
    }
    rv = exec(s, "BEGIN IMMEDIATE");
    if (rv != 0) {
        goto out;
    }
    rv = -EIO;
    if (exec(s, "DELETE FROM denylist") != 0 ||
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO denylist (id, element, scope, reason, source, author, "
                           "created, start, end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        goto rollback;
    }
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, v[i].id);
        sqlite3_bind_text(st, 2, v[i].element, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, v[i].scope, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, v[i].reason, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, v[i].source, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, v[i].author, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, v[i].created);
        sqlite3_bind_int64(st, 8, v[i].start);
        sqlite3_bind_int64(st, 9, v[i].end);
        if (sqlite3_step(st) != SQLITE_DONE) {
            goto rollback;
        }
    }
    char detail[96];
    snprintf(detail, sizeof(detail), "{\"entries\":%zu,\"version\":%lld,\"epoch\":%lld}", n,
             (long long)version, (long long)epoch);
    ctl_change at = {.version = version, .epoch = epoch};
    if (audit(s, ctl_now_ms(), "etcd", "resync", 0, detail) != 0 || bump(s, &at) != 0 ||
        set_meta(s, "window_tick", window_tick) != 0 || exec(s, "COMMIT") != 0) {
        goto rollback;
    }
    atomic_store(&s->ndeny, n);
    rv = 0;
    goto out;
rollback:
    rv = rv == -EIO ? ctl_store_errno(s->db) : rv;
    exec(s, "ROLLBACK");
out:
    sqlite3_finalize(st);
    ctl_store_wunlock(s);
    return rv;
}

int ctl_store_window_due(ctl_store *s, int64_t now)
{
    sqlite3_stmt *st;
    int n = -EIO;
    sqlite3 *db = ctl_store_rget(s);
    if (!db) {
        return -EIO;
    }
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) " WINDOW_CROSSED, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now);
        if (sqlite3_step(st) == SQLITE_ROW) {
            n = sqlite3_column_int(st, 0);
        }
    }
    sqlite3_finalize(st);
    ctl_store_rput(s, db);
    return n;
}

int64_t ctl_store_window_last(ctl_store *s)
{
    return meta_read(s, "window_tick", 0);
}
