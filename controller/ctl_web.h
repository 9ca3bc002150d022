/* SPDX-License-Identifier: MIT */
/* The dashboard's static files (issue 10): "/" is the folder's index.html and "/ui/PATH" its
 * file PATH. Nothing outside the folder is ever read: no "..", no hidden names, no symbolic
 * links, regular files only. */
#ifndef CTL_WEB_H
#define CTL_WEB_H

#include <stdbool.h>

#include "ctl_api.h"

/* The largest file served. */
#define CTL_WEB_MAX_FILE (8u << 20)

/* The Content-Security-Policy of every answer on a dashboard path: the page runs only its
 * own scripts and styles and talks only to this controller. */
#define CTL_WEB_CSP                                                                                \
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "              \
    "connect-src 'self'; frame-ancestors 'none'"

/* Whether |path| (a URL's path, unescaped) is one of the dashboard's: "/" or under "/ui/". */
bool ctl_web_path(const char *path);

/* Answers |method| on the dashboard path |path| from the folder |dir| (NULL or "": none is
 * served) into |resp|, whose body the caller frees: 200 with the file's bytes and the content
 * type its extension names; a problem document otherwise: 405 for a method other than GET or
 * HEAD, 403 for a path that could leave the folder (a "..", a hidden name, an empty
 * component, a symbolic link) or a file that is not a regular one or is over
 * CTL_WEB_MAX_FILE, 404 for a file that is not there (or no folder), 500 for one that cannot
 * be read. Reads the file at each call: no cache to go stale while the files are edited. */
void ctl_web_serve(const char *dir, const char *method, const char *path, ctl_resp *resp);

/* The content type of file |name| by its extension (application/octet-stream when unknown). */
const char *ctl_web_ctype(const char *name);

#endif
