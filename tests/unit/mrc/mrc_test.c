/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrc unit tests: a seeded PRNG, a clock, and the wire vectors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrc_test.h"

uint64_t mrc_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint32_t mrc_test_rand_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)((mrc_test_rand(state) >> 32) % n);
}

void mrc_test_rand_fill(uint64_t *state, uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(mrc_test_rand(state) >> 56);
    }
}

double mrc_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* One line of a vector file: a field, a comment, or bytes as pairs of hex digits. */
static void parse_line(mrc_test_vec *vec, const char *line, const char *path, int lineno)
{
    static const char field[] = "# field ";

    if (strncmp(line, field, sizeof(field) - 1) == 0) {
        const char *name = line + sizeof(field) - 1;
        const char *eq = strchr(name, '=');
        ck_assert_msg(eq && eq > name, "%s:%d: a field line without name=value", path, lineno);
        ck_assert_msg(vec->nfields < MRC_TEST_VEC_FIELDS, "%s:%d: too many fields", path, lineno);
        mrc_test_field *f = &vec->fields[vec->nfields++];
        size_t nlen = (size_t)(eq - name);
        size_t vlen = strcspn(eq + 1, "\r\n");
        ck_assert_msg(nlen < sizeof(f->name) && vlen < sizeof(f->value), "%s:%d: too long", path,
                      lineno);
        memcpy(f->name, name, nlen);
        f->name[nlen] = '\0';
        memcpy(f->value, eq + 1, vlen);
        f->value[vlen] = '\0';
        ck_assert_msg(!mrc_test_vec_get(vec, f->name) || mrc_test_vec_get(vec, f->name) == f->value,
                      "%s:%d: field %s listed twice", path, lineno, f->name);
        return;
    }
    if (line[0] == '#') {
        return;
    }
    for (const char *p = line; *p;) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }
        int hi = hexval(p[0]);
        int lo = hexval(p[1]);
        ck_assert_msg(hi >= 0 && lo >= 0, "%s:%d: not a hex byte: %.8s", path, lineno, p);
        ck_assert_msg(vec->len < MRC_TEST_VEC_MAX, "%s:%d: too many bytes", path, lineno);
        vec->data[vec->len++] = (uint8_t)(hi << 4 | lo);
        p += 2;
    }
}

mrc_test_vec *mrc_test_vec_load(const char *name)
{
    char path[512];
    char line[1024];
    int lineno = 0;
    mrc_test_vec *vec = calloc(1, sizeof(*vec));
    ck_assert_ptr_nonnull(vec);
    ck_assert_uint_lt(strlen(name), sizeof(vec->name));
    strcpy(vec->name, name);
    snprintf(path, sizeof(path), "%s/%s.hex", MRC_TEST_VECTORS, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        ck_assert_msg(strchr(line, '\n') || feof(f), "%s:%d: line too long", path, lineno);
        parse_line(vec, line, path, lineno);
    }
    fclose(f);
    ck_assert_msg(vec->len > 0 && vec->nfields > 0, "%s: no bytes or no fields", path);
    return vec;
}

void mrc_test_vec_free(mrc_test_vec *vec)
{
    free(vec);
}

