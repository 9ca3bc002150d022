/* SPDX-License-Identifier: MIT */
/* rtnetlink on libnl's core message API: libnl-route 3.7 knows no seg6, and its route cache
 * fails outright on a table holding seg6local routes, so routes are built and parsed here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/lwtunnel.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seg6_local.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrcctl_netlink.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct mrcctl_nl {
    struct nl_sock *sk;
    struct nl_cache *links;
    int nsfd; /* the target namespace, for sysctl reads; -1 for our own */
};

/* Runs |fn| with the calling thread inside namespace |nsfd| and brings it back after. */
static int in_netns(int nsfd, int (*fn)(void *), void *arg)
{
    if (nsfd < 0) {
        return fn(arg);
    }
    int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
        return -errno;
    }
    int rv;
    if (setns(nsfd, CLONE_NEWNET) != 0) {
        rv = -errno;
        goto out;
    }
    rv = fn(arg);
    if (setns(self, CLONE_NEWNET) != 0) {
        /* a thread stuck in the wrong namespace would program the wrong switch */
        util_log(UTIL_LOG_ERR, "cannot return to the original network namespace: %s",
                 strerror(errno));
        abort();
    }
out:
    close(self);
    return rv;
}

static int connect_sock(void *arg)
{
    mrcctl_nl *nl = arg;
    int one = 1;
    nl->sk = nl_socket_alloc();
    if (!nl->sk) {
        return -ENOMEM;
    }
    if (nl_connect(nl->sk, NETLINK_ROUTE) != 0) {
        return -ECONNREFUSED;
    }
    nl_socket_set_buffer_size(nl->sk, 4 << 20, 1 << 20);
    /* the kernel's own sentence on errors, without the echo of our request */
    setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
    return 0;
}

int mrcctl_nl_open(const char *netns, mrcctl_nl **pnl, char *errmsg, size_t errmsglen)
{
    mrcctl_nl *nl = util_xcalloc(1, sizeof(*nl));
    int rv;
    nl->nsfd = -1;
    if (netns) {
        char path[256];
        snprintf(path, sizeof(path), "/run/netns/%s", netns);
        nl->nsfd = open(path, O_RDONLY | O_CLOEXEC);
        if (nl->nsfd < 0) {
            rv = -errno;
            snprintf(errmsg, errmsglen, "no network namespace '%s' (%s)", netns, strerror(errno));
            goto fail;
        }
    }
    rv = in_netns(nl->nsfd, connect_sock, nl);
    if (rv != 0) {
        snprintf(errmsg, errmsglen, "cannot open rtnetlink%s%s: %s", netns ? " in " : "",
                 netns ? netns : "", strerror(-rv));
        goto fail;
    }
    if (rtnl_link_alloc_cache(nl->sk, AF_UNSPEC, &nl->links) != 0) {
        rv = -EIO;
        snprintf(errmsg, errmsglen, "cannot list the interfaces");
        goto fail;
    }
    *pnl = nl;
    return 0;
fail:
    mrcctl_nl_close(nl);
    return rv;
}

void mrcctl_nl_close(mrcctl_nl *nl)
{
    if (!nl) {
        return;
    }
    if (nl->links) {
        nl_cache_free(nl->links);
    }
    if (nl->sk) {
        nl_socket_free(nl->sk);
    }
    if (nl->nsfd >= 0) {
        close(nl->nsfd);
    }
    free(nl);
}

int mrcctl_nl_ifindex(mrcctl_nl *nl, const char *name)
{
    return rtnl_link_name2i(nl->links, name);
}

void mrcctl_nl_ifname(mrcctl_nl *nl, int ifindex, char *dest, size_t destlen)
{
    if (!rtnl_link_i2name(nl->links, ifindex, dest, destlen)) {
        snprintf(dest, destlen, "?");
    }
}

