/* SPDX-License-Identifier: MIT */
/* A QP with its memory, and the out-of-band swap that connects two of them. */
#include "agent_qpmem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int agent_qpmem_init(agent_qpmem *q, agent_node *node, uint32_t peer, mrc_cq *cq, unsigned max_wr,
                     size_t len, void *qp_context)
{
    uint64_t z = agent_now() ^ (uint64_t)(uintptr_t)q;
    memset(q, 0, sizeof(*q));
    q->mem = util_xcalloc(1, len ? len : 1);
    q->len = len;
    z = (z ^ (z >> 31)) * 0x9e3779b97f4a7c15ull;
    q->psn = (uint32_t)(z >> 40) & 0xffffff;
    q->mtu = agent_node_mtu(node);
    int rv = agent_node_qp_new(node, peer, cq, max_wr, qp_context, &q->qp);
    if (rv == 0) {
        rv = mrc_reg_mr(agent_node_ctx(node), q->mem, q->len ? q->len : 1,
                        MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &q->mr);
    }
    return rv;
}

void agent_qpmem_fini(agent_qpmem *q, agent_node *node)
{
    if (q->qp) {
        agent_node_qp_free(node, q->qp);
    }
    if (q->mr) {
        mrc_dereg_mr(q->mr);
    }
    free(q->mem);
    memset(q, 0, sizeof(*q));
}

json_object *agent_qpmem_info(const agent_qpmem *q)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "qpn", json_object_new_uint64(mrc_qp_num(q->qp)));
    json_object_object_add(o, "psn", json_object_new_uint64(q->psn));
    json_object_object_add(o, "addr", json_object_new_uint64((uint64_t)(uintptr_t)q->mem));
    json_object_object_add(o, "rkey", json_object_new_uint64(mrc_mr_rkey(q->mr)));
    json_object_object_add(o, "len", json_object_new_uint64(q->len));
    json_object_object_add(o, "mtu", json_object_new_uint64(q->mtu));
    return o;
}

static bool get_u64(json_object *o, const char *key, uint64_t max, uint64_t *pv)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) {
        return false;
    }
    errno = 0;
    uint64_t x = json_object_get_uint64(v);
    if (errno || x > max || json_object_get_int64(v) < 0) {
        return false;
    }
    *pv = x;
    return true;
}

int agent_qpmem_connect(agent_qpmem *q, agent_node *node, json_object *remote, uint64_t min_len,
                        char *err, size_t errlen)
{
    uint64_t qpn, psn, addr, rkey, len;
    if (!get_u64(remote, "qpn", 0xffffff, &qpn) || !get_u64(remote, "psn", 0xffffff, &psn) ||
        !get_u64(remote, "addr", UINT64_MAX, &addr) ||
        !get_u64(remote, "rkey", UINT32_MAX, &rkey) || !get_u64(remote, "len", UINT64_MAX, &len)) {
        snprintf(err, errlen, "the peer's QP needs qpn and psn (24 bits), addr, rkey and len");
        return -EINVAL;
    }
    if (len < min_len) {
        snprintf(err, errlen, "the peer's buffer holds %" PRIu64 " bytes, not %" PRIu64, len,
                 min_len);
        return -EINVAL;
    }
    uint64_t mtu = q->mtu;
    if (json_object_object_get_ex(remote, "mtu", NULL) &&
        (!get_u64(remote, "mtu", 8192, &mtu) || mtu < 256 || (mtu & (mtu - 1)))) {
        snprintf(err, errlen, "the peer's mtu must be a power of two from 256 to 8192");
        return -EINVAL;
    }
    q->raddr = addr;
    q->rkey = (uint32_t)rkey;
    mtu = mtu < q->mtu ? mtu : q->mtu;
    int rv =
        agent_node_qp_connect(node, q->qp, (uint32_t)qpn, (uint32_t)psn, q->psn, (uint32_t)mtu);
    if (rv != 0) {
        snprintf(err, errlen, "connecting the QP: %s", mrc_strerror(rv));
    }
    return rv;
}

int agent_qpmem_write(agent_qpmem *q, uint64_t wr_id, size_t off, uint64_t roff, uint32_t len,
                      uint32_t imm)
{
    mrc_sge sge = {
        .addr = (uint64_t)(uintptr_t)(q->mem + off), .length = len, .lkey = mrc_mr_lkey(q->mr)};
    mrc_send_wr wr = {.wr_id = wr_id,
                      .opcode = MRC_WR_RDMA_WRITE_WITH_IMM,
                      .send_flags = MRC_SEND_SIGNALED,
                      .sg_list = &sge,
                      .num_sge = 1,
                      .remote_addr = q->raddr + roff,
                      .rkey = q->rkey,
                      .imm_data = imm};
    return mrc_post_send(q->qp, &wr, agent_now());
}

void agent_qpmem_post_recvs(agent_qpmem *q, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        mrc_recv_wr r = {.wr_id = i};
        if (mrc_post_recv(q->qp, &r) != 0) {
            break;
        }
    }
}