const char *mrc_test_vec_get(const mrc_test_vec *vec, const char *name)
{
    for (size_t i = 0; i < vec->nfields; i++) {
        if (strcmp(vec->fields[i].name, name) == 0) {
            return vec->fields[i].value;
        }
    }
    return NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

size_t mrc_test_vec_names(char (*names)[64], size_t max)
{
    size_t n = 0;
    DIR *dir = opendir(MRC_TEST_VECTORS);
    ck_assert_msg(dir != NULL, "cannot open %s", MRC_TEST_VECTORS);
    for (struct dirent *de; (de = readdir(dir)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (len <= 4 || strcmp(de->d_name + len - 4, ".hex") != 0) {
            continue;
        }
        ck_assert_uint_lt(n, max);
        ck_assert_uint_lt(len - 4, 64);
        memcpy(names[n], de->d_name, len - 4);
        names[n][len - 4] = '\0';
        n++;
    }
    closedir(dir);
    qsort(names, n, sizeof(names[0]), cmp_names);
    return n;
}

/* Test nodes. */

static void *node_malloc(size_t size, void *user)
{
    mrc_test_alloc *a = user;
    if (a->fail_after >= 0 && a->total >= a->fail_after) {
        return NULL;
    }
    void *p = malloc(size);
    if (p) {
        a->live++;
        a->total++;
    }
    return p;
}

static void node_free(void *ptr, void *user)
{
    mrc_test_alloc *a = user;
    if (ptr) {
        a->live--;
        free(ptr);
    }
}

static uint64_t node_rand(void *user)
{
    return ((const mrc_test_node *)user)->seed;
}

void mrc_test_opts_default(mrc_test_opts *o)
{
    memset(o, 0, sizeof(*o));
    mrc_settings_default(&o->set);
    o->ports = 2;
    o->evs_per_port = 4;
    o->event_mask = 0xf;
    o->mtu = 1024;
    o->mpr = 1;
    o->mpr_dest = 1;
    o->max_wimm = 16;
    o->max_wimm_dest = 16;
    o->timeout = 10;
    o->linear_cnt = 7;
    o->exp_cnt = 7;
    o->sq_psn = 0x1000;
    o->rq_psn = 0x2000;
    o->qp_access = MRC_ACCESS_REMOTE_WRITE;
    o->mr_access = MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE;
    o->memlen = 65536;
    o->max_send_wr = 64;
    o->max_recv_wr = 64;
    o->cqe = 1024;
    o->seed = 1;
}

uint32_t mrc_test_ev(unsigned port, unsigned i)
{
    return (uint32_t)(port + 1) << 24 | (uint32_t)(i + 1) << 8 | 0x5a;
}

unsigned mrc_test_ev_port(uint32_t ev)
{
    return (ev >> 24) - 1;
}

void mrc_test_addr(uint8_t addr[16], unsigned side, unsigned port)
{
    memset(addr, 0, 16);
    addr[0] = 0xfd;
    addr[14] = (uint8_t)side;
    addr[15] = (uint8_t)port;
}

void mrc_test_node_new(mrc_test_node *n, const mrc_test_opts *o, unsigned side)
{
    memset(n, 0, sizeof(*n));
    n->side = side;
    n->ports = o->ports;
    n->mtu = o->mtu;
    n->icrc = o->set.icrc;
    n->seed = o->seed;
    n->alloc.fail_after = -1;
    mrc_settings s = o->set;
    s.alloc = (mrc_allocator){node_malloc, node_free, &n->alloc};
    s.cb.seed = node_rand;
    s.user = n;
    s.nports = o->ports;
    for (unsigned port = 0; port < o->ports; port++) {
        mrc_test_addr(s.addr[port], side, port);
    }
    ck_assert_int_eq(mrc_context_new(&s, 0, &n->ctx), 0);
    unsigned nevs = o->ports * o->evs_per_port;
    mrc_ev *evs = calloc(nevs, sizeof(*evs));
    ck_assert_ptr_nonnull(evs);
    for (unsigned i = 0; i < nevs; i++) {
        evs[i].port = (uint8_t)(i % o->ports);
        evs[i].val = mrc_test_ev(i % o->ports, i / o->ports);
    }
    mrc_ev_profile_attr ea = {.evs = evs,
                              .nevs = nevs,
                              .active = o->active,
                              .min_active = o->min_active,
                              .event_mask = o->event_mask};
    ck_assert_int_eq(mrc_ev_profile_create(n->ctx, 1, &ea), 0);
    free(evs);
    mrc_cc_profile_attr ca = {.algorithm = "none"};
    ck_assert_int_eq(mrc_cc_profile_create(n->ctx, 1, &ca), 0);
    ck_assert_int_eq(mrc_cq_new(n->ctx, o->cqe, &n->cq), 0);
    n->memlen = o->memlen;
    n->mem = calloc(1, o->memlen);
    ck_assert_ptr_nonnull(n->mem);
    ck_assert_int_eq(mrc_reg_mr(n->ctx, n->mem, o->memlen, o->mr_access, &n->mr), 0);
    mrc_qp_init_attr qa = {.send_cq = n->cq,
                           .recv_cq = n->cq,
                           .max_send_wr = o->max_send_wr,
                           .max_recv_wr = o->max_recv_wr,
                           .max_send_sge = MRC_MAX_SGE};
    ck_assert_int_eq(mrc_qp_new(n->ctx, &qa, &n->qp), 0);
}

void mrc_test_node_free(mrc_test_node *n)
{
    if (n->ctx) {
        mrc_qp_free(n->qp);
        mrc_cq_free(n->cq);
    }
    mrc_context_free(n->ctx);
    free(n->mem);
    memset(n, 0, sizeof(*n));
}

void mrc_test_attr(mrc_qp_attr *a, const mrc_test_opts *o, unsigned side, uint32_t dest_qpn)
{
    memset(a, 0, sizeof(*a));
    a->dest_qp_num = dest_qpn;
    a->sq_psn = o->sq_psn;
    a->rq_psn = o->rq_psn;
    a->path_mtu = o->mtu;
    a->access_flags = o->qp_access;
    a->ah.nports = o->ports;
    for (unsigned port = 0; port < o->ports; port++) {
        mrc_test_addr(a->ah.sgid[port], side, port);
        mrc_test_addr(a->ah.dgid[port], side ^ 1, port);
    }
    a->mpr.mpr = o->mpr;
    a->mpr.mpr_dest = o->mpr_dest;
    a->wimm.max_wimm = o->max_wimm;
    a->wimm.max_wimm_dest = o->max_wimm_dest;
    a->timeout = o->timeout;
    a->profile.ev_profile_id = 1;
    a->profile.cc_profile_id = 1;
    a->retry.linear_cnt = o->linear_cnt;
    a->retry.exp_cnt = o->exp_cnt;
    a->cap = o->cap;
}

void mrc_test_node_up(mrc_test_node *n, const mrc_test_opts *o, uint32_t dest_qpn, uint64_t now)
{
    mrc_qp_attr a;
    mrc_test_attr(&a, o, n->side, dest_qpn);
    a.qp_state = MRC_QPS_INIT;
    ck_assert_int_eq(mrc_modify_qp(n->qp, &a, MRC_TEST_INIT_MASK, now), 0);
    a.qp_state = MRC_QPS_RTR;
    ck_assert_int_eq(mrc_modify_qp(n->qp, &a, MRC_TEST_RTR_MASK, now), 0);
    a.qp_state = MRC_QPS_RTS;
    ck_assert_int_eq(mrc_modify_qp(n->qp, &a, MRC_TEST_RTS_MASK, now), 0);
}

void mrc_test_pair_new(mrc_test_node *a, const mrc_test_opts *oa, mrc_test_node *b,
                       const mrc_test_opts *ob, uint64_t now)
{
    mrc_test_opts ca = *oa, cb = *ob;
    ca.rq_psn = ob->sq_psn;
    cb.rq_psn = oa->sq_psn;
    mrc_test_node_new(a, &ca, 0);
    mrc_test_node_new(b, &cb, 1);
    mrc_test_node_up(a, &ca, mrc_qp_num(b->qp), now);
    mrc_test_node_up(b, &cb, mrc_qp_num(a->qp), now);
}

void mrc_test_pkt_decode(mrc_test_pkt *p, bool icrc)
{
    int rv = mrc_wire_decode(p->buf, p->len, MRC_DEFAULT_UDP_PORT, icrc ? 0 : MRC_DECODE_NO_ICRC,
                             &p->pkt);
    ck_assert_msg(rv == 0, "a packet (%zu bytes, opcode 0x%02x) does not decode: %s", p->len,
                  p->len > MRC_IP6_LEN + MRC_UDP_LEN ? p->buf[MRC_IP6_LEN + MRC_UDP_LEN] : 0,
                  mrc_wire_strerror(rv));
}

int mrc_test_pull_mask(mrc_test_node *n, mrc_test_pkt *p, uint32_t mask, uint64_t now)
{
    int rv = mrc_write_pkt(n->ctx, p->buf, sizeof(p->buf), mask, &p->info, now);
    ck_assert_msg(rv >= 0, "mrc_write_pkt: %s", mrc_strerror(rv));
    p->len = (size_t)rv;
    if (rv > 0) {
        mrc_test_pkt_decode(p, n->icrc);
    }
    return rv;
}

int mrc_test_pull(mrc_test_node *n, mrc_test_pkt *p, uint64_t now)
{
    return mrc_test_pull_mask(n, p, UINT32_MAX, now);
}

unsigned mrc_test_pull_all(mrc_test_node *n, mrc_test_pkt *out, unsigned max, uint64_t now)
{
    unsigned k = 0;
    while (k < max && mrc_test_pull(n, &out[k], now) > 0) {
        k++;
    }
    return k;
}

mrc_rx_info mrc_test_rx(const mrc_test_pkt *p)
{
    return (mrc_rx_info){.port = p->info.port, .dscp = p->info.dscp, .ecn = p->info.ecn};
}

int mrc_test_push(mrc_test_node *n, const mrc_test_pkt *p, const mrc_rx_info *info, uint64_t now)
{
    mrc_rx_info rx = mrc_test_rx(p);
    return mrc_read_pkt(n->ctx, p->buf, p->len, info ? info : &rx, now);
}

bool mrc_test_is_data(const mrc_test_pkt *p)
{
    uint8_t op = p->pkt.bth.opcode;
    return op >= MRC_OP_WRITE_FIRST && op <= MRC_OP_WRITE_ONLY_IMM;
}

unsigned mrc_test_pump(mrc_test_node *a, mrc_test_node *b, uint64_t now, mrc_test_filter f,
                       void *user)
{
    mrc_test_pkt *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    unsigned moved = 0;
    for (unsigned round = 0;; round++) {
        ck_assert_msg(round < 1000000, "the link never goes quiet");
        bool any = false;
        for (unsigned from = 0; from < 2; from++) {
            mrc_test_node *x = from ? b : a, *y = from ? a : b;
            while (mrc_test_pull(x, p, now) > 0) {
                mrc_rx_info info = mrc_test_rx(p);
                any = true;
                moved++;
                if (!f || f(user, from, p, &info)) {
                    mrc_test_push(y, p, &info, now);
                }
            }
        }
        if (!any) {
            break;
        }
    }
    free(p);
    return moved;
}

uint64_t mrc_test_expiry(const mrc_test_node *a, const mrc_test_node *b)
{
    uint64_t e = mrc_get_expiry(a->ctx);
    if (b && mrc_get_expiry(b->ctx) < e) {
        e = mrc_get_expiry(b->ctx);
    }
    return e;
}

uint64_t mrc_test_run(mrc_test_node *a, mrc_test_node *b, uint64_t now, uint64_t until,
                      mrc_test_filter f, void *user)
{
    for (unsigned i = 0;; i++) {
        ck_assert_msg(i < 10000000, "timers keep firing at %llu", (unsigned long long)now);
        mrc_test_pump(a, b, now, f, user);
        uint64_t e = mrc_test_expiry(a, b);
        if (e > until) {
            return now;
        }
        now = e > now ? e : now;
        mrc_handle_expiry(a->ctx, now);
        mrc_handle_expiry(b->ctx, now);
    }
}

void mrc_test_pkt_init(mrc_pkt *pkt, const mrc_test_node *to, uint8_t opcode, unsigned port,
                       uint32_t ev, uint32_t psn)
{
    bool data = opcode >= MRC_OP_WRITE_FIRST && opcode <= MRC_OP_WRITE_ONLY_IMM;
    memset(pkt, 0, sizeof(*pkt));
    pkt->ip.tc = data ? (uint8_t)(4 << 2 | MRC_ECN_ECT0) : (uint8_t)(46 << 2);
    pkt->ip.flowlabel = ev >> 16;
    pkt->ip.nxt = 17;
    pkt->ip.hlim = 64;
    mrc_test_addr(pkt->ip.src, to->side ^ 1, port);
    mrc_test_addr(pkt->ip.dst, to->side, port);
    pkt->udp.sport = (uint16_t)ev;
    pkt->udp.dport = MRC_DEFAULT_UDP_PORT;
    pkt->bth.opcode = opcode;
    pkt->bth.pkey = 0xffff;
    pkt->bth.dqpn = to->qp ? mrc_qp_num(to->qp) : MRC_TEST_PEER_QPN;
    pkt->bth.psn = psn & 0xffffff;
}

void mrc_test_build_raw(mrc_test_pkt *out, const mrc_pkt *pkt, const void *payload, size_t len,
                        bool icrc)
{
    size_t h = mrc_wire_encode(out->buf, sizeof(out->buf), pkt, len);
    ck_assert_msg(h > 0 && h + len + 8 <= sizeof(out->buf), "cannot encode the packet");
    if (len) {
        memcpy(out->buf + h, payload, len);
    }
    size_t pad = (4 - ((h + len) & 3)) & 3;
    if (icrc) {
        out->len = mrc_wire_finish(out->buf, sizeof(out->buf), h + len);
    } else {
        memset(out->buf + h + len, 0, pad + MRC_ICRC_LEN);
        out->len = h + len + pad + MRC_ICRC_LEN;
    }
    ck_assert_uint_eq(out->len, h + len + pad + MRC_ICRC_LEN);
    memset(&out->info, 0, sizeof(out->info));
    out->info.ev = (pkt->ip.flowlabel & 0xffff) << 16 | pkt->udp.sport;
    out->info.port = pkt->ip.src[15];
    out->info.dscp = pkt->ip.tc >> 2;
    out->info.ecn = pkt->ip.tc & 3;
    memcpy(out->info.dst, pkt->ip.dst, 16);
    out->pkt = *pkt;
    out->pkt.payload = len ? out->buf + h : NULL;
    out->pkt.payload_len = len;
}

void mrc_test_build(mrc_test_pkt *out, const mrc_pkt *pkt, const void *payload, size_t len,
                    bool icrc)
{
    mrc_test_build_raw(out, pkt, payload, len, icrc);
    mrc_test_pkt_decode(out, icrc);
}

void mrc_test_build_data(mrc_test_pkt *out, const mrc_test_node *to, uint8_t opcode, uint32_t psn,
                         uint16_t msn, uint16_t rqmsn, uint64_t va, uint32_t rkey, uint32_t dmalen,
                         const void *payload, size_t len, uint32_t ev, unsigned port)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, opcode, port, ev, psn);
    pkt.has = MRC_HAS_METH | MRC_HAS_TSETH | MRC_HAS_RETH;
    pkt.bth.ts = 1;
    pkt.meth.msn = msn;
    pkt.meth.rqmsn = rqmsn;
    pkt.tseth.ts = (uint16_t)(psn * 7 + 3);
    pkt.tseth.fmt = MRC_TS_FORMAT;
    pkt.reth.va = va;
    pkt.reth.rkey = rkey;
    pkt.reth.dmalen = dmalen;
    if (opcode == MRC_OP_WRITE_LAST_IMM || opcode == MRC_OP_WRITE_ONLY_IMM) {
        pkt.has |= MRC_HAS_IMM;
        pkt.imm = 0x1000u + msn;
    }
    mrc_test_build(out, &pkt, payload, len, to->icrc);
}

