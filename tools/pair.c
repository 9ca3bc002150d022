/* SPDX-License-Identifier: MIT */
/* mrc-pair's link model: a requester and a responder engine joined by simulated planes (one
 * FIFO transmitter per port, rate and delay), with loss, reordering, duplication, trimming,
 * ECN marks and a plane failure on a script; known data written and checked byte by byte. */
#include "pair.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrc_wire.h"

#define PAIR_PKT_ROOM 16384

typedef struct flight {
    uint64_t at;
    uint32_t len;
    uint8_t side; /* destination */
    mrc_rx_info info;
    uint8_t *buf;
} flight;

struct pair {
    pair_cfg cfg;
    mrc_context *ctx[2];
    mrc_qp *qp[2];
    mrc_cq *cq[2];
    mrc_mr *mr[2];
    uint8_t *mem[2];
    uint64_t *block;
    uint64_t now;
    uint64_t busy[2][MRC_MAX_PORTS];
    flight *heap;
    uint32_t nheap, capheap;
    uint8_t **pool;
    uint32_t npool, cappool;
    uint64_t rng;
    bool down;
    uint64_t posted, sent_done, verified, bytes_ok, bytes_bad;
    uint64_t pkts_sent, dropped, trimmed, duped, reordered, marked;
    bool failed;
    double wall, cpu;
};

void pair_cfg_default(pair_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->planes = 4;
    c->evs = 128;
    c->mtu = 4096;
    c->rate_gbps = 100;
    c->delay_ns = 2000;
    c->reorder_ns = 20000;
    c->down_plane = -1;
    c->msgs = 100;
    c->size = 65536;
    c->slots = 8;
    c->imm = true;
    c->mpr = 8;
    c->timeout = 8;
    c->linear_cnt = 7;
    c->exp_cnt = 7;
    c->seed = 1;
    c->icrc = true;
    c->max_ns = 60000000000ull;
}

uint32_t pair_ev(unsigned plane, unsigned i)
{
    return (uint32_t)plane << 29 | (uint32_t)(i & 0x7ff) << 18;
}

