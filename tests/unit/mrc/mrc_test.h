/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrc unit tests: a seeded PRNG, a clock, the wire vectors, and test
 * nodes: engines with a QP, a zero-delay link between them and made-up packets. */
#ifndef MRC_TEST_H
#define MRC_TEST_H

#include <check.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc_wire.h"

/*
 * ck_assert_msg() without its per-call mark point (a write to Check's pipe): for assertions
 * inside loops that run millions of times.
 */
#define MRC_REQUIRE(expr, ...)                                                                     \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)

/*
 * The CRC implementations one by one, as lib/mrc/mrc_crc.c defines them (kept in step by hand:
 * the crc suite fails if an implementation number stops answering).
 */
#define MRC_CRC_IMPL_BYTEWISE 1
#define MRC_CRC_IMPL_SLICE 2
#define MRC_CRC_IMPL_PCLMUL 3
int mrc_crc32_impl(unsigned impl, uint32_t *pcrc, const uint8_t *data, size_t len);

/* xorshift64*: a small PRNG with a fixed seed, so every run walks the same cases. */
uint64_t mrc_test_rand(uint64_t *state);
/* Uniform in [0, n), n > 0. */
uint32_t mrc_test_rand_below(uint64_t *state, uint32_t n);
/* Fills |buf| with PRNG bytes. */
void mrc_test_rand_fill(uint64_t *state, uint8_t *buf, size_t len);

/* Seconds on the monotonic clock. */
double mrc_test_now(void);

/* A vector of tests/vectors (MRC_TEST_VECTORS comes from CMake): its fields and bytes. */
#define MRC_TEST_VEC_MAX 8192
#define MRC_TEST_VEC_FIELDS 128
typedef struct mrc_test_field {
    char name[48];
    char value[512];
} mrc_test_field;

typedef struct mrc_test_vec {
    char name[64];
    uint8_t data[MRC_TEST_VEC_MAX];
    size_t len;
    size_t nfields;
    mrc_test_field fields[MRC_TEST_VEC_FIELDS];
} mrc_test_vec;

/* Loads tests/vectors/|name|.hex or fails the test; the caller frees the result. */
mrc_test_vec *mrc_test_vec_load(const char *name);
void mrc_test_vec_free(mrc_test_vec *vec);
/* The value text of field |name|, or NULL when the vector does not list it. */
const char *mrc_test_vec_get(const mrc_test_vec *vec, const char *name);
/* The names of every .hex file in tests/vectors, sorted, at most |max|; returns the count. */
size_t mrc_test_vec_names(char (*names)[64], size_t max);

Suite *mrc_wire_suite(void);
Suite *mrc_crc_suite(void);
Suite *mrc_packet_suite(void);
Suite *mrc_csum_suite(void);

/*
 * Engine test nodes: a context with one CQ, one memory region and one QP, built the same way
 * every time, so each test states only what it changes. Every call into the engine takes the
 * caller's |now|: the tests own the clock.
 */
#define MRC_TEST_PKT_ROOM 4608 /* path MTU up to 4096 plus headers */
#define MRC_TEST_PEER_QPN 77   /* the QPN of a made-up peer */

/* The allocator of a node: counts live allocations and can be told to fail. */
typedef struct mrc_test_alloc {
    long live, total;
    long fail_after; /* fail every allocation once |total| reaches it (-1: never) */
} mrc_test_alloc;

typedef struct mrc_test_opts {
    mrc_settings set;      /* from mrc_settings_default; alloc, cb, nports, addr are filled */
    unsigned ports;        /* planes */
    unsigned evs_per_port; /* EVs in the profile: mrc_test_ev(port, i) */
    unsigned active, min_active;
    uint32_t event_mask; /* bit per mrc_ev_state */
    uint32_t mtu;
    uint8_t mpr, mpr_dest; /* the requester's and the responder's window, x128 PSNs */
    uint16_t max_wimm, max_wimm_dest;
    uint8_t timeout, linear_cnt, exp_cnt;
    uint32_t sq_psn, rq_psn; /* this node's first PSN as requester; its peer's */
    unsigned qp_access;      /* QP access flags */
    unsigned mr_access;
    size_t memlen; /* the node's memory region */
    uint32_t max_send_wr, max_recv_wr;
    unsigned cqe;
    uint32_t cap; /* MRC_QP_CAP_* */
    uint64_t seed;
} mrc_test_opts;

