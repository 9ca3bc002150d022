/* SPDX-License-Identifier: MIT */
/* The simulated world: the fabric's ports and switches, the hosts with their engines, the
 * traffic and the clock. One struct, shared by the modules of one run (sim_net, sim_host,
 * sim_traffic, sim_fault, sim_run); nothing here is global. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>

#include "sim_event.h"
#include "sim_out.h"
#include "sim_roce.h"
#include "sim_scenario.h"

/* Event kinds (sim_event.h packs a kind and an index). */
enum {
    SIM_EV_PORT_TX = 1, /* port: its packet on the wire has been sent */
    SIM_EV_PORT_RX,     /* port: the head of its wire reaches the far end */
    SIM_EV_HOST_TIMER,  /* host: the engine's timer */
    SIM_EV_NIC_WAKE,    /* port (a host's): try to send again (RoCE pacing) */
    SIM_EV_PFC_PAUSE,   /* port: a PAUSE from downstream takes effect */
    SIM_EV_PFC_RESUME,  /* port: ... and its end */
    SIM_EV_FAULT,       /* index: a fault action */
    SIM_EV_SAMPLE,      /* the time series */
    SIM_EV_FLOW_START,  /* index: a flow */
    SIM_EV_ROCE_TIMER,  /* index: a RoCE QP */
};

#define SIM_NONE UINT32_MAX
/* Ethernet's share of every frame: preamble, addresses, type, FCS and the gap. */
#define SIM_ETH_OVERHEAD 38u
/* The outer IPv6 header of an MRC packet (SRv6, IPv6-in-IPv6). */
#define SIM_OUTER_LEN 40u
/* An MRC data packet's inner headers (IPv6, UDP, BTH, METH, TSETH, RETH, ICRC) and a SACK's
 * whole size, for NSCC's base RTT. */
#define SIM_MRC_HDR 100u
#define SIM_MRC_SACK 116u
/* The inner headers a packet carries into the fabric: MRC's longest (a SACK, an endpoint
 * response) are 96 bytes. */
#define SIM_PKT_HDR 96u

enum { SIM_PKT_MRC = 0, SIM_PKT_ROCE = 1 };

/* Packet flags. */
#define SIM_PKT_CTRL 0x01u    /* the priority class: control packets, trimmed headers */
#define SIM_PKT_CE 0x02u      /* ECN congestion experienced */
#define SIM_PKT_TRIM 0x04u    /* trimmed to its headers */
#define SIM_PKT_LASTHOP 0x08u /* ... by the last switch */
#define SIM_PKT_ECT 0x10u     /* ECN-capable */

/* A packet in flight: headers only; the payload is a length. */
typedef struct sim_pkt {
    struct sim_pkt *next;
    uint32_t wire;     /* bytes it takes on a link */
    uint32_t datalen;  /* MRC: the inner packet's length; RoCE: the payload */
    uint32_t ingress;  /* the port it arrived by (PFC accounting), SIM_NONE from a host */
    uint32_t src, dst; /* hosts */
    uint32_t ev;       /* MRC: its EV; RoCE: its flow hash */
    uint16_t hdrlen;   /* MRC: bytes of |hdr| */
    uint8_t kind, flags, dscp, plane;
    uint8_t outer[16]; /* MRC: the outer destination; switches shift its uSIDs */
    union {
        uint8_t hdr[SIM_PKT_HDR]; /* MRC */
        sim_roce_pkt roce;        /* RoCE */
    };
} sim_pkt;

/* One direction of a cable: the transmitter at its start, its queues and its wire. */
typedef struct sim_port {
    sim_pkt *dq_head, *dq_tail; /* data */
    sim_pkt *cq_head, *cq_tail; /* priority: control and trimmed headers */
    sim_pkt *tx;                /* being sent */
    /* on the wire, in order: a ring of arrival times and packets, so that scheduling the
     * next arrival reads the ring rather than the next packet (a cache miss each) */
    struct sim_wire {
        uint64_t arrive;
        sim_pkt *p;
    } * wire;
    uint32_t wire_head, wire_len, wire_cap;
    uint32_t dq_bytes, cq_bytes;
    bool busy;      /* a packet is being sent */
    bool up;        /* administratively and physically */
    bool paused;    /* PFC: downstream asked us to stop data */
    bool pausing;   /* PFC: we asked our upstream(s) to stop (for the ingress counter) */
    bool to_host;   /* the last hop */
    bool from_host; /* a NIC port */
    uint8_t plane;
    uint32_t from, to;           /* node ids: switch, or host (see from_host / to_host) */
    uint16_t from_port, to_port; /* port numbers at each end */
    uint32_t reverse;            /* the other direction of the cable */
    uint64_t ps_per_kb;          /* transmission: ps per 1000 bytes */
    uint64_t delay;              /* propagation, plus switch latency into a switch */
    double loss;                 /* drop probability per packet */
    uint32_t in_bytes;           /* PFC: bytes queued at its far end that came by it */
    uint64_t wake_at;            /* NIC port: the pending SIM_EV_NIC_WAKE, SIM_NEVER if none */
    /* counters */
    uint64_t tx_bytes, tx_pkts, drops, trims, marks, pauses;
    uint64_t sampled; /* tx_bytes at the last sample */
} sim_port;

