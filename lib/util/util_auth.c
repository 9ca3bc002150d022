/* SPDX-License-Identifier: MIT */
/* Tokens: loaded once from a file only its owner may read, kept as SHA-256 digests in a hash
 * table, looked up per request in time that depends on neither their number nor a guess. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "util.h"

/* 262,144 tokens of 40 bytes with their names are 15 MiB; four times that is no tokens file. */
#define AUTH_FILE_MAX (64u << 20)

static const char *const roles[] = {"none",      "reader",   "agent", "prober",
                                    "localizer", "operator", "admin"};

const char *util_role_name(util_role role)
{
    return role <= UTIL_ROLE_ADMIN ? roles[role] : "none";
}

util_role util_role_parse(const char *name)
{
    for (unsigned r = UTIL_ROLE_READER; r <= UTIL_ROLE_ADMIN; r++) {
        if (strcmp(name, roles[r]) == 0) {
            return (util_role)r;
        }
    }
    return UTIL_ROLE_NONE;
}

/* libcrypto's SHA-256 rather than one of our own: it is linked already (the https client),
 * reviewed, and uses the CPU's SHA instructions where there are some. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

/* Fetched once: EVP_sha256() would look the algorithm up in the provider on every digest,
 * which costs as much as hashing a token. */
static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void util_sha256(const void *data, size_t datalen, uint8_t digest[32])
{
    unsigned int len = 0;
    pthread_once(&sha256_once, sha256_fetch);
    int ok = sha256_md && EVP_Digest(data, datalen, digest, &len, sha256_md, NULL);
    /* fails only without memory or without the default provider: nothing could authenticate */
    if (!ok || len != 32) {
        abort();
    }
}

void util_auth_free(util_auth *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->tokens[i].name);
    }
    free(a->tokens);
    free(a->slots);
    *a = (util_auth){0};
}

/* The digest's first 8 bytes pick the slot: SHA-256 spreads any set of secrets evenly. */
static size_t slot_of(const uint8_t digest[32], size_t mask)
{
    uint64_t h = 0;
    for (unsigned i = 0; i < 8; i++) {
        h = h << 8 | digest[i];
    }
    return (size_t)h & mask;
}

/* The slot holding |digest|, or the empty one where it would go. The table is never more than
 * half full, so a probe ends after a couple of slots whatever the number of tokens. */
static size_t probe(const util_auth *a, const uint8_t digest[32])
{
    size_t mask = a->nslots - 1, s = slot_of(digest, mask);
    while (a->slots[s] && CRYPTO_memcmp(a->tokens[a->slots[s] - 1].digest, digest, 32) != 0) {
        s = (s + 1) & mask;
    }
    return s;
}

