/* SPDX-License-Identifier: MIT */
/* mrc-agent's parts joined: the node (engine and plane ports), the controller client, the
 * port watcher, the reports, the local API and the metrics endpoint. */
#ifndef AGENT_DAEMON_H
#define AGENT_DAEMON_H

#include "agent_node.h"

typedef struct agent_daemon_cfg {
    agent_node_cfg node;
    const char *api;       /* local API socket */
    const char *url;       /* the controller; NULL: run alone on the topology */
    const char *token;     /* the agent's bearer token */
    const char *cafile;    /* https: trusted CAs */
    const char *certfile;  /* https: the client certificate offered (NULL: none) */
    const char *keyfile;   /* and its key */
    const char *state_dir; /* the last profile and denylist */
    const char *oob;       /* where mrc-perf setup listens, told to the controller */
    unsigned report_s;     /* report interval, seconds */
    size_t report_max;     /* largest report, bytes (the controller's body limit) */
    const char *metrics;   /* where GET /metrics is served, ADDR:PORT; NULL: nowhere */
} agent_daemon_cfg;

typedef struct agent_daemon agent_daemon;

int agent_daemon_new(const agent_daemon_cfg *cfg, agent_daemon **pd, char *err, size_t errlen);
void agent_daemon_free(agent_daemon *d);

#endif
