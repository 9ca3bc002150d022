/* SPDX-License-Identifier: MIT */
/* The host's software MRC NIC: the engine context, the EV profile of each peer it talks to,
 * the CC profile, and the QPs it carries. */
#include "agent_node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_deny.h"
#include "agent_floor.h"
#include "agent_profile.h"
#include "util.h"

#define NODE_MPR 16 /* 2,048 PSNs of window: ample for the lab's round trips */
#define NODE_MAX_WIMM 256

typedef struct poller {
    agent_node_poll_fn fn;
    void *user;
} poller;

struct agent_node {
    agent_node_cfg cfg;
    mrc_context *ctx;
    agent_io *io;
    /* A new controller profile starts a generation: QPs made after it get EV profiles (ids
     * gen << 32 | peer + 1) and a CC profile (id gen + 1) made from it; older QPs keep theirs */
    uint32_t gen;
    uint32_t *has_profile; /* per host: 1 + the generation of its EV profile, 0 if none */
    const agent_profile *prof;
    const agent_deny *deny;
    uint32_t mtu;     /* what new QPs use: the profile's, capped by what the ports fit */
    uint32_t own_mtu; /* without a profile (or one that leaves it to the host) */
    uint32_t fit_mtu; /* the largest the ports' MTU fits */
    agent_node_hooks hooks;
    mrc_qp **qps;
    uint32_t *qp_peer;
    agent_floor_qp *qp_floor; /* each QP's EVs as the denylist and its floor left them */
    size_t nqps, capqps;
    agent_floor *floor;
    poller *pollers;
    size_t npollers;
};

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

static uint64_t eng_seed(void *user)
{
    return ((agent_node *)user)->cfg.seed;
}

static void eng_log(void *user, uint64_t now, const char *msg)
{
    (void)user;
    (void)now;
    util_log(UTIL_LOG_DEBUG, "engine: %s", msg);
}

static void after(void *user, uint64_t now)
{
    agent_node *node = user;
    mrc_ev_event ev[64];
    int n;
    while ((n = mrc_poll_ev_events(node->ctx, ev, 64)) > 0) {
        for (int i = 0; i < n && node->hooks.ev_event; i++) {
            node->hooks.ev_event(node->hooks.user, &ev[i]);
        }
    }
    for (size_t i = 0; i < node->npollers; i++) {
        node->pollers[i].fn(node->pollers[i].user, now);
    }
}

static int cc_profile(agent_node *node)
{
    mrc_cc_profile_attr ca = {.algorithm = node->cfg.cc};
    if (node->prof) {
        ca.algorithm = node->prof->cc.algorithm;
        ca.nscc = node->prof->cc.nscc;
    } else if (strcmp(node->cfg.cc, "uet-1.0-nscc") == 0) {
        unsigned ports = 0;
        for (unsigned p = 0; p < fab_topo_planes(node->cfg.topo); p++) {
            uint32_t sw;
            unsigned swport;
            ports += fab_host_attach(node->cfg.topo, node->cfg.host, p, &sw, &swport) == 0;
        }
        ca.nscc.link_gbps = node->cfg.port_gbps * ports;
        ca.nscc.base_rtt_ns = node->cfg.base_rtt_ns;
    }
    return mrc_cc_profile_create(node->ctx, (uint64_t)node->gen + 1, &ca);
}

/* The path MTU from the ports' MTU, as RoCE takes it from the interface: the largest that
 * fits, unless --mtu says less; more than fits is refused, since every such packet would be
 * dropped by the port. */