/* An exchange: the kernel's errno and, with extended acks, its sentence. */
typedef struct exchange {
    int err;
    char *msg;
    size_t msglen;
    int (*parse)(struct nlmsghdr *nlh, void *arg);
    void *arg;
} exchange;

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
    (void)nla;
    exchange *x = arg;
    struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
    x->err = e->error;
    if (x->msglen && (nlh->nlmsg_flags & NLM_F_ACK_TLVS)) {
        size_t off = NLMSG_HDRLEN + sizeof(*e);
        if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
            off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
        }
        struct nlattr *a = (struct nlattr *)((char *)nlh + NLMSG_ALIGN(off));
        int rem = (int)nlh->nlmsg_len - (int)NLMSG_ALIGN(off);
        for (; rem > 0 && nla_ok(a, rem); a = nla_next(a, &rem)) {
            if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0) {
                snprintf(x->msg, x->msglen, "%.*s", nla_len(a), (const char *)nla_data(a));
            }
        }
    }
    return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
    (void)msg;
    ((exchange *)arg)->err = 0;
    return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
    exchange *x = arg;
    if (x->parse) {
        int rv = x->parse(nlmsg_hdr(msg), x->arg);
        if (rv != 0) {
            x->err = rv;
            return NL_STOP;
        }
    }
    return NL_OK;
}

static int run(mrcctl_nl *nl, struct nl_msg *msg, exchange *x)
{
    struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
    int rv;
    if (!cb) {
        return -ENOMEM;
    }
    nl_cb_err(cb, NL_CB_CUSTOM, on_error, x);
    nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, x);
    nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, x);
    if (x->msglen) {
        x->msg[0] = '\0';
    }
    x->err = 0;
    rv = nl_send_auto(nl->sk, msg);
    if (rv < 0) {
        rv = -EIO;
        goto out;
    }
    rv = nl_recvmsgs(nl->sk, cb);
    if (x->err != 0) {
        rv = x->err;
    } else if (rv == -NLE_DUMP_INTR) {
        rv = -EAGAIN;
    } else if (rv < 0) {
        rv = -EIO;
    } else {
        rv = 0;
    }
out:
    nl_cb_put(cb);
    return rv;
}

static void errtext(char *errmsg, size_t errmsglen, const char *what, int rv, const char *kmsg)
{
    if (kmsg && kmsg[0]) {
        snprintf(errmsg, errmsglen, "%s: %s (%s)", what, strerror(-rv), kmsg);
    } else {
        snprintf(errmsg, errmsglen, "%s: %s", what, strerror(-rv));
    }
}

static uint32_t attr_u32(struct nlattr *a, uint32_t dflt)
{
    return (a && nla_len(a) >= 4) ? nla_get_u32(a) : dflt;
}

static void parse_seg6local(struct nlattr *encap, mrcctl_nl_route *r)
{
    struct nlattr *tb[SEG6_LOCAL_MAX + 1], *fl[SEG6_LOCAL_FLV_MAX + 1];
    if (nla_parse_nested(tb, SEG6_LOCAL_MAX, encap, NULL) != 0) {
        return;
    }
    r->seg6local = true;
    r->action = attr_u32(tb[SEG6_LOCAL_ACTION], 0);
    r->counters = tb[SEG6_LOCAL_COUNTERS] != NULL;
    struct nlattr *cnt[SEG6_LOCAL_CNT_MAX + 1];
    if (r->counters &&
        nla_parse_nested(cnt, SEG6_LOCAL_CNT_MAX, tb[SEG6_LOCAL_COUNTERS], NULL) == 0) {
        if (cnt[SEG6_LOCAL_CNT_PACKETS] && nla_len(cnt[SEG6_LOCAL_CNT_PACKETS]) >= 8) {
            r->packets = nla_get_u64(cnt[SEG6_LOCAL_CNT_PACKETS]);
        }
        if (cnt[SEG6_LOCAL_CNT_ERRORS] && nla_len(cnt[SEG6_LOCAL_CNT_ERRORS]) >= 8) {
            r->errors = nla_get_u64(cnt[SEG6_LOCAL_CNT_ERRORS]);
        }
    }
    if (tb[SEG6_LOCAL_FLAVORS] &&
        nla_parse_nested(fl, SEG6_LOCAL_FLV_MAX, tb[SEG6_LOCAL_FLAVORS], NULL) == 0) {
        r->flv_ops = attr_u32(fl[SEG6_LOCAL_FLV_OPERATION], 0);
        if (fl[SEG6_LOCAL_FLV_LCBLOCK_BITS] && nla_len(fl[SEG6_LOCAL_FLV_LCBLOCK_BITS]) >= 1) {
            r->lblen = nla_get_u8(fl[SEG6_LOCAL_FLV_LCBLOCK_BITS]);
        }
        if (fl[SEG6_LOCAL_FLV_LCNODE_FN_BITS] && nla_len(fl[SEG6_LOCAL_FLV_LCNODE_FN_BITS]) >= 1) {
            r->nflen = nla_get_u8(fl[SEG6_LOCAL_FLV_LCNODE_FN_BITS]);
        }
    }
}

