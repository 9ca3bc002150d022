/* SPDX-License-Identifier: MIT */
/* A scenario: the fabric, its links, the transports, the traffic and the faults of one run,
 * loaded from SCENARIO.json (schemas/scenario.schema.json documents the format). */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mrcfab/fabric.h>

/* Simulated time is picoseconds: a 4 KiB packet at 400 Gb/s takes 83,886 ps, which
 * nanoseconds would round. The engine (libmrc) gets nanoseconds. */
#define SIM_PS_PER_NS 1000ull
#define SIM_PS_PER_US 1000000ull
#define SIM_NEVER UINT64_MAX

typedef enum sim_transport { SIM_MRC = 0, SIM_ROCE = 1 } sim_transport;

/* One class of link: its line rate and one-way propagation delay. */
typedef struct sim_link_cfg {
    double gbps;
    uint64_t delay_ps;
} sim_link_cfg;

/* The network: one set of parameters for every switch port of the fabric. */
typedef struct sim_net_cfg {
    sim_link_cfg host;           /* NIC-T0 links (each plane port of a host) */
    sim_link_cfg fabric;         /* T0-T1 links */
    uint64_t switch_latency_ps;  /* ingress to egress queue */
    uint32_t buffer_bytes;       /* egress data queue of a switch port */
    uint32_t ctrl_buffer_bytes;  /* egress priority queue: control packets, trimmed headers */
    uint32_t ecn_kmin, ecn_kmax; /* data-queue bytes: marking from 0 at kmin to ecn_pmax at */
    double ecn_pmax;             /*   kmax, always above kmax; decided at dequeue */
    bool trim;                   /* trim MRC packets to their headers when the data queue is
                                    full (RoCE packets are dropped: RoCE NICs know no trims) */
    uint32_t trim_bytes;         /* ... full for MRC data at this many bytes (or buffer_bytes
                                    if less): about a BDP, as trimming fabrics keep it */
    bool pfc;                    /* lossless: pause the upstream port at pfc_xoff bytes held */
    uint32_t pfc_xoff, pfc_xon;  /*   from one ingress port, resume below pfc_xon */
    uint64_t ecmp_converge_ps;   /* after a cable fails, ECMP (the RoCE baseline) stops using
                                    it this much later (routing reconverging) */
} sim_net_cfg;

/* libmrc at every host: one QP per flow, its EVs spread over all planes. */
typedef struct sim_mrc_cfg {
    unsigned evs;        /* EVs per QP (128-256 in the paper) */
    unsigned active;     /* active EVs (0: all) */
    unsigned min_active; /* floor of usable EVs */
    uint32_t mtu;        /* path MTU, a power of two */
    unsigned mpr;        /* MPR window, x128 PSNs */
    unsigned timeout;    /* local ACK timeout 1.024 us x 2^timeout */
    unsigned retry_linear, retry_exp;
    unsigned sack_every;  /* 0: the engine's default */
    double ev_loss_pct;   /* < 0: the engine's default */
    bool nscc;            /* congestion control: NSCC, or none (the MPR window alone) */
    uint64_t base_rtt_ps; /* NSCC's base RTT (0: the fabric's longest unloaded round trip) */
    uint64_t target_ps;   /* NSCC's target queueing delay (0: its default) */
    uint64_t max_cwnd;    /* NSCC's maximum window in bytes (0: its default, 1.5 BDP) */
    uint64_t reorder_ps;  /* RACK's initial reordering window (0: the engine's default) */
} sim_mrc_cfg;

/* The RoCEv2 RC baseline: go-back-N over one ECMP path per QP, optional DCQCN. */
typedef struct sim_dcqcn_cfg {
    double g;                 /* alpha gain (1/256) */
    double rate_ai_gbps;      /* additive increase step (5 Gb/s at 100 Gb/s) */
    double rate_hai_gbps;     /* hyper increase step (50 Gb/s at 100 Gb/s) */
    double min_rate_gbps;     /* floor of the current rate */
    uint64_t alpha_timer_ps;  /* alpha decays once per period without CNP (55 us) */
    uint64_t rate_timer_ps;   /* rate increase timer (55 us) */
    uint64_t byte_counter;    /* rate increase every this many bytes sent (10 MB) */
    unsigned fast_recovery;   /* stages of fast recovery before additive increase (5) */
    uint64_t cnp_interval_ps; /* receiver: at most one CNP per QP per this (50 us) */
} sim_dcqcn_cfg;

typedef struct sim_roce_cfg {
    uint32_t mtu;
    unsigned qps; /* QPs per flow; a flow's messages are split over them */
    bool dcqcn;
    sim_dcqcn_cfg dc;
    uint64_t timeout_ps; /* retransmission timeout (go back to the oldest unacked) */
    unsigned retry;      /* timeouts in a row before the QP fails (7) */
    unsigned ack_every;  /* data packets per ACK (the last of a message is always acked) */
    int plane;           /* -1: each QP hashes onto a plane (ECMP on the host); else every
                            QP uses this plane (the paper's single 4x plane) */
} sim_roce_cfg;

typedef enum sim_traffic_kind {
    SIM_TRAFFIC_FLOWS = 0,   /* the explicit list in |flows| */
    SIM_TRAFFIC_ALLREDUCE,   /* ring all-reduce over |hosts| in ring order */
    SIM_TRAFFIC_ALLTOALL,    /* every host of |hosts| to every other */
    SIM_TRAFFIC_PERMUTATION, /* each host of |hosts| to another, a random derangement */
    SIM_TRAFFIC_INCAST,      /* every host of |hosts| to |receiver| */
} sim_traffic_kind;

