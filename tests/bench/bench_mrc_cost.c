/* SPDX-License-Identifier: MIT */
/* The engine's own cost per data packet on each side, for callgrind: two engines wired back to
 * back with no link model, each side's work behind one non-inlined function. */
#include <mrcfab/mrc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOM 16384
#define BURST_MAX 64

static uint64_t now_ns;
static uint8_t bufs[2][BURST_MAX][ROOM];

static void *bm_malloc(size_t n, void *u)
{
    (void)u;
    return malloc(n);
}

static void bm_free(void *p, void *u)
{
    (void)u;
    free(p);
}

/* GCC's noipa keeps the functions below from being merged (identical ones would be) or
 * inlined; clang has no such pass and no such attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define SIDE __attribute__((noipa))
#else
#define SIDE __attribute__((noinline))
#endif

/* Each side's work behind functions of its own. The sender:
 * writing data packets, and taking in the SACKs they earn. */
SIDE int side_send_write(mrc_context *c, mrc_tx_pkt *p, unsigned n)
{
    if (n == 1) {
        int rv = mrc_write_pkt(c, p->data, p->room, ~0u, &p->info, now_ns);
        p->len = rv > 0 ? (size_t)rv : 0;
        return rv > 0;
    }
    return mrc_write_pkts(c, p, n, ~0u, now_ns);
}

SIDE void side_send_read(mrc_context *c, const mrc_rx_pkt *p, unsigned n)
{
    if (n == 1) {
        mrc_read_pkt(c, p->data, p->len, &p->info, now_ns);
    } else {
        mrc_read_pkts(c, p, n, now_ns);
    }
}

/* The receiver: taking data packets in, and writing their answers. */
SIDE void side_recv_read(mrc_context *c, const mrc_rx_pkt *p, unsigned n)
{
    if (n == 1) {
        mrc_read_pkt(c, p->data, p->len, &p->info, now_ns);
    } else {
        mrc_read_pkts(c, p, n, now_ns);
    }
}

SIDE int side_recv_write(mrc_context *c, mrc_tx_pkt *p, unsigned n)
{
    if (n == 1) {
        int rv = mrc_write_pkt(c, p->data, p->room, ~0u, &p->info, now_ns);
        p->len = rv > 0 ? (size_t)rv : 0;
        return rv > 0;
    }
    return mrc_write_pkts(c, p, n, ~0u, now_ns);
}

/* What one side wrote, as the other side receives it. */
static unsigned deliver(const mrc_tx_pkt *tx, unsigned n, mrc_rx_pkt *rx)
{
    for (unsigned k = 0; k < n; k++) {
        rx[k] = (mrc_rx_pkt){
            .data = tx[k].data,
            .len = tx[k].len,
            .info = {.port = tx[k].info.port, .ecn = tx[k].info.ecn, .dscp = tx[k].info.dscp}};
    }
    return n;
}