void mrc_test_build_sack(mrc_test_pkt *out, const mrc_test_node *to, uint32_t cack, int16_t ack_off,
                         int16_t sack_off, uint64_t bitmap, uint8_t m, uint32_t ev, unsigned port)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, MRC_OP_SACK, port, mrc_test_ev(port, 0), cack);
    pkt.has = MRC_HAS_SETH;
    pkt.seth.m = m;
    pkt.seth.ack_psn_offset = ack_off;
    pkt.seth.entropy = ev;
    pkt.seth.cack_psn = cack & 0xffffff;
    pkt.seth.sack_offset = sack_off;
    pkt.seth.bitmap = bitmap;
    mrc_test_build(out, &pkt, NULL, 0, to->icrc);
}

void mrc_test_build_nack(mrc_test_pkt *out, const mrc_test_node *to, uint8_t reason, uint32_t psn,
                         uint32_t ev, unsigned port)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, MRC_OP_NACK, port, mrc_test_ev(port, 0), psn);
    pkt.has = MRC_HAS_NETH;
    pkt.neth.reason = reason;
    pkt.neth.entropy = ev;
    pkt.neth.nack_psn = psn & 0xffffff;
    pkt.neth.cc_type = 2;
    mrc_test_build(out, &pkt, NULL, 0, to->icrc);
}