typedef struct sim_flow_spec {
    uint32_t src, dst; /* host ids */
    uint64_t bytes;
    uint64_t start_ps; /* after the traffic item's start_ps */
    char label[32];
} sim_flow_spec;

/* One traffic item; a scenario may hold several (an incast and a victim flow). */
typedef struct sim_traffic {
    sim_traffic_kind kind;
    sim_transport transport;
    char label[32];
    unsigned qps; /* RoCE QPs per flow (0: roce.qps) */
    uint64_t start_ps;
    uint64_t bytes;  /* per flow; ALLREDUCE: each rank's buffer (the ring moves
                        2(N-1)/N of it through every rank) */
    uint32_t *hosts; /* the participants (ring order for ALLREDUCE; INCAST: the senders, never
                        the receiver); owned */
    unsigned nhosts;
    uint32_t receiver;    /* INCAST; FAB_NONE for the other kinds */
    unsigned slices;      /* ALLREDUCE: each chunk moves as this many pipelined slices (as
                             NCCL's ring does), so one slow slice does not stall a step */
    sim_flow_spec *flows; /* FLOWS; owned */
    unsigned nflows;
} sim_traffic;

typedef enum sim_fault_kind {
    SIM_FAULT_LINK_DOWN = 0, /* cables down at |at| (and back after |duration| if set) */
    SIM_FAULT_LINK_UP,       /* cables up */
    SIM_FAULT_FLAP,          /* down |duration| every |period|, |count| times (0: to the end) */
    SIM_FAULT_LOSS,          /* random loss |loss| per packet on the cables from |at| */
    SIM_FAULT_EV_LOSS,       /* loss |loss| on the path of EV |ev| from host |src| to |dst| */
    SIM_FAULT_BLACKHOLE,     /* switch |sw| drops everything, links staying up (for |duration|
                                if set) */
    SIM_FAULT_REBOOT,        /* switch |sw| goes down (all its cables) for |duration| */
    SIM_FAULT_NIC_DOWN,      /* host |host| port |port| down: that plane, for that host */
    SIM_FAULT_NIC_UP,
} sim_fault_kind;

typedef enum sim_dir { SIM_DIR_BOTH = 0, SIM_DIR_OUT, SIM_DIR_IN } sim_dir;

/* A cable by a switch end: port |port| of switch |sw| (the switch named first, "a", for a
 * T0-T1 cable; the T0 for a host's cable). OUT is the direction leaving that port. */
typedef struct sim_link_ref {
    uint32_t sw;
    unsigned port;
    sim_dir dir;
} sim_link_ref;

typedef struct sim_fault {
    sim_fault_kind kind;
    uint64_t at_ps;
    uint64_t duration_ps; /* LINK_DOWN, BLACKHOLE (0: for good), FLAP, REBOOT */
    uint64_t period_ps;   /* FLAP */
    unsigned count;       /* FLAP: times, 0 to the end of the run */
    uint64_t interval_ps; /* several cables: each one this much after the previous one
                             (0: all at once, as a transceiver glitch) */
    sim_link_ref *links;  /* owned */
    unsigned nlinks;
    unsigned random_links; /* and this many T0-T1 cables drawn from the seed */
    bool all_links;        /* LOSS: every cable of the fabric */
    bool hosts_only;       /* LOSS with all_links: only the hosts' cables (NIC to T0), where
                              each packet crosses one lossy cable in each direction */
    sim_dir dir;           /* LOSS with all_links: which directions, each cable seen from its
                              upper switch end (the T1 of a T0-T1 cable, the T0 of a host's):
                              IN = upwards (host to T0, T0 to T1), OUT = downwards */
    double loss;           /* LOSS, EV_LOSS: drop probability per packet */
    uint32_t sw;           /* BLACKHOLE, REBOOT; else FAB_NONE (so are host and dst) */
    uint32_t host;         /* NIC_DOWN, NIC_UP; EV_LOSS: the sending host */
    unsigned port;         /* NIC_DOWN, NIC_UP: the host port (= plane) */
    uint32_t dst;          /* EV_LOSS: the receiving host */
    uint32_t ev;           /* EV_LOSS */
} sim_fault;

typedef struct sim_scenario {
    char name[64];       /* default: the file's name without folder and .json */
    char *description;   /* owned, may be NULL */
    char *experiment;    /* the row it fills in the comparison table; owned, may be NULL */
    char *paper;         /* the paper's result for that row, one line; owned, may be NULL */
    char *topology_path; /* resolved against the scenario's folder; NULL if inline */
    fab_topo *topo;      /* loaded; owned */
    sim_net_cfg net;
    sim_mrc_cfg mrc;
    sim_roce_cfg roce;
    sim_traffic *traffic; /* owned */
    unsigned ntraffic;
    sim_fault *faults; /* owned */
    unsigned nfaults;
    uint64_t end_ps;    /* the run stops here even if traffic is not done */
    uint64_t sample_ps; /* interval of the time series */
    uint64_t seed;
} sim_scenario;

/* Fills every default (documented in the schema): overwrites all of |sc|, which must own
 * nothing. */
void sim_scenario_defaults(sim_scenario *sc);

/*
 * Loads SCENARIO.json at |path|. With |reduced|, the object at $.reduced (if any) is applied to
 * the document first as a JSON merge patch (RFC 7386): the test command's smaller version of
 * the same experiment. |seed| overrides $.seed unless it is UINT64_MAX. Returns 0 with
 * |*psc| set, or -1 with a sentence naming the field at fault in |errmsg| ("$.faults[2].at:
 * not a duration") and nothing allocated.
 */
int sim_scenario_load(const char *path, bool reduced, uint64_t seed, sim_scenario **psc,
                      char *errmsg, size_t errmsglen);
void sim_scenario_free(sim_scenario *sc);

#endif