static int fit_mtu(agent_node *node, char *err, size_t errlen)
{
    unsigned link;
    int rv = agent_io_link_mtu(node->cfg.topo, node->cfg.host, &link, err, errlen);
    if (rv != 0) {
        return rv;
    }
    node->fit_mtu = mrc_path_mtu_fit(link, node->cfg.mode == AGENT_IO_SRV6 ? 40 : 0);
    if (!node->fit_mtu) {
        snprintf(err, errlen, "the ports' MTU (%u) is too small for MRC's smallest packets", link);
        return -EINVAL;
    }
    if (node->cfg.mtu > node->fit_mtu) {
        snprintf(err, errlen,
                 "--mtu %u does not fit the ports' MTU (%u, less the headers): at most %u, or "
                 "leave --mtu out",
                 node->cfg.mtu, link, node->fit_mtu);
        return -EINVAL;
    }
    node->own_mtu = node->mtu = node->cfg.mtu ? node->cfg.mtu : node->fit_mtu;
    util_log(UTIL_LOG_INFO, "path MTU %u (the ports' MTU %u fits %u)", node->mtu, link,
             node->fit_mtu);
    return 0;
}

int agent_node_new(const agent_node_cfg *cfg, agent_node **pnode, char *err, size_t errlen)
{
    agent_node *node = util_xcalloc(1, sizeof(*node));
    const fab_topo *topo = cfg->topo;
    mrc_settings set;
    int rv;
    node->cfg = *cfg;
    node->has_profile = util_xcalloc(fab_topo_nhosts(topo), sizeof(uint32_t));
    node->floor = agent_floor_new(&cfg->floor, topo);
    if (agent_floor_cfg_check(&cfg->floor, err, errlen) != 0) {
        rv = -EINVAL;
        goto out;
    }
    rv = fit_mtu(node, err, errlen);
    if (rv != 0) {
        goto out;
    }
    mrc_settings_default(&set);
    set.alloc = (mrc_allocator){eng_malloc, eng_free, NULL};
    set.cb.seed = eng_seed;
    set.cb.log = eng_log;
    set.user = node;
    set.nports = fab_topo_planes(topo);
    set.udp_port = fab_topo_plan(topo)->udp_port;
    /* uSID paths are static routes through one T1 each way; but not in order: a host's
     * kernel queues a port's packets per CPU, and a sender that moves between CPUs reorders
     * its own packets (veth and every software switch do) */
    set.ev_symmetric = cfg->mode == AGENT_IO_SRV6;
    set.reorder_ns = cfg->reorder_ns;
    for (unsigned p = 0; p < set.nports; p++) {
        fab_host_addr(topo, cfg->host, p, set.addr[p]); /* zero for a port not cabled */
    }
    rv = mrc_context_new(&set, 0, &node->ctx);
    if (rv == 0) {
        rv = cc_profile(node);
    }
    if (rv != 0) {
        snprintf(err, errlen, "engine: %s", mrc_strerror(rv));
        rv = -EINVAL;
        goto out;
    }
    agent_io_cfg ic = {.base = cfg->base,
                       .ctx = node->ctx,
                       .topo = topo,
                       .host = cfg->host,
                       .mode = cfg->mode,
                       .busy_ns = cfg->busy_poll_ns,
                       .after = after,
                       .user = node};
    rv = agent_io_new(&ic, &node->io, err, errlen);
out:
    if (rv != 0) {
        agent_node_free(node);
        return rv;
    }
    *pnode = node;
    return 0;
}

void agent_node_free(agent_node *node)
{
    if (!node) {
        return;
    }
    agent_io_free(node->io);
    mrc_context_free(node->ctx);
    free(node->has_profile);
    free(node->qps);
    free(node->qp_peer);
    free(node->qp_floor);
    agent_floor_free(node->floor);
    free(node->pollers);
    free(node);
}

mrc_context *agent_node_ctx(agent_node *node)
{
    return node->ctx;
}

const fab_topo *agent_node_topo(const agent_node *node)
{
    return node->cfg.topo;
}

uint32_t agent_node_host(const agent_node *node)
{
    return node->cfg.host;
}

uint32_t agent_node_mtu(const agent_node *node)
{
    return node->mtu;
}

void agent_node_set_hooks(agent_node *node, const agent_node_hooks *hooks)
{
    node->hooks = *hooks;
}