void mrc_test_build_ack(mrc_test_pkt *out, const mrc_test_node *to, uint8_t syndrome, uint32_t msn,
                        unsigned port)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, MRC_OP_ACK, port, mrc_test_ev(port, 0), 0);
    pkt.has = MRC_HAS_AETH;
    pkt.aeth.syndrome = syndrome;
    pkt.aeth.msn = msn & 0xffffff;
    mrc_test_build(out, &pkt, NULL, 0, to->icrc);
}

void mrc_test_build_probe(mrc_test_pkt *out, const mrc_test_node *to, uint16_t probe_id,
                          uint32_t psn, uint32_t ev, unsigned port)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, MRC_OP_PROBE, port, ev, psn);
    pkt.ip.tc = (uint8_t)(4 << 2 | MRC_ECN_ECT0);
    pkt.bth.ackreq = 1;
    pkt.has = MRC_HAS_PETH;
    pkt.peth.probe_id = probe_id;
    pkt.peth.ts.ts = (uint16_t)(probe_id * 13 + 5);
    pkt.peth.ts.fmt = MRC_TS_FORMAT;
    mrc_test_build(out, &pkt, NULL, 0, to->icrc);
}

int mrc_test_post_write(mrc_test_node *n, uint64_t wr_id, bool imm, uint32_t imm_data, size_t loff,
                        uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t now)
{
    mrc_sge g = {.addr = mrc_test_va(n, loff), .length = len, .lkey = mrc_mr_lkey(n->mr)};
    mrc_send_wr wr = {.wr_id = wr_id,
                      .opcode = imm ? MRC_WR_RDMA_WRITE_WITH_IMM : MRC_WR_RDMA_WRITE,
                      .send_flags = MRC_SEND_SIGNALED,
                      .sg_list = &g,
                      .num_sge = 1,
                      .remote_addr = raddr,
                      .rkey = rkey,
                      .imm_data = imm_data};
    return mrc_post_send(n->qp, &wr, now);
}

