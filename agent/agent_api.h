/* SPDX-License-Identifier: MIT */
/* The agent's local API: what applications on the host (mrc-perf) ask of their software NIC,
 * as JSON lines over a unix socket. Each connection owns one session; closing it frees the
 * session's QPs and memory, as a process's verbs resources go with it. */
#ifndef AGENT_API_H
#define AGENT_API_H

#include <json-c/json.h>

#include "agent_node.h"

/* The default socket: an abstract name, so each network namespace (each lab host) has its
 * own and nothing is left on disk. */
#define AGENT_API_DEFAULT "@mrcfab-agent"

typedef struct agent_api agent_api;

/* Something the agent adds to the "status" answer (its controller link, denylist...). */
typedef void (*agent_api_status_fn)(void *user, json_object *status);

/* Listens on |path| (a leading '@' names an abstract socket). 0 or -errno with a sentence. */
int agent_api_new(agent_node *node, const char *path, agent_api_status_fn status, void *user,
                  agent_api **papi, char *err, size_t errlen);
void agent_api_free(agent_api *api);

/* A client's side: connects to |path|, and makes one request on the connection, waiting for
 * its answer. Returns 0 with the answer in |*pans| (the caller puts it), or -errno with a
 * sentence. */
int agent_api_call(int fd, json_object *req, json_object **pans, char *err, size_t errlen);
/* The agent's next line (after a request answered in several: progress, then the result). */
int agent_api_read(int fd, json_object **pans, char *err, size_t errlen);
int agent_api_connect(const char *path, char *err, size_t errlen);

#endif