int agent_node_set_profile(agent_node *node, const agent_profile *prof)
{
    node->prof = prof;
    node->gen++;
    node->mtu = prof && prof->cc.mtu ? prof->cc.mtu : node->own_mtu;
    if (node->mtu > node->fit_mtu) {
        util_log(UTIL_LOG_WARNING,
                 "the profile's MTU %u does not fit this host's ports: its QPs use %u", node->mtu,
                 node->fit_mtu);
        node->mtu = node->fit_mtu;
    }
    int rv = cc_profile(node);
    if (rv != 0) {
        util_log(UTIL_LOG_ERR, "the profile's congestion control: %s", mrc_strerror(rv));
    }
    return rv;
}

/* QP |i|'s EVs denied as the denylist and its floor say; how many changed state. */
static unsigned deny_qp(agent_node *node, size_t i, uint64_t now)
{
    mrc_qp *qp = node->qps[i];
    mrc_ev evs[1024];
    uint8_t state[1024];
    bool denied[1024];
    unsigned n = 0, changed = 0;
    for (unsigned k = 0; k < mrc_qp_ev_count(qp) && n < 1024; k++) {
        mrc_ev_stats st;
        if (mrc_qp_get_ev_stats(qp, k, &st) == 0) {
            evs[n] = (mrc_ev){.val = st.ev, .port = st.port};
            state[n++] = st.state;
        }
    }
    agent_floor_pick(agent_floor_get_cfg(node->floor), node->deny, node->cfg.host, node->qp_peer[i],
                     evs, n, denied, &node->qp_floor[i]);
    for (unsigned k = 0; k < n; k++) {
        if (denied[k] != (state[k] == MRC_EV_DENIED)) {
            changed += mrc_qp_ev_set_state(qp, evs[k].val, denied[k] ? MRC_EV_DENIED : MRC_EV_GOOD,
                                           now) == 0;
        }
    }
    return changed;
}

static void floor_update(agent_node *node)
{
    agent_floor_update(node->floor, node->qp_peer, node->qp_floor, node->nqps);
}

unsigned agent_node_set_deny(agent_node *node, const agent_deny *deny)
{
    uint64_t now = agent_now();
    unsigned changed = 0;
    node->deny = deny;
    for (size_t i = 0; i < node->nqps; i++) {
        changed += deny_qp(node, i, now);
    }
    floor_update(node);
    agent_io_kick(node->io);
    return changed;
}

const agent_floor *agent_node_floor(const agent_node *node)
{
    return node->floor;
}

agent_io *agent_node_io(agent_node *node)
{
    return node->io;
}

struct event_base *agent_node_base(const agent_node *node)
{
    return node->cfg.base;
}

void agent_node_add_poller(agent_node *node, agent_node_poll_fn fn, void *user)
{
    node->pollers = util_xrealloc(node->pollers, (node->npollers + 1) * sizeof(poller));
    node->pollers[node->npollers++] = (poller){fn, user};
}

void agent_node_del_poller(agent_node *node, agent_node_poll_fn fn, void *user)
{
    for (size_t i = 0; i < node->npollers; i++) {
        if (node->pollers[i].fn == fn && node->pollers[i].user == user) {
            node->pollers[i] = node->pollers[--node->npollers];
            return;
        }
    }
}

/* The EV profile of |peer| (id peer + 1): on each plane both hosts are cabled, every usable
 * path, each with enough salts that the profile holds about evs_per_peer EVs. */