typedef struct mrc_test_node {
    mrc_context *ctx;
    mrc_cq *cq; /* send and receive completions */
    mrc_qp *qp;
    mrc_mr *mr;
    uint8_t *mem;
    size_t memlen;
    unsigned side; /* 0 or 1: its addresses are fd00::side:port */
    unsigned ports;
    uint32_t mtu;
    bool icrc;
    uint64_t seed;
    mrc_test_alloc alloc;
} mrc_test_node;

/* Two ports, 4 EVs each, MTU 1024, windows of 128 PSNs, timeout 10 (1 ms), retries 7+7. */
void mrc_test_opts_default(mrc_test_opts *o);
/* The EV |i| of port |port| in every test profile, and the port back from it. */
uint32_t mrc_test_ev(unsigned port, unsigned i);
unsigned mrc_test_ev_port(uint32_t ev);
/* The address of |side| on |port|: fd00::side:port. */
void mrc_test_addr(uint8_t addr[16], unsigned side, unsigned port);

/* A node with its QP in RESET; fails the test on any error. */
void mrc_test_node_new(mrc_test_node *n, const mrc_test_opts *o, unsigned side);
void mrc_test_node_free(mrc_test_node *n);
/* The QP to RTS towards |dest_qpn| (a peer at side ^ 1), with |o|'s attributes. */
void mrc_test_node_up(mrc_test_node *n, const mrc_test_opts *o, uint32_t dest_qpn, uint64_t now);
/* The attributes and masks mrc_test_node_up uses for each step. */
void mrc_test_attr(mrc_qp_attr *a, const mrc_test_opts *o, unsigned side, uint32_t dest_qpn);
#define MRC_TEST_INIT_MASK (MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID)
#define MRC_TEST_RTR_MASK                                                                          \
    (MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU | MRC_QP_ACCESS_FLAGS |      \
     MRC_QP_AV | MRC_QP_MPR_DEST | MRC_QP_MAX_WIMM_DEST)
#define MRC_TEST_RTS_MASK                                                                          \
    (MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM | MRC_QP_TIMEOUT |                \
     MRC_QP_RETRY_CNT | MRC_QP_CAP)
/* Requester |a| (side 0) and responder |b| (side 1), connected both ways; |a|'s first PSN is
 * oa->sq_psn, |b|'s ob->sq_psn. */
void mrc_test_pair_new(mrc_test_node *a, const mrc_test_opts *oa, mrc_test_node *b,
                       const mrc_test_opts *ob, uint64_t now);

/* A packet out of an engine (or made up by a test), with its bytes and its decoding. */
typedef struct mrc_test_pkt {
    uint8_t buf[MRC_TEST_PKT_ROOM];
    size_t len;
    mrc_tx_info info;
    mrc_pkt pkt; /* payload points into buf: re-decode after copying the struct */
} mrc_test_pkt;

/* Decodes p->buf into p->pkt (checking the ICRC when |icrc|); fails the test if it does not
 * decode. */
void mrc_test_pkt_decode(mrc_test_pkt *p, bool icrc);
/* Pulls the next packet |n| has for ports |mask| (UINT32_MAX: all); returns its length or 0. */
int mrc_test_pull_mask(mrc_test_node *n, mrc_test_pkt *p, uint32_t mask, uint64_t now);
int mrc_test_pull(mrc_test_node *n, mrc_test_pkt *p, uint64_t now);
/* Pulls everything |n| has into |out| (at most |max|); returns the count. */
unsigned mrc_test_pull_all(mrc_test_node *n, mrc_test_pkt *out, unsigned max, uint64_t now);
/* The rx_info a link would deliver |p| with: its port, DSCP and ECN. */
mrc_rx_info mrc_test_rx(const mrc_test_pkt *p);
/* Pushes |p| into |n| with |info| (NULL: mrc_test_rx(p)); returns mrc_read_pkt's result. */
int mrc_test_push(mrc_test_node *n, const mrc_test_pkt *p, const mrc_rx_info *info, uint64_t now);
bool mrc_test_is_data(const mrc_test_pkt *p);

/* A link between two nodes with no delay: a filter sees every packet from |from| and may change
 * it and its rx_info or drop it (false). */
typedef bool (*mrc_test_filter)(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info);
/* Moves packets both ways until neither node has any; returns how many moved (or dropped). */
unsigned mrc_test_pump(mrc_test_node *a, mrc_test_node *b, uint64_t now, mrc_test_filter f,
                       void *user);
/* Pumps, then runs timers at their expiry, until nothing is due before |until|; returns the
 * time reached (the last expiry handled, or |now|). */
