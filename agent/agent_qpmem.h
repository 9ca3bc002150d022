/* SPDX-License-Identifier: MIT */
/* A QP with the memory it writes from and is written into: what mrc-perf's workloads are
 * made of, and what two hosts swap out of band to connect them. */
#ifndef AGENT_QPMEM_H
#define AGENT_QPMEM_H

#include <json-c/json.h>
#include <stdint.h>

#include "agent_node.h"

typedef struct agent_qpmem {
    mrc_qp *qp;
    mrc_mr *mr;
    uint8_t *mem;
    size_t len;
    uint32_t psn;   /* our first PSN */
    uint32_t mtu;   /* our path MTU: the QP uses the smaller of the two ends' */
    uint64_t raddr; /* the peer's buffer, once connected */
    uint32_t rkey;
} agent_qpmem;

/* A QP toward |peer| on |cq| with |len| bytes of zeroed memory registered for remote writes.
 * 0 or a negative MRC_ERR_*; |q| is left empty for agent_qpmem_fini either way. */
int agent_qpmem_init(agent_qpmem *q, agent_node *node, uint32_t peer, mrc_cq *cq, unsigned max_wr,
                     size_t len, void *qp_context);
void agent_qpmem_fini(agent_qpmem *q, agent_node *node);

/* What the peer needs: {"qpn","psn","addr","rkey","len","mtu"}. */
json_object *agent_qpmem_info(const agent_qpmem *q);
/* Connects to the peer's QP as its agent_qpmem_info gave it, at the smaller path MTU of the
 * two (as RDMA's connection managers settle it; "mtu" absent: ours); its buffer must hold at
 * least |min_len| bytes. 0, -EINVAL or a negative MRC_ERR_* with a sentence in |err|. */
int agent_qpmem_connect(agent_qpmem *q, agent_node *node, json_object *remote, uint64_t min_len,
                        char *err, size_t errlen);

/* Writes |len| bytes at |off| of our memory to |roff| of the peer's, with immediate |imm|. */
int agent_qpmem_write(agent_qpmem *q, uint64_t wr_id, size_t off, uint64_t roff, uint32_t len,
                      uint32_t imm);
void agent_qpmem_post_recvs(agent_qpmem *q, unsigned n);

#endif
