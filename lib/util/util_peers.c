/* SPDX-License-Identifier: MIT */
#include "util_peers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* the length of |url|'s scheme://authority, or 0 when it is no http(s) URL (an authority with
 * user information, a space or a control character is none: a list's URL is a host[:port]) */
static size_t base_len(const char *url, bool *ptls)
{
    static const char http[] = "http://", https[] = "https://";
    size_t skip;
    if (strncasecmp(url, https, sizeof(https) - 1) == 0) {
        skip = sizeof(https) - 1;
        *ptls = true;
    } else if (strncasecmp(url, http, sizeof(http) - 1) == 0) {
        skip = sizeof(http) - 1;
        *ptls = false;
    } else {
        return 0;
    }
    size_t alen = strcspn(url + skip, "/?#,");
    for (size_t i = 0; i < alen; i++) {
        unsigned char c = (unsigned char)url[skip + i];
        if (c <= ' ' || c >= 0x7f || c == '@' || c == '\\') {
            return 0;
        }
    }
    return alen ? skip + alen : 0;
}

static char *dup(const char *s, size_t len)
{
    char *d = util_xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static bool is_tls(const char *url)
{
    bool tls = false;
    base_len(url, &tls);
    return tls;
}

int util_peers_parse(util_peers *p, const char *list, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    const char *s = list ? list : "";
    for (;;) {
        size_t len = strcspn(s, ","), item = len;
        /* "http://ctl:8080/" is written often enough: its trailing slashes go */
        while (len > 0 && s[len - 1] == '/' && !(len >= 3 && memcmp(s + len - 3, "://", 3) == 0)) {
            len--;
        }
        bool tls = false;
        size_t blen = len ? base_len(s, &tls) : 0;
        if (len == 0 || blen == 0 || blen != len) {
            snprintf(err, errlen,
                     "'%.*s' is not a base URL (http:// or https:// and host[:port], without a "
                     "path)",
                     (int)(len > 200 ? 200 : len), s);
            goto fail;
        }
        if (p->n == UTIL_PEERS_MAX) {
            snprintf(err, errlen, "more than %d URLs in one list", UTIL_PEERS_MAX);
            goto fail;
        }
        if (p->n && tls != is_tls(p->url[0])) {
            snprintf(err, errlen, "'%.*s': every URL of a list has the same scheme", (int)len, s);
            goto fail;
        }
        p->url[p->n++] = dup(s, len);
        if (s[item] == '\0') {
            return 0;
        }
        s += item + 1;
    }
fail:
    util_peers_free(p);
    return -EINVAL;
}

void util_peers_free(util_peers *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->url[i]);
    }
    memset(p, 0, sizeof(*p));
}

const char *util_peers_current(const util_peers *p)
{
    return p->n ? p->url[p->cur] : "";
}

void util_peers_ok(util_peers *p)
{
    p->tried = 0;
}

bool util_peers_failed(util_peers *p)
{
    if (p->n) {
        p->cur = (p->cur + 1) % p->n;
    }
    if (++p->tried >= p->n) {
        p->tried = 0;
        return false;
    }
    return true;
}

int util_peers_follow(util_peers *p, const char *leader)
{
    bool tls;
    size_t blen = leader ? base_len(leader, &tls) : 0;
    /* the authority ends at its path, query or fragment (a comma names no replica here) */
    if (blen == 0 || !p->n || tls != is_tls(p->url[0]) || !strchr("/?#", leader[blen])) {
        return -EINVAL;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (strlen(p->url[i]) == blen && strncasecmp(p->url[i], leader, blen) == 0) {
            p->cur = i;
            return 0;
        }
    }
    /* the replicas given stay; one a redirect named takes a free place, or the last place */
    size_t i;
    if (p->n < UTIL_PEERS_MAX) {
        i = p->n++;
    } else {
        i = UTIL_PEERS_MAX - 1;
        free(p->url[i]);
    }
    p->url[i] = dup(leader, blen);
    p->cur = i;
    return 0;
}