typedef struct sim_fwd {
    uint16_t usid; /* 0: empty */
    uint16_t port;
} sim_fwd;

typedef struct sim_sw {
    fab_switch info;
    uint32_t *out; /* per switch port: its transmitter, SIM_NONE if not cabled */
    sim_fwd *fwd;  /* the /48 routes: open addressing by uSID */
    uint32_t fwd_mask;
    bool blackhole;    /* drops everything, links staying up */
    bool down;         /* rebooting */
    uint32_t *t1_port; /* T0: the uplink to T1 j, by j (SIM_NONE if missing) */
    uint32_t nt1;
    uint32_t *t0_port; /* T1: the down-port to T0 a, by a */
    uint32_t nt0;
    uint64_t drops;
} sim_sw;

/*
 * A flow: bytes from one host to another, in units (transfers) released one by one. A plain
 * flow is one unit; a ring all-reduce link (rank r to rank r+1) carries 2(N-1) units, unit k
 * released when rank r has received unit k-1 from rank r-1. A unit goes out as messages of at
 * most SIM_MSG_MAX bytes, split over the flow's QPs (one for MRC, |qps| for RoCE).
 */
#define SIM_MSG_MAX (1u << 20)

/* Each MRC sender QP's send-queue depth: a flow posts no more messages than that. */
#define SIM_SQ_DEPTH 256

typedef struct sim_flow {
    uint32_t id;
    uint32_t traffic; /* the traffic item */
    sim_transport transport;
    uint32_t src, dst;
    char label[32];
    uint64_t bytes;         /* in all */
    uint64_t unit;          /* bytes per unit */
    uint32_t units;         /* how many */
    uint32_t released;      /* units released so far */
    uint32_t done;          /* units complete at the receiver */
    uint32_t prev, next;    /* all-reduce: the ring's flows into |src| and out of |dst| */
    uint32_t ahead;         /* all-reduce: units released beyond |prev|'s done ones */
    uint32_t nqps;          /* QPs (RoCE) or 1 */
    uint32_t msgs_per_part; /* messages each QP carries per unit */
    uint32_t *rcvd;         /* per QP: messages received */
    uint32_t sq_out;        /* MRC: messages posted and not yet complete at the sender */
    uint64_t start_ps, end_ps;
    uint64_t delivered; /* bytes complete at the receiver */
    uint64_t sampled;   /* |delivered| at the last sample */
    bool failed;
    /* MRC */
    mrc_qp *sqp, *rqp;
    fab_template fwd, rev; /* outer addresses: src to dst, dst to src */
    /* RoCE: QP ends world.roce[roce0 + 2k] (sender) and [roce0 + 2k + 1] (receiver) */
    uint32_t roce0;
} sim_flow;

typedef struct sim_host {
    uint32_t id;
    uint32_t nic[FAB_MAX_PLANES]; /* transmitter per plane port, SIM_NONE if not cabled */
    uint32_t t0[FAB_MAX_PLANES];  /* the T0 (switch id) of each plane port, and its port */
    uint16_t t0_port[FAB_MAX_PLANES];
    mrc_context *ctx; /* NULL when the host runs no MRC */
    mrc_cq *cq;
    mrc_mr *mr;
    uint64_t timer_at; /* the pending SIM_EV_HOST_TIMER, SIM_NEVER if none */
    uint32_t *roce;    /* its RoCE QP ends (indexes into world.roce) */
    unsigned nroce, roce_cap, roce_next;
    bool turn_roce;                    /* MRC and RoCE on one host take turns on a port */
    uint16_t t0_index[FAB_MAX_PLANES]; /* that T0's index in its plane */
    uint32_t *qpmap; /* MRC: by QP number, the flow end (flow << 1 | receiver), SIM_NONE */
    uint32_t qpmap_len;
    unsigned nqps; /* MRC QPs it needs (flow ends) */
    bool mrc;      /* runs an MRC engine */
    bool failed_seen;
} sim_host;

typedef struct sim_faults sim_faults;

typedef struct sim_rng {
    uint64_t s0, s1;
} sim_rng;

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t x = r->s0, y = r->s1;
    r->s0 = y;
    x ^= x << 23;
    r->s1 = x ^ y ^ (x >> 17) ^ (y >> 26);
    return r->s1 + y;
}