typedef struct route_list {
    mrcctl_nl_route *v;
    size_t n, cap;
} route_list;

static int parse_route(struct nlmsghdr *nlh, void *arg)
{
    route_list *l = arg;
    struct nlattr *tb[RTA_MAX + 1];
    if (nlh->nlmsg_type != RTM_NEWROUTE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) {
        return 0;
    }
    struct rtmsg *rtm = nlmsg_data(nlh);
    if (rtm->rtm_family != AF_INET6 || nlmsg_parse(nlh, sizeof(*rtm), tb, RTA_MAX, NULL) != 0) {
        return 0;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = util_xrealloc(l->v, l->cap * sizeof(*l->v));
    }
    mrcctl_nl_route *r = &l->v[l->n++];
    memset(r, 0, sizeof(*r));
    r->dst_len = rtm->rtm_dst_len;
    r->protocol = rtm->rtm_protocol;
    r->type = rtm->rtm_type;
    r->table = attr_u32(tb[RTA_TABLE], rtm->rtm_table);
    r->priority = attr_u32(tb[RTA_PRIORITY], 0);
    r->oif = (int)attr_u32(tb[RTA_OIF], 0);
    if (tb[RTA_DST] && nla_len(tb[RTA_DST]) == 16) {
        memcpy(r->dst, nla_data(tb[RTA_DST]), 16);
    }
    if (tb[RTA_GATEWAY] && nla_len(tb[RTA_GATEWAY]) == 16) {
        r->has_gw = true;
        memcpy(r->gw, nla_data(tb[RTA_GATEWAY]), 16);
    }
    if (tb[RTA_MULTIPATH]) {
        /* never ours: a negative oif makes it differ from any route we want */
        r->oif = -1;
    }
    if (tb[RTA_ENCAP_TYPE] && nla_len(tb[RTA_ENCAP_TYPE]) >= 2 &&
        nla_get_u16(tb[RTA_ENCAP_TYPE]) == LWTUNNEL_ENCAP_SEG6_LOCAL && tb[RTA_ENCAP]) {
        parse_seg6local(tb[RTA_ENCAP], r);
    }
    return 0;
}

/* A dump of |type|, each message given to |parse|; a dump interrupted by a concurrent change
 * is simply taken again, after |reset| forgets what the torn one parsed. */
static int dump(mrcctl_nl *nl, int type, const void *hdr, size_t hdrlen,
                int (*parse)(struct nlmsghdr *, void *), void *arg, size_t *reset, char *errmsg,
                size_t errmsglen)
{
    int rv = -EAGAIN;
    for (int tries = 0; tries < 5 && rv == -EAGAIN; tries++) {
        struct nl_msg *msg = nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_DUMP);
        exchange x = {.msg = errmsg, .msglen = errmsglen, .parse = parse, .arg = arg};
        *reset = 0;
        if (!msg || nlmsg_append(msg, (void *)hdr, hdrlen, NLMSG_ALIGNTO) != 0) {
            nlmsg_free(msg);
            return -ENOMEM;
        }
        rv = run(nl, msg, &x);
        nlmsg_free(msg);
    }
    return rv;
}

int mrcctl_nl_routes_dump(mrcctl_nl *nl, mrcctl_nl_route **proutes, size_t *pn, char *errmsg,
                       size_t errmsglen)
{
    route_list l = {0};
    struct rtmsg rtm = {.rtm_family = AF_INET6};
    int rv = dump(nl, RTM_GETROUTE, &rtm, sizeof(rtm), parse_route, &l, &l.n, errmsg, errmsglen);
    if (rv != 0) {
        errtext(errmsg, errmsglen, "cannot list the routes", rv, NULL);
        free(l.v);
        return rv;
    }
    *proutes = l.v;
    *pn = l.n;
    return 0;
}