static int ev_profile(agent_node *node, uint32_t peer)
{
    const fab_topo *topo = node->cfg.topo;
    const fab_plan *plan = fab_topo_plan(topo);
    unsigned planes = fab_topo_planes(topo);
    size_t npaths = 0;
    fab_path *paths = NULL;
    int rv = 0;
    if (node->has_profile[peer] == node->gen + 1) {
        return 0;
    }
    mrc_ev base[1024];
    unsigned nbase = 0;
    if (node->prof) {
        /* the controller's classes: one EV (salt 0) per path it lets this host use */
        rv = agent_profile_evs(node->prof, topo, peer, base, 1024, &nbase);
        if (rv != 0) {
            rv = MRC_ERR_INVAL;
            goto out;
        }
        goto salt;
    }
    for (unsigned p = 0; p < planes; p++) {
        size_t n = 0;
        fab_path_enum(topo, node->cfg.host, p, peer, p, NULL, 0, &n);
        if (n == 0) {
            continue;
        }
        paths = util_xrealloc(paths, (npaths + n) * sizeof(fab_path));
        if (fab_path_enum(topo, node->cfg.host, p, peer, p, paths + npaths, n, &n) == 0) {
            npaths += n;
        }
    }
    for (size_t i = 0; i < npaths && nbase < 1024; i++) {
        if (paths[i].usable) {
            base[nbase++] = (mrc_ev){.val = paths[i].ev, .port = (uint8_t)paths[i].plane};
        }
    }
salt:
    if (nbase == 0) {
        rv = MRC_ERR_INVAL;
        goto out;
    }
    /* several EVs per path (salts vary only the UDP source port): the engine judges and
     * rotates EVs, and a path carries as many as the profile asks for */
    unsigned salts = (node->cfg.evs_per_peer + nbase - 1) / nbase;
    salts = salts * nbase > 1024 ? 1024 / nbase : salts;
    salts = salts ? salts : 1;
    mrc_ev *evs = util_xmalloc((size_t)nbase * salts * sizeof(mrc_ev));
    unsigned nevs = 0;
    for (unsigned k = 0; k < salts; k++) {
        for (unsigned i = 0; i < nbase; i++) {
            unsigned p = fab_ev_plane(plan, base[i].val), t1 = fab_ev_t1(plan, base[i].val);
            evs[nevs++] = (mrc_ev){.val = fab_ev_make(plan, p, t1, k), .port = base[i].port};
        }
    }
    mrc_ev_profile_attr ea = {.evs = evs,
                              .nevs = nevs,
                              .active = 0,
                              .min_active = 1,
                              .event_mask = 1u << MRC_EV_GOOD | 1u << MRC_EV_ASSUMED_BAD |
                                            1u << MRC_EV_DENIED};
    rv = mrc_ev_profile_create(node->ctx, (uint64_t)node->gen << 32 | ((uint64_t)peer + 1), &ea);
    free(evs);
    if (rv == 0) {
        node->has_profile[peer] = node->gen + 1;
    }
out:
    free(paths);
    return rv;
}

int agent_node_qp_new(agent_node *node, uint32_t peer, mrc_cq *cq, unsigned max_wr,
                      void *qp_context, mrc_qp **pqp)
{
    if (peer >= fab_topo_nhosts(node->cfg.topo) || peer == node->cfg.host) {
        return MRC_ERR_INVAL;
    }
    int rv = ev_profile(node, peer);
    if (rv != 0) {
        return rv;
    }
    mrc_qp_init_attr qa = {.send_cq = cq,
                           .recv_cq = cq,
                           .max_send_wr = max_wr,
                           .max_recv_wr = max_wr,
                           .max_send_sge = 1,
                           .sq_sig_all = true,
                           .qp_context = qp_context};
    mrc_qp *qp;
    rv = mrc_qp_new(node->ctx, &qa, &qp);
    if (rv != 0) {
        return rv;
    }
    mrc_qp_attr a = {.qp_state = MRC_QPS_INIT,
                     .profile = {.ev_profile_id = (uint64_t)node->gen << 32 | ((uint64_t)peer + 1),
                                 .cc_profile_id = (uint64_t)node->gen + 1}};
    rv = mrc_modify_qp(qp, &a, MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID,
                       agent_now());
    if (rv != 0) {
        mrc_qp_free(qp);
        return rv;
    }
    if (node->nqps == node->capqps) {
        node->capqps = node->capqps ? 2 * node->capqps : 16;
        node->qps = util_xrealloc(node->qps, node->capqps * sizeof(*node->qps));
        node->qp_peer = util_xrealloc(node->qp_peer, node->capqps * sizeof(*node->qp_peer));
        node->qp_floor = util_xrealloc(node->qp_floor, node->capqps * sizeof(*node->qp_floor));
    }
    node->qps[node->nqps] = qp;
    node->qp_peer[node->nqps++] = peer;
    deny_qp(node, node->nqps - 1, agent_now());
    if (node->qp_floor[node->nqps - 1].floored) { /* a QP above the floor changes no peer's */
        floor_update(node);
    }
    if (node->hooks.qp_new) {
        node->hooks.qp_new(node->hooks.user, qp, peer);
    }
    *pqp = qp;
    return 0;
}