/* A uniform draw in [0, 1). */
static inline double sim_rng_unit(sim_rng *r)
{
    return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

typedef struct sim_world {
    const sim_scenario *sc;
    const fab_topo *topo;
    fab_tables *tables;
    const fab_plan *plan;
    unsigned planes;
    sim_evq q;
    sim_rng rng;

    sim_port *ports;
    uint32_t nports;
    sim_sw *sws;
    uint32_t nsws;
    sim_host *hosts;
    uint32_t nhosts;

    sim_pkt *free_pkts; /* the pool */
    sim_pkt *chunks;    /* its allocations, linked through their first packet */
    uint64_t pkts_alloc;

    /* MRC: one engine per host; a shared arena all memory regions alias (the simulator
     * checks no payload, so every host writes and reads the same bytes) */
    uint8_t *arena;
    size_t arena_len;
    uint8_t scratch[16384];            /* a packet being built or delivered */
    uint8_t dscp_trim, dscp_trim_last; /* the classes trimmed packets arrive in */

    /* flows and their transports (sim_traffic.c) */
    sim_flow *flows;
    uint32_t nflows, flows_cap;
    sim_roce_qp **roce;
    uint32_t *roce_flow;  /* the flow of each RoCE QP end */
    uint32_t *roce_host;  /* the host it lives on */
    uint8_t *roce_plane;  /* the plane it sends on */
    uint64_t *roce_timer; /* its pending SIM_EV_ROCE_TIMER */
    uint32_t nroce, roce_cap;
    struct sim_faults *faults; /* the timeline (sim_fault.c) */
    const sim_fault **ev_loss; /* EV_LOSS faults in force */
    unsigned nev_loss;

    /* ECMP's view of the cables, for the RoCE baseline: bit set = in use */
    uint8_t *ecmp_ok; /* per port */

    sim_totals totals;
    bool stop;
} sim_world;

/* sim_net.c: the fabric. */
int sim_net_build(sim_world *w, char *errmsg, size_t errmsglen);
void sim_net_free(sim_world *w);
sim_pkt *sim_pkt_get(sim_world *w);
void sim_pkt_put(sim_world *w, sim_pkt *p);
/* A host's NIC (port |p|) hands a packet to its port: it is queued, or sent at once. */
void sim_net_send(sim_world *w, uint32_t port, sim_pkt *p);
void sim_net_on_tx(sim_world *w, uint32_t port);
void sim_net_on_rx(sim_world *w, uint32_t port);
void sim_net_on_pfc(sim_world *w, uint32_t port, bool pause);
/* A cable direction goes down (its queued and in-flight packets are lost) or up. */
void sim_net_port_set(sim_world *w, uint32_t port, bool up);
/* The transmitter of switch |sw| port |swport| (SIM_NONE if not cabled). */
uint32_t sim_net_port_of(const sim_world *w, uint32_t sw, unsigned swport);

/* sim_host.c: hosts, their NICs and engines. */
int sim_host_build(sim_world *w, char *errmsg, size_t errmsglen);
void sim_host_free(sim_world *w);
/* A packet reached host port |port| of host |host|. Takes |p|. */
void sim_host_deliver(sim_world *w, uint32_t host, unsigned port, sim_pkt *p);
/* Fill idle NIC ports of |host| from its transports. */
void sim_host_kick(sim_world *w, uint32_t host);
void sim_host_on_timer(sim_world *w, uint32_t host);
void sim_host_on_wake(sim_world *w, uint32_t port);
/* A NIC port's link went down or up (the host notices at once). */
void sim_host_port_state(sim_world *w, uint32_t host, unsigned port, bool up);
/* Connects flow |f|'s MRC QPs (sender to receiver) and posts receives. */
int sim_host_mrc_connect(sim_world *w, sim_flow *f);
/* Posts an RDMA Write with Immediate of |bytes| on |f|'s sender QP, |imm| its tag. */
int sim_host_mrc_post(sim_world *w, sim_flow *f, uint64_t bytes, uint32_t imm);
/* A RoCE QP end of |f| on |host|; returns its index in world.roce. */
uint32_t sim_host_roce_add(sim_world *w, sim_flow *f, uint32_t host, unsigned plane, uint32_t peer);
void sim_host_on_roce_timer(sim_world *w, uint32_t qp);
/* Re-arms the timer event of RoCE QP end |qp|. */
void sim_host_roce_arm(sim_world *w, uint32_t qp);

/* sim_traffic.c: flows. */
/* A message of flow |f| arrived whole at the receiver on the flow's QP |k|. */
void sim_traffic_on_recv(sim_world *w, uint32_t flow, uint32_t k);
/* A message of MRC flow |f| completed at the sender, freeing its send-queue slot. */
void sim_traffic_on_sent(sim_world *w, uint32_t flow);
/* Flow |f|'s transport failed (QP error). */
void sim_traffic_on_fail(sim_world *w, uint32_t flow);

#endif