static int put_route(struct nl_msg *msg, const mrcctl_nl_route *r)
{
    struct rtmsg rtm = {
        .rtm_family = AF_INET6,
        .rtm_dst_len = r->dst_len,
        .rtm_table = r->table < 256 ? (uint8_t)r->table : RT_TABLE_UNSPEC,
        .rtm_protocol = r->protocol,
        .rtm_scope = RT_SCOPE_UNIVERSE,
        .rtm_type = r->type ? r->type : RTN_UNICAST,
    };
    if (nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO) != 0 ||
        nla_put(msg, RTA_DST, 16, r->dst) != 0 || nla_put_u32(msg, RTA_TABLE, r->table) != 0 ||
        (r->priority && nla_put_u32(msg, RTA_PRIORITY, r->priority) != 0) ||
        (r->oif > 0 && nla_put_u32(msg, RTA_OIF, (uint32_t)r->oif) != 0) ||
        (r->has_gw && nla_put(msg, RTA_GATEWAY, 16, r->gw) != 0)) {
        return -ENOMEM;
    }
    if (!r->seg6local) {
        return 0;
    }
    if (nla_put_u16(msg, RTA_ENCAP_TYPE, LWTUNNEL_ENCAP_SEG6_LOCAL) != 0) {
        return -ENOMEM;
    }
    struct nlattr *encap = nla_nest_start(msg, RTA_ENCAP);
    if (!encap || nla_put_u32(msg, SEG6_LOCAL_ACTION, r->action) != 0) {
        return -ENOMEM;
    }
    if (r->flv_ops) {
        struct nlattr *fl = nla_nest_start(msg, SEG6_LOCAL_FLAVORS);
        if (!fl || nla_put_u32(msg, SEG6_LOCAL_FLV_OPERATION, r->flv_ops) != 0 ||
            nla_put_u8(msg, SEG6_LOCAL_FLV_LCBLOCK_BITS, r->lblen) != 0 ||
            nla_put_u8(msg, SEG6_LOCAL_FLV_LCNODE_FN_BITS, r->nflen) != 0) {
            return -ENOMEM;
        }
        nla_nest_end(msg, fl);
    }
    if (r->counters) {
        /* the kernel counts when the nest holds all three counters, zeroed (iproute2 "count") */
        struct nlattr *c = nla_nest_start(msg, SEG6_LOCAL_COUNTERS);
        if (!c || nla_put_u64(msg, SEG6_LOCAL_CNT_PACKETS, 0) != 0 ||
            nla_put_u64(msg, SEG6_LOCAL_CNT_BYTES, 0) != 0 ||
            nla_put_u64(msg, SEG6_LOCAL_CNT_ERRORS, 0) != 0) {
            return -ENOMEM;
        }
        nla_nest_end(msg, c);
    }
    nla_nest_end(msg, encap);
    return 0;
}

static int route_msg(mrcctl_nl *nl, int type, int flags, const mrcctl_nl_route *r, char *errmsg,
                     size_t errmsglen, const char *what)
{
    struct nl_msg *msg = nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_ACK | flags);
    char kmsg[256] = "";
    exchange x = {.msg = kmsg, .msglen = sizeof(kmsg)};
    int rv = msg ? put_route(msg, r) : -ENOMEM;
    if (rv == 0) {
        rv = run(nl, msg, &x);
    }
    nlmsg_free(msg);
    if (rv != 0) {
        errtext(errmsg, errmsglen, what, rv, kmsg);
    }
    return rv;
}

int mrcctl_nl_route_add(mrcctl_nl *nl, const mrcctl_nl_route *r, bool replace, char *errmsg,
                     size_t errmsglen)
{
    int flags = NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL);
    return route_msg(nl, RTM_NEWROUTE, flags, r, errmsg, errmsglen, "cannot add the route");
}

int mrcctl_nl_route_del(mrcctl_nl *nl, const mrcctl_nl_route *r, char *errmsg, size_t errmsglen)
{
    return route_msg(nl, RTM_DELROUTE, 0, r, errmsg, errmsglen, "cannot remove the route");
}

typedef struct addr_list {
    mrcctl_nl_addr *v;
    size_t n, cap;
} addr_list;