static uint32_t peer_of_qp(const agent_node *node, const mrc_qp *qp)
{
    for (size_t i = 0; i < node->nqps; i++) {
        if (node->qps[i] == qp) {
            return node->qp_peer[i];
        }
    }
    return FAB_NONE;
}

int agent_node_qp_connect(agent_node *node, mrc_qp *qp, uint32_t dest_qpn, uint32_t rq_psn,
                          uint32_t sq_psn, uint32_t mtu)
{
    const fab_topo *topo = node->cfg.topo;
    uint32_t peer = peer_of_qp(node, qp);
    uint64_t now = agent_now();
    if (peer == FAB_NONE) {
        return MRC_ERR_NOTFOUND;
    }
    mrc_qp_attr a = {.qp_state = MRC_QPS_RTR,
                     .dest_qp_num = dest_qpn,
                     .rq_psn = rq_psn,
                     .path_mtu = mtu ? mtu : node->mtu,
                     .access_flags = MRC_ACCESS_REMOTE_WRITE,
                     .mpr = {.mpr = NODE_MPR, .mpr_dest = NODE_MPR},
                     .wimm = {.max_wimm = NODE_MAX_WIMM, .max_wimm_dest = NODE_MAX_WIMM},
                     .timeout = node->cfg.timeout,
                     .retry = {.linear_cnt = 7, .exp_cnt = 25},
                     .sq_psn = sq_psn};
    a.ah.nports = fab_topo_planes(topo);
    for (unsigned p = 0; p < a.ah.nports; p++) {
        fab_host_addr(topo, node->cfg.host, p, a.ah.sgid[p]);
        fab_host_addr(topo, peer, p, a.ah.dgid[p]);
    }
    int rv =
        mrc_modify_qp(qp, &a,
                      MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU |
                          MRC_QP_ACCESS_FLAGS | MRC_QP_AV | MRC_QP_MPR_DEST | MRC_QP_MAX_WIMM_DEST,
                      now);
    if (rv == 0) {
        a.qp_state = MRC_QPS_RTS;
        rv = mrc_modify_qp(qp, &a,
                           MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM |
                               MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
                           now);
    }
    return rv;
}

void agent_node_qp_free(agent_node *node, mrc_qp *qp)
{
    if (node->hooks.qp_free) {
        node->hooks.qp_free(node->hooks.user, qp);
    }
    for (size_t i = 0; i < node->nqps; i++) {
        if (node->qps[i] == qp) {
            bool floored = node->qp_floor[i].floored;
            node->qps[i] = node->qps[--node->nqps];
            node->qp_peer[i] = node->qp_peer[node->nqps];
            node->qp_floor[i] = node->qp_floor[node->nqps];
            if (floored) {
                floor_update(node);
            }
            break;
        }
    }
    mrc_qp_free(qp);
}

mrc_qp *const *agent_node_qps(const agent_node *node, const uint32_t **ppeers, size_t *pn)
{
    *ppeers = node->qp_peer;
    *pn = node->nqps;
    return node->qps;
}