static void must(int rv, const char *what)
{
    if (rv != 0) {
        fprintf(stderr, "bench_mrc_cost: %s: %s\n", what, mrc_strerror(rv));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    unsigned long npkts = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
    unsigned burst = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
    bool icrc = argc > 3 && strcmp(argv[3], "icrc") == 0;
    uint32_t mtu = 4096, msg = 1 << 20, planes = 8;
    if (burst == 0 || burst > BURST_MAX) {
        fprintf(stderr, "usage: bench_mrc_cost [packets [burst (1..%d) [icrc]]]\n", BURST_MAX);
        return 2;
    }
    mrc_context *ctx[2];
    mrc_qp *qp[2];
    mrc_cq *cq[2];
    mrc_mr *mr[2];
    uint8_t *mem[2];
    mrc_ev evs[256];
    for (unsigned i = 0; i < 256; i++) {
        evs[i] =
            (mrc_ev){.val = (i % planes) << 29 | (i / planes) << 18, .port = (uint8_t)(i % planes)};
    }
    for (int s = 0; s < 2; s++) {
        mrc_settings set;
        mrc_settings_default(&set);
        set.alloc = (mrc_allocator){bm_malloc, bm_free, NULL};
        set.nports = planes;
        set.icrc = icrc;
        set.udp_checksum = icrc; /* as the ICRC, a pass over the payload */
        mrc_ev_profile_attr ea = {.evs = evs, .nevs = 256, .active = 128};
        mrc_cc_profile_attr ca = {.algorithm = "none"};
        must(mrc_context_new(&set, 0, &ctx[s]), "context");
        must(mrc_ev_profile_create(ctx[s], 1, &ea), "ev profile");
        must(mrc_cc_profile_create(ctx[s], 1, &ca), "cc profile");
        must(mrc_cq_new(ctx[s], 4096, &cq[s]), "cq");
        mrc_qp_init_attr qa = {.send_cq = cq[s],
                               .recv_cq = cq[s],
                               .max_send_wr = 64,
                               .max_recv_wr = 64,
                               .max_send_sge = 1,
                               .sq_sig_all = true};
        must(mrc_qp_new(ctx[s], &qa, &qp[s]), "qp");
        mem[s] = calloc(1, 8 * (size_t)msg);
        must(mrc_reg_mr(ctx[s], mem[s], 8 * (size_t)msg, MRC_ACCESS_REMOTE_WRITE, &mr[s]), "mr");
    }
    for (int s = 0; s < 2; s++) {
        mrc_qp_attr a;
        memset(&a, 0, sizeof(a));
        a.qp_state = MRC_QPS_INIT;
        a.profile.ev_profile_id = a.profile.cc_profile_id = 1;
        must(
            mrc_modify_qp(qp[s], &a, MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID, 0),
            "init");
        a.qp_state = MRC_QPS_RTR;
        a.dest_qp_num = mrc_qp_num(qp[1 - s]);
        a.path_mtu = mtu;
        a.access_flags = MRC_ACCESS_REMOTE_WRITE;
        a.ah.nports = planes;
        a.mpr.mpr_dest = 8;
        a.wimm.max_wimm_dest = 64;
        must(mrc_modify_qp(qp[s], &a,
                           MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU |
                               MRC_QP_ACCESS_FLAGS | MRC_QP_AV | MRC_QP_MPR_DEST |
                               MRC_QP_MAX_WIMM_DEST,
                           0),
             "rtr");
        a.qp_state = MRC_QPS_RTS;
        a.mpr.mpr = 8;
        a.wimm.max_wimm = 64;
        a.timeout = 14;
        a.retry.linear_cnt = 7;
        a.retry.exp_cnt = 7;
        must(mrc_modify_qp(qp[s], &a,
                           MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM |
                               MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
                           0),
             "rts");
    }
    unsigned long sent = 0, posted = 0, done = 0;
    mrc_tx_pkt tx[2][BURST_MAX];
    mrc_rx_pkt rx[BURST_MAX];
    for (int s = 0; s < 2; s++) {
        for (unsigned k = 0; k < BURST_MAX; k++) {
            tx[s][k] = (mrc_tx_pkt){.data = bufs[s][k], .room = ROOM};
        }
    }
    while (sent < npkts) {
        while (posted - done < 4) {
            mrc_sge g = {.addr = (uint64_t)(uintptr_t)(mem[0] + (posted % 8) * msg),
                         .length = msg,
                         .lkey = mrc_mr_lkey(mr[0])};
            mrc_send_wr wr = {.wr_id = posted,
                              .opcode = MRC_WR_RDMA_WRITE,
                              .sg_list = &g,
                              .num_sge = 1,
                              .remote_addr = (uint64_t)(uintptr_t)(mem[1] + (posted % 8) * msg),
                              .rkey = mrc_mr_rkey(mr[1])};
            must(mrc_post_send(qp[0], &wr, now_ns), "post");
            posted++;
        }
        /* a burst of data one way, then every answer the other way */
        int n = side_send_write(ctx[0], tx[0], burst);
        if (n > 0) {
            side_recv_read(ctx[1], rx, deliver(tx[0], (unsigned)n, rx));
            sent += (unsigned long)n;
        }
        int m;
        while ((m = side_recv_write(ctx[1], tx[1], burst)) > 0) {
            side_send_read(ctx[0], rx, deliver(tx[1], (unsigned)m, rx));
        }
        mrc_wc wc[16];
        int k;
        while ((k = mrc_poll_cq(cq[0], 16, wc)) > 0) {
            done += (unsigned long)k;
        }
        now_ns += 330ull * (unsigned)(n > 0 ? n : 1); /* 4 KiB at 100 Gb/s */
    }
    mrc_qp_stats st;
    mrc_qp_get_stats(qp[0], &st);
    printf("{\"packets\": %lu, \"data_pkts_sent\": %llu, \"retransmitted\": %llu, "
           "\"sacks\": %llu, \"messages\": %lu}\n",
           sent, (unsigned long long)st.data_pkts_sent, (unsigned long long)st.retx_pkts,
           (unsigned long long)st.sacks_rcvd, done);
    for (int s = 0; s < 2; s++) {
        mrc_context_free(ctx[s]);
        free(mem[s]);
    }
    return 0;
}
