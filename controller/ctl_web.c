/* SPDX-License-Identifier: MIT */
/* The dashboard's static files. Each request walks the folder one name at a time with
 * openat(O_NOFOLLOW), from a descriptor of the folder: no "..", no link and no name swapped
 * between a check and the open can lead out of it, which comparing realpath()s could not
 * promise (the file may change between the comparison and the open). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_web.h"

#define UI_PREFIX "/ui/"

bool ctl_web_path(const char *path)
{
    return strcmp(path, "/") == 0 || strncmp(path, UI_PREFIX, strlen(UI_PREFIX)) == 0;
}

const char *ctl_web_ctype(const char *name)
{
    static const struct {
        const char *ext, *ctype;
    } types[] = {
        {"html", "text/html; charset=utf-8"},
        {"js", "application/javascript; charset=utf-8"},
        {"mjs", "application/javascript; charset=utf-8"},
        {"css", "text/css; charset=utf-8"},
        {"svg", "image/svg+xml"},
        {"png", "image/png"},
        {"ico", "image/x-icon"},
        {"json", "application/json"},
        {"txt", "text/plain; charset=utf-8"},
        {"woff2", "font/woff2"},
    };
    const char *slash = strrchr(name, '/');
    const char *dot = strrchr(slash ? slash + 1 : name, '.');
    const char *ctype = "application/octet-stream";
    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcasecmp(dot + 1, types[i].ext) == 0) {
            ctype = types[i].ctype;
            break;
        }
    }
    return ctype;
}

/* 0 when |rel| is names joined by single slashes, none empty and none beginning with a dot
 * (which rules out "." and ".." and hidden files such as .git); -EACCES otherwise, -ENOENT
 * when it is empty (it names nothing). */
static int rel_check(const char *rel)
{
    int rv = 0;
    if (!*rel) {
        rv = -ENOENT;
        goto out;
    }
    for (const char *p = rel; *p; p++) {
        bool starts = p == rel || p[-1] == '/';
        if ((starts && (*p == '.' || *p == '/')) || (*p == '/' && !p[1])) {
            rv = -EACCES;
            goto out;
        }
    }
out:
    return rv;
}

/* Opens file |rel| (checked by rel_check) of folder |dir| for reading. 0 with the descriptor
 * in |*pfd|; or -ENOENT, -ENOTDIR (not there), -EACCES (a symbolic link on the way, or no
 * permission), -ENAMETOOLONG, or another -errno. */
static int open_beneath(const char *dir, const char *rel, int *pfd)
{
    char name[NAME_MAX + 1];
    int rv = 0, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        rv = -errno;
        goto out;
    }
    for (const char *p = rel;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n > NAME_MAX) {
            rv = -ENAMETOOLONG;
            goto out;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        /* the last name may be a FIFO or a device: O_NONBLOCK and O_NOCTTY so that opening it
         * neither waits nor takes a terminal (it is refused after fstat) */
        int flags =
            O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (slash ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY);
        int next = openat(fd, name, flags);
        if (next < 0) {
            rv = errno == ELOOP ? -EACCES : -errno;
            goto out;
        }
        close(fd);
        fd = next;
        if (!slash) {
            break;
        }
        p = slash + 1;
    }
    *pfd = fd;
    fd = -1;
out:
    if (fd >= 0) {
        close(fd);
    }
    return rv;
}

/* The whole of regular file |fd| into a heap buffer. 0, or -EACCES (not a regular file),
 * -EFBIG (over CTL_WEB_MAX_FILE), -EIO. */
static int read_whole(int fd, char **pdata, size_t *plen)
{
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    int rv = 0;
    if (fstat(fd, &st) != 0) {
        rv = -EIO;
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rv = -EACCES;
        goto out;
    }
    if ((uint64_t)st.st_size > CTL_WEB_MAX_FILE) {
        rv = -EFBIG;
        goto out;
    }
    /* a file that grows while it is read is cut at the size it had */
    data = util_xmalloc((size_t)st.st_size + 1);
    while (len < (size_t)st.st_size) {
        ssize_t n = read(fd, data + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            rv = -EIO;
            goto out;
        }
        if (n == 0) {
            break;
        }
        len += (size_t)n;
    }
    data[len] = '\0';
    *pdata = data;
    *plen = len;
    data = NULL;
out:
    free(data);
    return rv;
}

void ctl_web_serve(const char *dir, const char *method, const char *path, ctl_resp *r)
{
    memset(r, 0, sizeof(*r));
    const char *rel = strcmp(path, "/") == 0 ? "index.html" : path + strlen(UI_PREFIX);
    int fd = -1, rv;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        ctl_api_problem(r, 405, path, "the dashboard's files take GET or HEAD, not %s", method);
        goto out;
    }
    if (!dir || !*dir) {
        ctl_api_problem(r, 404, path, "this controller serves no dashboard (--web is empty)");
        goto out;
    }
    if ((rv = rel_check(rel)) == 0 && (rv = open_beneath(dir, rel, &fd)) == 0) {
        rv = read_whole(fd, &r->body, &r->len);
    }
    switch (rv) {
    case 0:
        r->status = 200;
        r->ctype = ctl_web_ctype(rel);
        break;
    case -ENOENT:
    case -ENOTDIR:
    case -ENAMETOOLONG:
        ctl_api_problem(r, 404, path, "the dashboard has no file at %s", path);
        break;
    case -EACCES:
        ctl_api_problem(r, 403, path,
                        "%s is not served: only regular files inside the dashboard's folder "
                        "are, by names without '..', hidden names or symbolic links",
                        path);
        break;
    case -EFBIG:
        ctl_api_problem(r, 403, path, "%s is over %u MiB: too large to serve", path,
                        CTL_WEB_MAX_FILE >> 20);
        break;
    default:
        ctl_api_problem(r, 500, path, "%s cannot be read: %s", path, strerror(-rv));
        break;
    }
out:
    if (fd >= 0) {
        close(fd);
    }
}