static uint64_t rnd(pair *p)
{
    uint64_t z = (p->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool chance(pair *p, double prob)
{
    return prob > 0 && (double)(rnd(p) >> 11) * (1.0 / 9007199254740992.0) < prob;
}

static void *xmalloc(size_t n)
{
    void *v = malloc(n ? n : 1);
    if (!v) {
        abort();
    }
    return v;
}

static void *eng_malloc(size_t size, void *user)
{
    (void)user;
    return malloc(size);
}

static void eng_free(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static uint64_t eng_rand(void *user)
{
    return *(uint64_t *)user;
}

/* Message m is a fixed random block with m mixed into every word: each message differs from
 * every other in every word, so a stale or misplaced byte shows, and filling or checking it
 * runs at memory speed. */
static inline uint64_t stamp(uint64_t m)
{
    return (m + 1) * 0x9e3779b97f4a7c15ull;
}

static void fill(uint8_t *buf, const uint64_t *block, uint64_t m, uint32_t size)
{
    uint64_t x = stamp(m);
    uint32_t words = size / 8;
    for (uint32_t k = 0; k < words; k++) {
        uint64_t v = block[k] ^ x;
        memcpy(buf + 8 * k, &v, 8);
    }
    uint64_t v = block[words] ^ x;
    memcpy(buf + 8 * words, &v, size - 8 * words);
}

static uint64_t check(const uint8_t *buf, const uint64_t *block, uint64_t m, uint32_t size)
{
    uint64_t x = stamp(m), diff = 0, bad = 0;
    uint32_t words = size / 8;
    for (uint32_t k = 0; k < words; k++) {
        uint64_t w;
        memcpy(&w, buf + 8 * k, 8);
        diff |= w ^ block[k] ^ x;
    }
    uint8_t tail[8];
    uint64_t v = block[words] ^ x;
    memcpy(tail, &v, 8);
    for (uint32_t b = 0; 8 * words + b < size; b++) {
        diff |= buf[8 * words + b] ^ tail[b];
    }
    if (!diff) {
        return 0;
    }
    /* something is wrong: count the bad bytes one by one */
    for (uint32_t b = 0; b < size; b++) {
        uint64_t word = block[b / 8] ^ x;
        bad += buf[b] != (uint8_t)(word >> (8 * (b % 8)));
    }
    return bad;
}

static uint8_t *buf_get(pair *p)
{
    if (p->npool) {
        return p->pool[--p->npool];
    }
    return xmalloc(PAIR_PKT_ROOM);
}

static void buf_put(pair *p, uint8_t *b)
{
    if (p->npool == p->cappool) {
        p->cappool = p->cappool ? 2 * p->cappool : 1024;
        p->pool = realloc(p->pool, p->cappool * sizeof(*p->pool));
        if (!p->pool) {
            abort();
        }
    }
    p->pool[p->npool++] = b;
}

static void heap_push(pair *p, const flight *f)
{
    if (p->nheap == p->capheap) {
        p->capheap = p->capheap ? 2 * p->capheap : 1024;
        p->heap = realloc(p->heap, p->capheap * sizeof(flight));
        if (!p->heap) {
            abort();
        }
    }
    uint32_t i = p->nheap++;
    while (i > 0 && p->heap[(i - 1) / 2].at > f->at) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = *f;
}

static flight heap_pop(pair *p)
{
    flight top = p->heap[0], last = p->heap[--p->nheap];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= p->nheap) {
            break;
        }
        if (c + 1 < p->nheap && p->heap[c + 1].at < p->heap[c].at) {
            c++;
        }
        if (p->heap[c].at >= last.at) {
            break;
        }
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (p->nheap) {
        p->heap[i] = last;
    }
    return top;
}

static void pcap_write(FILE *f, uint64_t t, const uint8_t *data, uint32_t len)
{
    uint32_t h[4] = {(uint32_t)(t / 1000000000ull), (uint32_t)(t % 1000000000ull / 1000), len, len};
    fwrite(h, sizeof(h), 1, f);
    fwrite(data, len, 1, f);
}

static bool plane_dead(const pair *p, int from, unsigned plane)
{
    return p->down && (int)plane == p->cfg.down_plane && (p->cfg.down_both || from == 0);
}

/* Puts a packet on |from|'s port: serialization, delay, and the faults it may meet. */
static void transmit(pair *p, int from, uint8_t *buf, uint32_t len, const mrc_tx_info *info)
{
    const pair_cfg *c = &p->cfg;
    unsigned plane = info->port;
    uint64_t ser = (uint64_t)((double)len * 8.0 / c->rate_gbps);
    uint64_t dep = (p->busy[from][plane] > p->now ? p->busy[from][plane] : p->now) + ser;
    p->busy[from][plane] = dep;
    p->pkts_sent++;
    bool drop = plane_dead(p, from, plane) || (from == 0 && c->dead_peer) || chance(p, c->loss);
    for (unsigned i = 0; i < c->n_ev_loss && !drop; i++) {
        drop = c->ev_loss[i].ev == info->ev && chance(p, c->ev_loss[i].p);
    }
    flight f = {.at = dep + c->delay_ns, .len = len, .side = (uint8_t)(1 - from), .buf = buf};
    f.info.port = (uint8_t)plane;
    f.info.dscp = info->dscp;
    f.info.ecn = info->ecn;
    if (!info->control && !drop) {
        double trim = c->trim + c->trim_lasthop;
        if (chance(p, trim)) {
            /* a trimming switch keeps the headers, re-marks the DSCP, and loses no time */
            uint8_t op = buf[MRC_IP6_LEN + MRC_UDP_LEN];
            bool ts = buf[MRC_IP6_LEN + MRC_UDP_LEN + 8] & 0x10;
            f.len = (uint32_t)(MRC_BASE_LEN + mrc_wire_ext_len(op, ts));
            f.info.dscp = chance(p, c->trim_lasthop / trim) ? 16 : 12;
            p->trimmed++;
        } else if (info->ecn == MRC_ECN_ECT0 && chance(p, c->ecn)) {
            f.info.ecn = MRC_ECN_CE;
            p->marked++;
        }
        /* the header says what the switch set, as a capture on the far link would see it */
        uint8_t tc = (uint8_t)(f.info.dscp << 2 | f.info.ecn);
        buf[0] = (uint8_t)(0x60 | tc >> 4);
        buf[1] = (uint8_t)((tc & 0xf) << 4 | (buf[1] & 0xf));
    }
    if (c->pcap) {
        pcap_write(c->pcap, dep, buf, f.len);
    }
    if (drop) {
        p->dropped++;
        buf_put(p, buf);
        return;
    }
    if (chance(p, c->reorder)) {
        f.at += rnd(p) % (c->reorder_ns + 1);
        p->reordered++;
    }
    if (chance(p, c->dup)) {
        flight g = f;
        g.buf = buf_get(p);
        memcpy(g.buf, buf, f.len);
        g.at += 100;
        heap_push(p, &g);
        p->duped++;
    }
    heap_push(p, &f);
}

static int connect_qps(pair *p)
{
    const pair_cfg *c = &p->cfg;
    for (int s = 0; s < 2; s++) {
        mrc_qp_attr a;
        memset(&a, 0, sizeof(a));
        a.qp_state = MRC_QPS_INIT;
        a.profile.ev_profile_id = 1;
        a.profile.cc_profile_id = 1;
        int rv = mrc_modify_qp(p->qp[s], &a,
                               MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID, 0);
        if (rv != 0) {
            return rv;
        }
        a.qp_state = MRC_QPS_RTR;
        a.dest_qp_num = mrc_qp_num(p->qp[1 - s]);
        a.rq_psn = s ? 0x00fff0 : 0x123456; /* the peer's first PSN: near the 24-bit wrap */
        a.path_mtu = c->mtu;
        a.access_flags = MRC_ACCESS_REMOTE_WRITE;
        a.ah.nports = c->planes;
        for (unsigned port = 0; port < c->planes; port++) {
            memset(a.ah.sgid[port], 0, 16);
            memset(a.ah.dgid[port], 0, 16);
            a.ah.sgid[port][0] = a.ah.dgid[port][0] = 0xfd;
            a.ah.sgid[port][14] = (uint8_t)s;
            a.ah.dgid[port][14] = (uint8_t)(1 - s);
            a.ah.sgid[port][15] = a.ah.dgid[port][15] = (uint8_t)port;
        }
        a.mpr.mpr_dest = c->mpr;
        a.wimm.max_wimm_dest = 128;
        rv = mrc_modify_qp(p->qp[s], &a,
                           MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU |
                               MRC_QP_ACCESS_FLAGS | MRC_QP_AV | MRC_QP_MPR_DEST |
                               MRC_QP_MAX_WIMM_DEST,
                           0);
        if (rv != 0) {
            return rv;
        }
        a.qp_state = MRC_QPS_RTS;
        a.sq_psn = s ? 0x123456 : 0x00fff0;
        a.mpr.mpr = c->mpr;
        a.wimm.max_wimm = 128;
        a.timeout = c->timeout;
        a.retry.linear_cnt = c->linear_cnt;
        a.retry.exp_cnt = c->exp_cnt;
        rv = mrc_modify_qp(p->qp[s], &a,
                           MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM |
                               MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
                           0);
        if (rv != 0) {
            return rv;
        }
    }
    return 0;
}

int pair_new(const pair_cfg *cfg, pair **ppair)
{
    if (cfg->planes == 0 || cfg->planes > MRC_MAX_PORTS || cfg->evs < cfg->planes ||
        cfg->slots == 0 || cfg->mtu + 256 > PAIR_PKT_ROOM) {
        return MRC_ERR_INVAL;
    }
    pair *p = calloc(1, sizeof(*p));
    if (!p) {
        return MRC_ERR_NOMEM;
    }
    p->cfg = *cfg;
    p->rng = cfg->seed;
    p->block = xmalloc(((size_t)cfg->size / 8 + 1) * 8);
    for (size_t k = 0; k <= cfg->size / 8; k++) {
        p->block[k] = rnd(p);
    }
    mrc_ev *evs = xmalloc(cfg->evs * sizeof(mrc_ev));
    for (unsigned i = 0; i < cfg->evs; i++) {
        evs[i].port = (uint8_t)(i % cfg->planes);
        evs[i].val = pair_ev(i % cfg->planes, i / cfg->planes);
    }
    int rv = 0;
    size_t memlen = (size_t)cfg->slots * (cfg->size ? cfg->size : 1);
    for (int s = 0; s < 2 && rv == 0; s++) {
        mrc_settings set;
        mrc_settings_default(&set);
        set.alloc = (mrc_allocator){eng_malloc, eng_free, NULL};
        set.cb.seed = eng_rand;
        set.user = &p->cfg.seed;
        set.nports = cfg->planes;
        set.icrc = cfg->icrc;
        for (unsigned port = 0; port < cfg->planes; port++) {
            set.addr[port][0] = 0xfd;
            set.addr[port][14] = (uint8_t)s;
            set.addr[port][15] = (uint8_t)port;
        }
        mrc_ev_profile_attr ea = {.evs = evs,
                                  .nevs = cfg->evs,
                                  .active = cfg->active,
                                  .min_active = cfg->min_active,
                                  .event_mask = 1u << MRC_EV_ASSUMED_BAD | 1u << MRC_EV_GOOD};
        mrc_cc_profile_attr ca = {.algorithm = "none"};
        mrc_qp_init_attr qa = {.max_send_wr = cfg->slots + 4,
                               .max_recv_wr = cfg->slots + 4,
                               .max_send_sge = 1,
                               .sq_sig_all = true};
        p->mem[s] = xmalloc(memlen);
        memset(p->mem[s], 0xee, memlen);
        if ((rv = mrc_context_new(&set, 0, &p->ctx[s])) != 0 ||
            (rv = mrc_ev_profile_create(p->ctx[s], 1, &ea)) != 0 ||
            (rv = mrc_cc_profile_create(p->ctx[s], 1, &ca)) != 0 ||
            (rv = mrc_cq_new(p->ctx[s], 4 * (cfg->slots + 4), &p->cq[s])) != 0) {
            break;
        }
        qa.send_cq = qa.recv_cq = p->cq[s];
        if ((rv = mrc_qp_new(p->ctx[s], &qa, &p->qp[s])) != 0 ||
            (rv = mrc_reg_mr(p->ctx[s], p->mem[s], memlen,
                             MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &p->mr[s])) != 0) {
            break;
        }
    }
    free(evs);
    if (rv == 0) {
        rv = connect_qps(p);
    }
    for (unsigned i = 0; rv == 0 && i < cfg->slots + 4; i++) {
        mrc_recv_wr r = {.wr_id = i};
        rv = mrc_post_recv(p->qp[1], &r);
    }
    if (rv != 0) {
        pair_free(p);
        return rv;
    }
    if (cfg->pcap) {
        /* libpcap file, LINKTYPE_RAW: each record is the inner IPv6 packet */
        uint32_t gh[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 101};
        fwrite(gh, sizeof(gh), 1, cfg->pcap);
    }
    *ppair = p;
    return 0;
}

void pair_free(pair *p)
{
    if (!p) {
        return;
    }
    for (int s = 0; s < 2; s++) {
        mrc_context_free(p->ctx[s]);
        free(p->mem[s]);
    }
    while (p->nheap) {
        free(heap_pop(p).buf);
    }
    for (uint32_t i = 0; i < p->npool; i++) {
        free(p->pool[i]);
    }
    free(p->pool);
    free(p->heap);
    free(p->block);
    free(p);
}

static void post_messages(pair *p)
{
    const pair_cfg *c = &p->cfg;
    while (p->posted < c->msgs && p->posted - p->verified < c->slots) {
        uint64_t m = p->posted;
        uint32_t slot = (uint32_t)(m % c->slots);
        uint8_t *src = p->mem[0] + (size_t)slot * c->size;
        fill(src, p->block, m, c->size);
        mrc_sge g = {
            .addr = (uint64_t)(uintptr_t)src, .length = c->size, .lkey = mrc_mr_lkey(p->mr[0])};
        mrc_send_wr wr = {.wr_id = m,
                          .opcode = c->imm ? MRC_WR_RDMA_WRITE_WITH_IMM : MRC_WR_RDMA_WRITE,
                          .sg_list = &g,
                          .num_sge = 1,
                          .remote_addr = (uint64_t)(uintptr_t)(p->mem[1] + (size_t)slot * c->size),
                          .rkey = mrc_mr_rkey(p->mr[1]),
                          .imm_data = (uint32_t)m};
        if (mrc_post_send(p->qp[0], &wr, p->now) != 0) {
            return;
        }
        p->posted++;
    }
}

static void verify(pair *p, uint64_t m)
{
    const pair_cfg *c = &p->cfg;
    uint8_t *dst = p->mem[1] + (size_t)(m % c->slots) * c->size;
    uint64_t bad = check(dst, p->block, m, c->size);
    p->bytes_bad += bad;
    p->bytes_ok += c->size - bad;
    p->verified++;
    /* poison the slot: its next message must bring every byte itself */
    memset(dst, 0xee, c->size);
}

static void poll(pair *p)
{
    mrc_wc wc[32];
    int n;
    while ((n = mrc_poll_cq(p->cq[0], 32, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            if (wc[i].status != MRC_WC_SUCCESS) {
                p->failed = true;
                continue;
            }
            p->sent_done++;
            if (!p->cfg.imm) {
                verify(p, wc[i].wr_id);
            }
        }
    }
    while ((n = mrc_poll_cq(p->cq[1], 32, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            if (wc[i].status != MRC_WC_SUCCESS) {
                continue;
            }
            verify(p, wc[i].imm_data);
            mrc_recv_wr r = {.wr_id = wc[i].wr_id};
            mrc_post_recv(p->qp[1], &r);
        }
    }
}

int pair_run(pair *p)
{
    const pair_cfg *c = &p->cfg;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    uint32_t all = (uint32_t)((1ull << c->planes) - 1);
    while ((p->verified < c->msgs || p->sent_done < c->msgs) && !p->failed) {
        post_messages(p);
        for (int s = 0; s < 2; s++) {
            for (;;) {
                uint32_t mask = 0;
                for (unsigned port = 0; port < c->planes; port++) {
                    mask |= (uint32_t)(p->busy[s][port] <= p->now) << port;
                }
                if (!mask) {
                    break;
                }
                mrc_tx_info info;
                uint8_t *buf = buf_get(p);
                int n = mrc_write_pkt(p->ctx[s], buf, PAIR_PKT_ROOM, mask & all, &info, p->now);
                if (n <= 0) {
                    buf_put(p, buf);
                    break;
                }
                transmit(p, s, buf, (uint32_t)n, &info);
            }
        }
        uint64_t next = p->nheap ? p->heap[0].at : UINT64_MAX;
        for (int s = 0; s < 2; s++) {
            uint64_t e = mrc_get_expiry(p->ctx[s]);
            next = e < next ? e : next;
            for (unsigned port = 0; port < c->planes; port++) {
                if (p->busy[s][port] > p->now && p->busy[s][port] < next) {
                    next = p->busy[s][port];
                }
            }
        }
        if (c->down_plane >= 0 && !p->down && c->down_at_ns < next) {
            next = c->down_at_ns > p->now ? c->down_at_ns : p->now;
        }
        if (next == UINT64_MAX || next > c->max_ns) {
            break; /* nothing can happen any more, or out of time */
        }
        p->now = next > p->now ? next : p->now;
        if (c->down_plane >= 0 && !p->down && p->now >= c->down_at_ns) {
            p->down = true;
            mrc_port_set_state(p->ctx[0], (unsigned)c->down_plane, false, p->now);
            if (c->down_both) {
                mrc_port_set_state(p->ctx[1], (unsigned)c->down_plane, false, p->now);
            }
        }
        while (p->nheap && p->heap[0].at <= p->now) {
            flight f = heap_pop(p);
            if (!(c->dead_peer && f.side == 1)) {
                mrc_read_pkt(p->ctx[f.side], f.buf, f.len, &f.info, p->now);
            }
            buf_put(p, f.buf);
        }
        for (int s = 0; s < 2; s++) {
            if (mrc_get_expiry(p->ctx[s]) <= p->now) {
                mrc_handle_expiry(p->ctx[s], p->now);
            }
        }
        poll(p);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    p->wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    p->cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    return 0;
}

void pair_result_get(const pair *p, pair_result *r)
{
    memset(r, 0, sizeof(*r));
    r->messages_completed =
        p->cfg.imm ? (p->verified < p->sent_done ? p->verified : p->sent_done) : p->sent_done;
    r->bytes_verified = p->bytes_ok;
    r->bytes_corrupt = p->bytes_bad;
    r->packets_sent = p->pkts_sent;
    r->packets_dropped = p->dropped;
    r->packets_trimmed = p->trimmed;
    r->elapsed_ns = p->now;
    mrc_qp_get_stats(p->qp[0], &r->req);
    mrc_qp_get_stats(p->qp[1], &r->rsp);
    mrc_ctx_get_stats(p->ctx[0], &r->ctx_req);
    mrc_ctx_get_stats(p->ctx[1], &r->ctx_rsp);
    r->packets_retransmitted = r->req.retx_pkts;
    r->qp_error = r->req.state == MRC_QPS_ERR || r->rsp.state == MRC_QPS_ERR;
    memcpy(r->ev_states, r->req.ev_count, sizeof(r->ev_states));
    r->wall_s = p->wall;
    r->cpu_s = p->cpu;
}

void pair_result_json(const pair_result *r, FILE *out)
{
    static const char *const states[4] = {"good", "skip", "assumed_bad", "denied"};
    static const char *const causes[MRC_RETX_CAUSES] = {"timeout", "nack", "inferred", "probe",
                                                        "port"};
    double gbps = r->elapsed_ns ? (double)r->bytes_verified * 8.0 / (double)r->elapsed_ns : 0;
    double wall_gbps = r->wall_s > 0 ? (double)r->bytes_verified * 8.0 / r->wall_s / 1e9 : 0;
    /* per second of the one CPU it ran on: what another tenant of the machine took is not in it */
    double cpu_gbps = r->cpu_s > 0 ? (double)r->bytes_verified * 8.0 / r->cpu_s / 1e9 : 0;
    fprintf(out,
            "{\n  \"messages_completed\": %llu,\n  \"bytes_verified\": %llu,\n"
            "  \"bytes_corrupt\": %llu,\n  \"packets_sent\": %llu,\n"
            "  \"data_packets_sent\": %llu,\n  \"packets_retransmitted\": %llu,\n"
            "  \"retransmitted_by_cause\": {",
            (unsigned long long)r->messages_completed, (unsigned long long)r->bytes_verified,
            (unsigned long long)r->bytes_corrupt, (unsigned long long)r->packets_sent,
            (unsigned long long)r->req.data_pkts_sent,
            (unsigned long long)r->packets_retransmitted);
    for (int i = 0; i < MRC_RETX_CAUSES; i++) {
        fprintf(out, "%s\"%s\": %llu", i ? ", " : "", causes[i],
                (unsigned long long)r->req.retx_by_cause[i]);
    }
    fprintf(out, "},\n  \"nacks\": {");
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        fprintf(out, "%s\"%s\": %llu", i ? ", " : "", mrc_nack_name(i),
                (unsigned long long)r->req.nacks_rcvd[i]);
    }
    fprintf(out,
            "},\n  \"timeouts\": %llu,\n  \"sacks\": %llu,\n  \"ecn_echoes\": %llu,\n"
            "  \"probes_sent\": %llu,\n  \"duplicates_received\": %llu,\n  \"ev_states\": {",
            (unsigned long long)r->req.timeouts, (unsigned long long)r->req.sacks_rcvd,
            (unsigned long long)r->req.ecn_echoes, (unsigned long long)r->req.probes_sent,
            (unsigned long long)r->rsp.dup_pkts_rcvd);
    for (int i = 0; i < 4; i++) {
        fprintf(out, "%s\"%s\": %u", i ? ", " : "", states[i], r->ev_states[i]);
    }
    fprintf(out,
            "},\n  \"ev_transitions\": %llu,\n  \"faults\": {\"dropped\": %llu, "
            "\"trimmed\": %llu},\n  \"garbage_received\": %llu,\n  \"qp_error\": %s,\n"
            "  \"elapsed_ns\": %llu,\n  \"goodput_gbps\": %.3f,\n  \"wall_s\": %.3f,\n"
            "  \"wall_goodput_gbps\": %.3f,\n  \"cpu_s\": %.3f,\n  \"cpu_goodput_gbps\": %.3f\n}\n",
            (unsigned long long)(r->req.ev_transitions[0][1] + r->req.ev_transitions[0][2] +
                                 r->req.ev_transitions[1][0] + r->req.ev_transitions[1][2] +
                                 r->req.ev_transitions[2][0] + r->req.ev_transitions[2][1]),
            (unsigned long long)r->packets_dropped, (unsigned long long)r->packets_trimmed,
            (unsigned long long)(r->ctx_req.garbage + r->ctx_rsp.garbage),
            r->qp_error ? "true" : "false", (unsigned long long)r->elapsed_ns, gbps, r->wall_s,
            wall_gbps, r->cpu_s, cpu_gbps);
}

mrc_context *pair_ctx(pair *p, int side)
{
    return p->ctx[side];
}

mrc_qp *pair_qp(pair *p, int side)
{
    return p->qp[side];
}