void mrc_test_post_recvs(mrc_test_node *n, uint64_t first, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        mrc_recv_wr r = {.wr_id = first + i};
        ck_assert_int_eq(mrc_post_recv(n->qp, &r), 0);
    }
}

uint64_t mrc_test_va(const mrc_test_node *n, size_t off)
{
    return (uint64_t)(uintptr_t)(n->mem + off);
}

int mrc_test_poll(mrc_test_node *n, mrc_wc *wc, int max)
{
    return mrc_poll_cq(n->cq, max, wc);
}

mrc_qp_stats mrc_test_stats(const mrc_test_node *n)
{
    mrc_qp_stats st;
    ck_assert_int_eq(mrc_qp_get_stats(n->qp, &st), 0);
    return st;
}

mrc_ctx_stats mrc_test_ctx_stats(const mrc_test_node *n)
{
    mrc_ctx_stats st;
    mrc_ctx_get_stats(n->ctx, &st);
    return st;
}

mrc_ev_stats mrc_test_ev_stats(const mrc_test_node *n, uint32_t ev)
{
    mrc_ev_stats s;
    for (unsigned i = 0; i < mrc_qp_ev_count(n->qp); i++) {
        ck_assert_int_eq(mrc_qp_get_ev_stats(n->qp, i, &s), 0);
        if (s.ev == ev) {
            return s;
        }
    }
    ck_abort_msg("the QP has no EV 0x%08x", ev);
    return s;
}