static int parse_addr(struct nlmsghdr *nlh, void *arg)
{
    addr_list *l = arg;
    struct nlattr *tb[IFA_MAX + 1];
    if (nlh->nlmsg_type != RTM_NEWADDR || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifaddrmsg))) {
        return 0;
    }
    struct ifaddrmsg *ifa = nlmsg_data(nlh);
    if (ifa->ifa_family != AF_INET6 || nlmsg_parse(nlh, sizeof(*ifa), tb, IFA_MAX, NULL) != 0) {
        return 0;
    }
    struct nlattr *a = tb[IFA_ADDRESS] ? tb[IFA_ADDRESS] : tb[IFA_LOCAL];
    if (!a || nla_len(a) != 16) {
        return 0;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = util_xrealloc(l->v, l->cap * sizeof(*l->v));
    }
    mrcctl_nl_addr *x = &l->v[l->n++];
    x->ifindex = (int)ifa->ifa_index;
    memcpy(x->addr, nla_data(a), 16);
    x->plen = ifa->ifa_prefixlen;
    x->proto = (tb[IFA_PROTO] && nla_len(tb[IFA_PROTO]) >= 1) ? nla_get_u8(tb[IFA_PROTO]) : 0;
    return 0;
}

int mrcctl_nl_addrs_dump(mrcctl_nl *nl, mrcctl_nl_addr **paddrs, size_t *pn, char *errmsg, size_t errmsglen)
{
    addr_list l = {0};
    struct ifaddrmsg ifa = {.ifa_family = AF_INET6};
    int rv = dump(nl, RTM_GETADDR, &ifa, sizeof(ifa), parse_addr, &l, &l.n, errmsg, errmsglen);
    if (rv != 0) {
        errtext(errmsg, errmsglen, "cannot list the addresses", rv, NULL);
        free(l.v);
        return rv;
    }
    *paddrs = l.v;
    *pn = l.n;
    return 0;
}

static int addr_msg(mrcctl_nl *nl, int type, int flags, const mrcctl_nl_addr *a, char *errmsg,
                    size_t errmsglen, const char *what)
{
    struct ifaddrmsg ifa = {
        .ifa_family = AF_INET6,
        .ifa_prefixlen = a->plen,
        .ifa_flags = IFA_F_NODAD | IFA_F_PERMANENT,
        .ifa_scope =
            (a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80) ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE,
        .ifa_index = (uint32_t)a->ifindex,
    };
    struct nl_msg *msg = nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_ACK | flags);
    char kmsg[256] = "";
    exchange x = {.msg = kmsg, .msglen = sizeof(kmsg)};
    int rv = 0;
    if (!msg || nlmsg_append(msg, &ifa, sizeof(ifa), NLMSG_ALIGNTO) != 0 ||
        nla_put(msg, IFA_LOCAL, 16, a->addr) != 0 || nla_put(msg, IFA_ADDRESS, 16, a->addr) != 0 ||
        nla_put_u32(msg, IFA_FLAGS, IFA_F_NODAD | IFA_F_PERMANENT) != 0 ||
        (a->proto && nla_put_u8(msg, IFA_PROTO, a->proto) != 0)) {
        rv = -ENOMEM;
    }
    if (rv == 0) {
        rv = run(nl, msg, &x);
    }
    nlmsg_free(msg);
    if (rv != 0) {
        errtext(errmsg, errmsglen, what, rv, kmsg);
    }
    return rv;
}

int mrcctl_nl_addr_add(mrcctl_nl *nl, const mrcctl_nl_addr *a, char *errmsg, size_t errmsglen)
{
    return addr_msg(nl, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, a, errmsg, errmsglen,
                    "cannot add the address");
}

int mrcctl_nl_addr_del(mrcctl_nl *nl, const mrcctl_nl_addr *a, char *errmsg, size_t errmsglen)
{
    return addr_msg(nl, RTM_DELADDR, 0, a, errmsg, errmsglen, "cannot remove the address");
}

typedef struct sysctl_read {
    const char *name;
    int value;
} sysctl_read;

static int read_sysctl(void *arg)
{
    sysctl_read *s = arg;
    char path[256], buf[32];
    snprintf(path, sizeof(path), "/proc/sys/net/ipv6/%s", s->name);
    FILE *f = fopen(path, "r");
    s->value = -1;
    if (f) {
        if (fgets(buf, sizeof(buf), f)) {
            s->value = atoi(buf);
        }
        fclose(f);
    }
    return 0;
}

int mrcctl_nl_sysctl6(mrcctl_nl *nl, const char *name)
{
    sysctl_read s = {.name = name};
    in_netns(nl->nsfd, read_sysctl, &s);
    return s.value;
}
