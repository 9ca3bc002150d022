/* SPDX-License-Identifier: MIT */
/* The host's software MRC NIC: one engine context on the host's plane ports, its EV and CC
 * profiles, and every QP it carries. */
#ifndef AGENT_NODE_H
#define AGENT_NODE_H

#include <event2/event.h>
#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_floor.h"
#include "agent_io.h"

struct agent_profile;
struct agent_deny;

typedef struct agent_node_cfg {
    struct event_base *base;
    const fab_topo *topo;
    uint32_t host;
    agent_io_mode mode;
    uint32_t mtu;          /* path MTU, payload bytes; 0: the largest the ports' MTU fits */
    unsigned evs_per_peer; /* EVs in a QP's profile, spread over the usable paths by salt */
    const char *cc;        /* "none" or "uet-1.0-nscc" */
    double port_gbps;      /* NSCC: one port's rate */
    uint64_t base_rtt_ns;  /* NSCC: the longest path's unloaded round trip */
    uint64_t reorder_ns;   /* the loss detector's first reordering window */
    uint64_t busy_poll_ns; /* read the ports this long after an arrival before sleeping */
    uint8_t timeout;       /* local ACK timeout: 1.024 us x 2^timeout */
    uint64_t seed;
    agent_floor_cfg floor; /* how far the denylist may take a QP's EVs */
} agent_node_cfg;

typedef struct agent_node agent_node;

int agent_node_new(const agent_node_cfg *cfg, agent_node **pnode, char *err, size_t errlen);
void agent_node_free(agent_node *node);

mrc_context *agent_node_ctx(agent_node *node);
const fab_topo *agent_node_topo(const agent_node *node);
uint32_t agent_node_host(const agent_node *node);
uint32_t agent_node_mtu(const agent_node *node);
agent_io *agent_node_io(agent_node *node);
struct event_base *agent_node_base(const agent_node *node);

/* Something to run after the engine read packets or ran timers (completion pollers). */
typedef void (*agent_node_poll_fn)(void *user, uint64_t now);
void agent_node_add_poller(agent_node *node, agent_node_poll_fn fn, void *user);
void agent_node_del_poller(agent_node *node, agent_node_poll_fn fn, void *user);

/* A QP toward host |peer|, in INIT with the peer's EV profile, completions on |cq|. Returns 0
 * or a negative MRC_ERR_* (MRC_ERR_INVAL: no plane both hosts are cabled on). */
int agent_node_qp_new(agent_node *node, uint32_t peer, mrc_cq *cq, unsigned max_wr,
                      void *qp_context, mrc_qp **pqp);
/* Moves it to RTS toward the peer's QP |dest_qpn|: its first PSN |rq_psn|, ours |sq_psn|, at
 * path MTU |mtu| (0: this node's). */
int agent_node_qp_connect(agent_node *node, mrc_qp *qp, uint32_t dest_qpn, uint32_t rq_psn,
                          uint32_t sq_psn, uint32_t mtu);
void agent_node_qp_free(agent_node *node, mrc_qp *qp);

/* What the node tells the rest of the agent: a QP made (in INIT) or about to be freed, and
 * each EV state change the engine reports. Any may be NULL. */
typedef struct agent_node_hooks {
    void (*qp_new)(void *user, mrc_qp *qp, uint32_t peer);
    void (*qp_free)(void *user, mrc_qp *qp);
    void (*ev_event)(void *user, const mrc_ev_event *event);
    void *user;
} agent_node_hooks;
void agent_node_set_hooks(agent_node *node, const agent_node_hooks *hooks);

/* The controller's profile (borrowed until the next call; NULL: the topology's own paths and
 * the node's settings): QPs made from now on take their EVs, CC profile and MTU from it. */
int agent_node_set_profile(agent_node *node, const struct agent_profile *prof);

/* The denylist (borrowed until the next call; NULL: none): every EV of every QP that it
 * denies becomes DENIED, every DENIED EV it no longer denies GOOD, but for the EVs the floor
 * (cfg.floor, agent_floor.h) keeps; new QPs follow it too. Returns how many EVs changed
 * state. */
unsigned agent_node_set_deny(agent_node *node, const struct agent_deny *deny);
/* The floor's state over the node's QPs (borrowed). */
const agent_floor *agent_node_floor(const agent_node *node);

/* The QPs it carries, for reports and denials: |*pn| of them, borrowed. */
mrc_qp *const *agent_node_qps(const agent_node *node, const uint32_t **ppeers, size_t *pn);

#endif