uint64_t mrc_test_run(mrc_test_node *a, mrc_test_node *b, uint64_t now, uint64_t until,
                      mrc_test_filter f, void *user);
/* The earliest expiry of the two nodes (b may be NULL). */
uint64_t mrc_test_expiry(const mrc_test_node *a, const mrc_test_node *b);

/* Made-up packets to |to|'s QP from its peer (side ^ 1) on |port| with EV |ev|. */
void mrc_test_pkt_init(mrc_pkt *pkt, const mrc_test_node *to, uint8_t opcode, unsigned port,
                       uint32_t ev, uint32_t psn);
/* Encodes |pkt| with |payload| into |out| (ICRC if the node checks it) and decodes it back. The
 * raw variant does not decode: for packets the decoder must refuse. */
void mrc_test_build_raw(mrc_test_pkt *out, const mrc_pkt *pkt, const void *payload, size_t len,
                        bool icrc);
void mrc_test_build(mrc_test_pkt *out, const mrc_pkt *pkt, const void *payload, size_t len,
                    bool icrc);
void mrc_test_build_data(mrc_test_pkt *out, const mrc_test_node *to, uint8_t opcode, uint32_t psn,
                         uint16_t msn, uint16_t rqmsn, uint64_t va, uint32_t rkey, uint32_t dmalen,
                         const void *payload, size_t len, uint32_t ev, unsigned port);
void mrc_test_build_sack(mrc_test_pkt *out, const mrc_test_node *to, uint32_t cack, int16_t ack_off,
                         int16_t sack_off, uint64_t bitmap, uint8_t m, uint32_t ev, unsigned port);
void mrc_test_build_nack(mrc_test_pkt *out, const mrc_test_node *to, uint8_t reason, uint32_t psn,
                         uint32_t ev, unsigned port);
void mrc_test_build_ack(mrc_test_pkt *out, const mrc_test_node *to, uint8_t syndrome, uint32_t msn,
                        unsigned port);
void mrc_test_build_probe(mrc_test_pkt *out, const mrc_test_node *to, uint16_t probe_id,
                          uint32_t psn, uint32_t ev, unsigned port);

/* Posts a write of |len| bytes from |n|'s memory at |loff| to the peer's |raddr|/|rkey|. */
int mrc_test_post_write(mrc_test_node *n, uint64_t wr_id, bool imm, uint32_t imm_data, size_t loff,
                        uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t now);
/* Posts |count| receives with wr_ids from |first|. */
void mrc_test_post_recvs(mrc_test_node *n, uint64_t first, unsigned count);
/* The address of |n|'s memory at |off|, as a remote address. */
uint64_t mrc_test_va(const mrc_test_node *n, size_t off);
/* Polls |n|'s CQ for up to |max| completions. */
int mrc_test_poll(mrc_test_node *n, mrc_wc *wc, int max);

mrc_qp_stats mrc_test_stats(const mrc_test_node *n);
mrc_ctx_stats mrc_test_ctx_stats(const mrc_test_node *n);
/* The stats of EV |ev| of |n|'s QP; fails the test if the QP has no such EV. */
mrc_ev_stats mrc_test_ev_stats(const mrc_test_node *n, uint32_t ev);
/* The first field where two stats differ ("" when they are the same). */
const char *mrc_test_qp_stats_diff(const mrc_qp_stats *a, const mrc_qp_stats *b);

/* What a packet must not change: a QP's stats and EVs, its context's other counters, memory. */
typedef struct mrc_test_snap {
    mrc_qp_stats st;
    mrc_ctx_stats cst;
    unsigned nev;
    mrc_ev_stats ev[64];
    uint8_t *mem;
    size_t memlen;
} mrc_test_snap;
void mrc_test_snap_take(mrc_test_snap *s, const mrc_test_node *n);
/* Fails the test (naming |what|) if |n| moved from |s| in anything but the context's receive
 * and garbage counters. */
void mrc_test_snap_check(const mrc_test_snap *s, const mrc_test_node *n, const char *what);
void mrc_test_snap_free(mrc_test_snap *s);

Suite *mrc_qp_suite(void);
Suite *mrc_reliability_suite(void);
Suite *mrc_nack_suite(void);
Suite *mrc_ev_suite(void);
Suite *mrc_pair_suite(void);
Suite *mrc_garbage_suite(void);
Suite *mrc_burst_suite(void);
Suite *mrc_cc_suite(void);

#endif