static void rehash(util_auth *a, size_t nslots)
{
    free(a->slots);
    a->slots = util_xcalloc(nslots, sizeof(*a->slots));
    a->nslots = nslots;
    for (size_t i = 0; i < a->n; i++) {
        a->slots[probe(a, a->tokens[i].digest)] = (uint32_t)(i + 1);
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The 64 hex digits at |s| (and nothing after) into |digest|; 0 or -EINVAL. */
static int parse_digest(const char *s, uint8_t digest[32])
{
    if (strlen(s) != 64) {
        return -EINVAL;
    }
    for (unsigned i = 0; i < 32; i++) {
        int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return -EINVAL;
        }
        digest[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int util_auth_parse(const char *data, size_t datalen, const char *what, util_auth *a, char *err,
                    size_t errlen)
{
    int rv = 0;
    unsigned *lines = NULL; /* each token's line, for the duplicates' message */
    size_t cap = 0;
    *a = (util_auth){0};
    const char *nul = memchr(data, '\0', datalen);
    if (nul) {
        snprintf(err, errlen, "%s: a NUL byte at offset %zu: a tokens file is text", what,
                 (size_t)(nul - data));
        return -EINVAL;
    }
    char *text = util_xmalloc(datalen + 1);
    memcpy(text, data, datalen);
    text[datalen] = '\0';
    rehash(a, 16);
    unsigned line = 0;
    char *cursor = text;
    for (char *l; (l = util_line_next(&cursor)) != NULL;) {
        line++;
        char *f[4] = {0};
        unsigned nf = 0;
        char *s2 = NULL;
        for (char *w = strtok_r(l, " \t\r", &s2); w && nf < 4; w = strtok_r(NULL, " \t\r", &s2)) {
            f[nf++] = w;
        }
        if (nf == 0 || f[0][0] == '#') {
            continue;
        }
        util_role role = nf >= 2 ? util_role_parse(f[1]) : UTIL_ROLE_NONE;
        size_t toklen = strlen(f[0]);
        if (nf != 3 || role == UTIL_ROLE_NONE || toklen < UTIL_AUTH_TOKEN_MIN ||
            toklen > UTIL_AUTH_TOKEN_MAX) {
            snprintf(err, errlen,
                     "%s:%u: want 'TOKEN ROLE NAME' with a token of %d to %d characters (or "
                     "'sha256:' and its 64 hex digits) and a role of reader, agent, prober, "
                     "localizer, operator or admin",
                     what, line, UTIL_AUTH_TOKEN_MIN, UTIL_AUTH_TOKEN_MAX);
            rv = -EINVAL;
            goto out;
        }
        uint8_t digest[32];
        if (strncmp(f[0], "sha256:", 7) == 0) {
            if (parse_digest(f[0] + 7, digest) != 0) {
                snprintf(err, errlen,
                         "%s:%u: a hashed token is 'sha256:' and the 64 hex digits of the "
                         "secret's SHA-256 (see mrcfab-tokens(5))",
                         what, line);
                rv = -EINVAL;
                goto out;
            }
        } else {
            util_sha256(f[0], toklen, digest);
        }
        size_t s = probe(a, digest);
        if (a->slots[s]) {
            const util_token *t = &a->tokens[a->slots[s] - 1];
            snprintf(err, errlen, "%s:%u: this token is already given to %s on line %u", what, line,
                     t->name, lines[a->slots[s] - 1]);
            rv = -EINVAL;
            goto out;
        }
        if (a->n == cap) {
            cap = cap ? 2 * cap : 64;
            a->tokens = util_xrealloc(a->tokens, cap * sizeof(*a->tokens));
            lines = util_xrealloc(lines, cap * sizeof(*lines));
        }
        util_token *t = &a->tokens[a->n];
        *t = (util_token){.role = role, .name = util_xstrdup(f[2])};
        memcpy(t->digest, digest, 32);
        lines[a->n] = line;
        a->slots[s] = (uint32_t)++a->n;
        if (2 * a->n > a->nslots) {
            rehash(a, 2 * a->nslots);
        }
    }
    if (a->n == 0) {
        snprintf(err, errlen, "%s: no token", what);
        rv = -EINVAL;
    }
out:
    OPENSSL_cleanse(text, datalen);
    free(text);
    free(lines);
    if (rv != 0) {
        util_auth_free(a);
    }
    return rv;
}

static void user_name(uid_t uid, char *dest, size_t destlen)
{
    char buf[1024];
    struct passwd pw, *p = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &p) == 0 && p) {
        snprintf(dest, destlen, "%s (uid %u)", p->pw_name, (unsigned)uid);
    } else {
        snprintf(dest, destlen, "uid %u", (unsigned)uid);
    }
}

/* As OpenSSH's StrictModes: a file of secrets that others could read (or rewrite) is refused
 * rather than trusted, so that a mistake is seen at once and not after a leak. */
static int check_file(const char *path, const struct stat *st, char *err, size_t errlen)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "tokens file %s is not a regular file", path);
        return -EINVAL;
    }
    if (st->st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
        snprintf(err, errlen,
                 "tokens file %s is mode %04o: it must not be readable or writable by group or "
                 "others (chmod 600)",
                 path, (unsigned)(st->st_mode & 07777));
        return -EPERM;
    }
    if (st->st_uid != geteuid()) {
        char owner[300], me[300];
        user_name(st->st_uid, owner, sizeof(owner));
        user_name(geteuid(), me, sizeof(me));
        snprintf(err, errlen,
                 "tokens file %s is owned by %s: it must be owned by %s, the user this program "
                 "runs as (chown)",
                 path, owner, me);
        return -EPERM;
    }
    if (st->st_size > (off_t)AUTH_FILE_MAX) {
        snprintf(err, errlen, "tokens file %s is %lld bytes: a tokens file is at most %u MiB", path,
                 (long long)st->st_size, AUTH_FILE_MAX >> 20);
        return -EFBIG;
    }
    return 0;
}

int util_auth_load(const char *path, util_auth *a, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    struct stat st;
    int rv = 0;
    *a = (util_auth){0};
    /* the checks are made on the file opened, not on a name that could change under us */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        rv = -errno;
        snprintf(err, errlen, "tokens file %s: %s", path, strerror(errno));
        goto out;
    }
    rv = check_file(path, &st, err, errlen);
    if (rv != 0) {
        goto out;
    }
    size_t cap = (size_t)st.st_size + 1;
    data = util_xmalloc(cap);
    for (;;) {
        if (len == cap) {
            /* grew after fstat: still bounded */
            if (cap > AUTH_FILE_MAX) {
                snprintf(err, errlen, "tokens file %s is over %u MiB", path, AUTH_FILE_MAX >> 20);
                rv = -EFBIG;
                goto out;
            }
            cap *= 2;
            data = util_xrealloc(data, cap);
        }
        ssize_t got = read(fd, data + len, cap - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            rv = -errno;
            snprintf(err, errlen, "tokens file %s: %s", path, strerror(errno));
            goto out;
        }
        if (got == 0) {
            break;
        }
        len += (size_t)got;
    }
    rv = util_auth_parse(data, len, path, a, err, errlen);
out:
    if (data) {
        OPENSSL_cleanse(data, len);
    }
    free(data);
    if (fd >= 0) {
        close(fd);
    }
    return rv;
}

const util_token *util_auth_findn(const util_auth *a, const char *bearer, size_t bearerlen)
{
    /* outside the bounds no token of the file can match: a miss, without hashing 32 KiB */
    if (!bearer || !a->nslots || bearerlen < UTIL_AUTH_TOKEN_MIN ||
        bearerlen > UTIL_AUTH_TOKEN_MAX) {
        return NULL;
    }
    uint8_t digest[32];
    util_sha256(bearer, bearerlen, digest);
    size_t s = probe(a, digest);
    return a->slots[s] ? &a->tokens[a->slots[s] - 1] : NULL;
}

const util_token *util_auth_find(const util_auth *a, const char *bearer)
{
    /* strnlen: a long bearer is read no further than one byte past the bound */
    return bearer ? util_auth_findn(a, bearer, strnlen(bearer, UTIL_AUTH_TOKEN_MAX + 1)) : NULL;
}
