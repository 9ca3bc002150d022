/* SPDX-License-Identifier: MIT */
/* The only glue between the host's plane ports and the engine: sockets in, packets out,
 * one timer from the engine's next deadline, all on the agent's libevent loop. */
#ifndef AGENT_IO_H
#define AGENT_IO_H

#include <event2/event.h>
#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum agent_io_mode {
    AGENT_IO_SRV6 = 0, /* IPv6-in-IPv6, the path written as uSIDs in the outer address */
    AGENT_IO_ECMP,     /* the inner packet alone: the EV only in the UDP source port */
} agent_io_mode;

typedef struct agent_io_cfg {
    struct event_base *base;
    mrc_context *ctx;
    const fab_topo *topo;
    uint32_t host;
    agent_io_mode mode;
    uint64_t busy_ns; /* keep reading the sockets this long after an arrival (0: sleep) */
    /* Called after the engine read packets or ran its timers, before packets are pulled:
     * the agent polls completions and events here and may post more work. */
    void (*after)(void *user, uint64_t now);
    void *user;
} agent_io_cfg;

typedef struct agent_io agent_io;

/* Opens a socket per cabled plane port of |host| (bound to the port's interface) and arms
 * the loop. Returns 0, or -errno with a sentence in |err| (a port that cannot be opened). */
int agent_io_new(const agent_io_cfg *cfg, agent_io **pio, char *err, size_t errlen);
void agent_io_free(agent_io *io);

/* The smallest MTU of |host|'s cabled plane ports, as their interfaces in this network
 * namespace say: 0, or -errno with a sentence in |err| (a port with no interface). */
int agent_io_link_mtu(const fab_topo *topo, uint32_t host, unsigned *mtu, char *err, size_t errlen);

/* Work was posted outside a packet or timer callback: pull packets soon. */
void agent_io_kick(agent_io *io);

typedef struct agent_io_stats {
    uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
    uint64_t rx_garbage;  /* refused by the engine */
    uint64_t tx_unmapped; /* no path for the EV toward that peer: dropped */
    uint64_t tx_errors;   /* the kernel refused a packet */
    uint64_t tx_blocked;  /* a port's socket was full: the port waited */
    uint64_t tx_frames;   /* SRv6: of tx_pkts, framed by the agent (the rest: by the kernel) */
    uint64_t rx_port[MRC_MAX_PORTS], tx_port[MRC_MAX_PORTS]; /* packets per plane port */
    uint64_t rx_port_bytes[MRC_MAX_PORTS], tx_port_bytes[MRC_MAX_PORTS]; /* their bytes */
} agent_io_stats;

void agent_io_get_stats(const agent_io *io, agent_io_stats *stats);

/* CLOCK_MONOTONIC in nanoseconds: the engine's |now|. */
uint64_t agent_now(void);

#endif
