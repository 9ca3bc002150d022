/* SPDX-License-Identifier: MIT */
/* Two synchronous netlink questions: RTM_GETROUTE (the kernel's own route lookup, with the
 * port as the output interface) and RTM_GETNEIGH for the one entry it names. Both are asked
 * rarely (agent_io asks again every few seconds), so a blocking socket is enough. */
#include "agent_nexthop.h"

#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "util.h"

struct agent_nexthop {
    struct nl_sock *sk;
};

typedef struct answer {
    int type; /* RTM_NEWROUTE or RTM_NEWNEIGH wanted */
    bool found;
    uint8_t addr[16]; /* route: the gateway (unset on a link route) */
    bool has_gw;
    uint8_t mac[6]; /* neighbour */
    bool has_mac;
    uint16_t state;
} answer;

int agent_nexthop_new(agent_nexthop **pnh)
{
    agent_nexthop *nh = util_xcalloc(1, sizeof(*nh));
    int rv = 0;
    nh->sk = nl_socket_alloc();
    if (!nh->sk) {
        rv = -ENOMEM;
        goto out;
    }
    if (nl_connect(nh->sk, NETLINK_ROUTE) < 0) {
        rv = -EPROTO;
        goto out;
    }
    /* one datagram answers each question: an ACK after it would be read as the next answer */
    nl_socket_disable_auto_ack(nh->sk);
out:
    if (rv != 0) {
        agent_nexthop_free(nh);
        return rv;
    }
    *pnh = nh;
    return 0;
}

void agent_nexthop_free(agent_nexthop *nh)
{
    if (!nh) {
        return;
    }
    nl_socket_free(nh->sk);
    free(nh);
}

static int on_msg(struct nl_msg *m, void *arg)
{
    answer *a = arg;
    struct nlmsghdr *h = nlmsg_hdr(m);
    if (h->nlmsg_type != a->type) {
        return NL_SKIP;
    }
    if (a->type == RTM_NEWROUTE) {
        struct nlattr *tb[RTA_MAX + 1];
        if (nlmsg_parse(h, sizeof(struct rtmsg), tb, RTA_MAX, NULL) < 0) {
            return NL_SKIP;
        }
        const struct rtmsg *rt = nlmsg_data(h);
        if (rt->rtm_type != RTN_UNICAST) {
            return NL_SKIP; /* unreachable, blackhole, local: no next hop on the wire */
        }
        a->found = true;
        if (tb[RTA_GATEWAY] && nla_len(tb[RTA_GATEWAY]) == 16) {
            memcpy(a->addr, nla_data(tb[RTA_GATEWAY]), 16);
            a->has_gw = true;
        }
        return NL_OK;
    }
    struct nlattr *tb[NDA_MAX + 1];
    if (nlmsg_parse(h, sizeof(struct ndmsg), tb, NDA_MAX, NULL) < 0) {
        return NL_SKIP;
    }
    const struct ndmsg *nd = nlmsg_data(h);
    a->found = true;
    a->state = nd->ndm_state;
    if (tb[NDA_LLADDR] && nla_len(tb[NDA_LLADDR]) == 6) {
        memcpy(a->mac, nla_data(tb[NDA_LLADDR]), 6);
        a->has_mac = true;
    }
    return NL_OK;
}

/* Sends |m| and reads the answer into |a|: 0, -ENOENT when the kernel refused the question
 * (no route, no entry), -EIO when netlink itself failed. */
static int ask(agent_nexthop *nh, struct nl_msg *m, answer *a)
{
    int rv = nl_send_auto(nh->sk, m);
    nlmsg_free(m);
    if (rv < 0) {
        return -EIO;
    }
    nl_socket_modify_cb(nh->sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, a);
    rv = nl_recvmsgs_default(nh->sk);
    if (rv < 0) {
        return rv == -NLE_NOMEM || rv == -NLE_BAD_SOCK ? -EIO : -ENOENT;
    }
    return a->found ? 0 : -ENOENT;
}

int agent_nexthop_mac(agent_nexthop *nh, unsigned ifindex, const uint8_t dst[16], uint8_t mac[6])
{
    answer route = {.type = RTM_NEWROUTE};
    struct rtmsg rt = {.rtm_family = AF_INET6, .rtm_dst_len = 128};
    struct nl_msg *m = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
    if (!m) {
        return -ENOMEM;
    }
    if (nlmsg_append(m, &rt, sizeof(rt), NLMSG_ALIGNTO) < 0 || nla_put(m, RTA_DST, 16, dst) < 0 ||
        nla_put_u32(m, RTA_OIF, ifindex) < 0) {
        nlmsg_free(m);
        return -ENOMEM;
    }
    int rv = ask(nh, m, &route);
    if (rv == -ENOENT) {
        return -ENETUNREACH;
    }
    if (rv != 0) {
        return rv;
    }
    answer neigh = {.type = RTM_NEWNEIGH};
    struct ndmsg nd = {.ndm_family = AF_INET6, .ndm_ifindex = (int)ifindex};
    m = nlmsg_alloc_simple(RTM_GETNEIGH, NLM_F_REQUEST);
    if (!m) {
        return -ENOMEM;
    }
    if (nlmsg_append(m, &nd, sizeof(nd), NLMSG_ALIGNTO) < 0 ||
        nla_put(m, NDA_DST, 16, route.has_gw ? route.addr : dst) < 0) {
        nlmsg_free(m);
        return -ENOMEM;
    }
    rv = ask(nh, m, &neigh);
    if (rv == -ENOENT) {
        return -EAGAIN;
    }
    if (rv != 0) {
        return rv;
    }
    /* INCOMPLETE and FAILED entries hold no address worth using */
    const uint16_t usable = NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT;
    if (!neigh.has_mac || !(neigh.state & usable)) {
        return -EAGAIN;
    }
    memcpy(mac, neigh.mac, 6);
    return 0;
}