/* Every counter of mrc_qp_stats by name: element size, count. */
typedef struct stat_field {
    const char *name;
    size_t off, elem, count;
} stat_field;

#define SF64(m)                                                                                    \
    {                                                                                              \
#m, offsetof(mrc_qp_stats, m), 8, sizeof(((mrc_qp_stats *)0)->m) / 8                       \
    }
#define SF32(m)                                                                                    \
    {                                                                                              \
#m, offsetof(mrc_qp_stats, m), 4, sizeof(((mrc_qp_stats *)0)->m) / 4                       \
    }

static const stat_field qp_stat_fields[] = {
    SF64(data_pkts_sent), SF64(data_bytes_sent), SF64(retx_pkts),       SF64(retx_bytes),
    SF64(retx_by_cause),  SF64(sacks_sent),      SF64(sacks_rcvd),      SF64(acks_sent),
    SF64(acks_rcvd),      SF64(nacks_sent),      SF64(nacks_rcvd),      SF64(timeouts),
    SF64(ecn_echoes),     SF64(always_skips),    SF64(probes_sent),     SF64(probes_answered),
    SF64(probes_rcvd),    SF64(data_pkts_rcvd),  SF64(data_bytes_rcvd), SF64(dup_pkts_rcvd),
    SF64(msgs_sent_done), SF64(msgs_rcvd_done),  SF64(ev_transitions),  SF64(floor_hits),
    SF32(ev_count),       SF32(inflight_pkts),   SF32(state),
};

const char *mrc_test_qp_stats_diff(const mrc_qp_stats *a, const mrc_qp_stats *b)
{
    static char msg[160];
    for (size_t f = 0; f < sizeof(qp_stat_fields) / sizeof(qp_stat_fields[0]); f++) {
        const stat_field *sf = &qp_stat_fields[f];
        for (size_t i = 0; i < sf->count; i++) {
            const uint8_t *pa = (const uint8_t *)a + sf->off + i * sf->elem;
            const uint8_t *pb = (const uint8_t *)b + sf->off + i * sf->elem;
            uint64_t va = 0, vb = 0;
            if (sf->elem == 8) {
                memcpy(&va, pa, 8);
                memcpy(&vb, pb, 8);
            } else {
                uint32_t x, y;
                memcpy(&x, pa, 4);
                memcpy(&y, pb, 4);
                va = x;
                vb = y;
            }
            if (va != vb) {
                snprintf(msg, sizeof(msg), "%s[%zu]: %llu -> %llu", sf->name, i,
                         (unsigned long long)va, (unsigned long long)vb);
                return msg;
            }
        }
    }
    return "";
}

void mrc_test_snap_take(mrc_test_snap *s, const mrc_test_node *n)
{
    memset(s, 0, sizeof(*s));
    s->st = mrc_test_stats(n);
    s->cst = mrc_test_ctx_stats(n);
    s->nev = mrc_qp_ev_count(n->qp);
    ck_assert_uint_le(s->nev, 64);
    for (unsigned i = 0; i < s->nev; i++) {
        ck_assert_int_eq(mrc_qp_get_ev_stats(n->qp, i, &s->ev[i]), 0);
    }
    s->memlen = n->memlen;
    s->mem = malloc(n->memlen);
    ck_assert_ptr_nonnull(s->mem);
    memcpy(s->mem, n->mem, n->memlen);
}

static bool ev_stats_same(const mrc_ev_stats *a, const mrc_ev_stats *b)
{
    return a->ev == b->ev && a->port == b->port && a->state == b->state && a->active == b->active &&
           a->pkts_sent == b->pkts_sent && a->retx_sent == b->retx_sent && a->acked == b->acked &&
           a->lost == b->lost && a->timeouts == b->timeouts && a->ecn == b->ecn &&
           a->trims == b->trims && a->transitions == b->transitions &&
           a->probes_sent == b->probes_sent && a->probes_ok == b->probes_ok &&
           a->probes_lost == b->probes_lost && a->last_rtt_ns == b->last_rtt_ns &&
           a->min_rtt_ns == b->min_rtt_ns;
}

void mrc_test_snap_check(const mrc_test_snap *s, const mrc_test_node *n, const char *what)
{
    mrc_qp_stats st = mrc_test_stats(n);
    mrc_ctx_stats c = mrc_test_ctx_stats(n);
    const char *d = mrc_test_qp_stats_diff(&s->st, &st);
    MRC_REQUIRE(d[0] == '\0', "%s changed the QP's stats: %s", what, d);
    MRC_REQUIRE(c.pkts_sent == s->cst.pkts_sent && c.ep_reqs_rcvd == s->cst.ep_reqs_rcvd &&
                    c.ep_rsps_rcvd == s->cst.ep_rsps_rcvd && c.ep_timeouts == s->cst.ep_timeouts &&
                    c.psu_sent == s->cst.psu_sent && c.psu_rcvd == s->cst.psu_rcvd &&
                    c.ev_events_dropped == s->cst.ev_events_dropped,
                "%s changed the context's counters", what);
    MRC_REQUIRE(mrc_qp_ev_count(n->qp) == s->nev, "%s changed the EV count", what);
    for (unsigned i = 0; i < s->nev; i++) {
        mrc_ev_stats e;
        ck_assert_int_eq(mrc_qp_get_ev_stats(n->qp, i, &e), 0);
        MRC_REQUIRE(ev_stats_same(&e, &s->ev[i]), "%s changed EV 0x%08x", what, e.ev);
    }
    MRC_REQUIRE(n->memlen == s->memlen && memcmp(n->mem, s->mem, s->memlen) == 0,
                "%s changed the memory", what);
}

void mrc_test_snap_free(mrc_test_snap *s)
{
    free(s->mem);
    s->mem = NULL;
}
