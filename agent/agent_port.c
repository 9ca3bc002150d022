/* SPDX-License-Identifier: MIT */
/* The link state of the host's plane ports: a libnl route socket on RTNLGRP_LINK in the
 * agent's libevent loop, with a full re-read of the links whenever notifications were lost. */
#include "agent_port.h"

#include <errno.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <mrcfab/mrc.h>

#include "util.h"

#define RCVBUF (1 << 20)   /* asked; the kernel caps it at net.core.rmem_max */
#define MSGBUF (64 * 1024) /* a dump's datagram is at most 32 KiB on current kernels */
#define FIRST_READ_MS 5000 /* the kernel answers a dump at once: this is a broken socket */
#define RETRY_US 100000    /* a refused dump is asked again after this */
#define READS_PER_EVENT 64 /* datagrams read per wakeup before the loop gets a turn */

typedef struct pstate {
    char name[IFNAMSIZ];
    int ifindex; /* 0: no such interface known */
    bool up;
    bool seen; /* in the dump under way */
} pstate;

struct agent_port {
    struct event_base *base;
    struct event *rd, *retry;
    struct nl_sock *sk;
    int fd;
    agent_port_cb cb;
    void *user;
    unsigned n;
    pstate ports[MRC_MAX_PORTS];
    bool quiet;   /* the first read: its states are no changes */
    bool dumping; /* a dump is under way, |dump_seq| */
    bool redump;  /* ... and another must follow it: notifications were lost meanwhile */
    uint32_t dump_seq;
    int dump_err; /* the kernel refused the last dump with this -errno */
    agent_port_stats st;
    uint8_t buf[MSGBUF];
};

static void set_state(agent_port *ap, unsigned i, bool up)
{
    pstate *p = &ap->ports[i];
    if (p->up == up) {
        return;
    }
    p->up = up;
    util_log(UTIL_LOG_INFO, "port %u (%s) %s", i, p->name, up ? "up" : "down");
    if (!ap->quiet) {
        ap->st.changes++;
        ap->cb(ap->user, i, up);
    }
}

/* An RTM_NEWLINK or RTM_DELLINK, a notification or a dump's: each carries the whole state of
 * its link, so the same code serves both. */
static void on_link(agent_port *ap, struct nlmsghdr *h)
{
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
        return;
    }
    const struct ifinfomsg *ifi = nlmsg_data(h);
    struct nlattr *tb[IFLA_MAX + 1];
    if (nlmsg_parse(h, sizeof(*ifi), tb, IFLA_MAX, NULL) < 0) {
        return;
    }
    char name[IFNAMSIZ] = "";
    if (tb[IFLA_IFNAME]) {
        nla_strlcpy(name, tb[IFLA_IFNAME], sizeof(name));
    }
    bool del = h->nlmsg_type == RTM_DELLINK;
    unsigned flags = ifi->ifi_flags;
    bool up = !del && (flags & IFF_UP) && (flags & IFF_RUNNING) && (flags & IFF_LOWER_UP);
    for (unsigned i = 0; i < ap->n; i++) {
        pstate *p = &ap->ports[i];
        if (name[0] && strcmp(name, p->name) == 0) {
            p->ifindex = del ? 0 : ifi->ifi_index;
            p->seen |= !del;
            set_state(ap, i, up);
        } else if (p->ifindex && p->ifindex == ifi->ifi_index && (del || name[0])) {
            /* our interface was renamed away (or went): the name has no interface now */
            p->ifindex = 0;
            set_state(ap, i, false);
        }
    }
}

static void on_retry(evutil_socket_t fd, short what, void *arg);

/* Asks for every link; the answers come through the socket like notifications. */
static int start_dump(agent_port *ap)
{
    struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
    struct nl_msg *m = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP);
    int rv = m ? nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO) : -NLE_NOMEM;
    if (rv == 0) {
        rv = nl_send_auto(ap->sk, m);
    }
    if (rv >= 0) {
        ap->dump_seq = nlmsg_hdr(m)->nlmsg_seq;
        ap->dumping = true;
        ap->redump = false;
        ap->dump_err = 0;
        ap->st.dumps++;
        for (unsigned i = 0; i < ap->n; i++) {
            ap->ports[i].seen = false;
        }
        rv = 0;
    } else {
        util_log(UTIL_LOG_WARNING, "ports: cannot ask for the links: %s", nl_geterror(rv));
        rv = -EAGAIN;
        ap->dump_err = rv;
        if (!ap->quiet) {
            struct timeval tv = {0, RETRY_US};
            evtimer_add(ap->retry, &tv);
        }
    }
    nlmsg_free(m);
    return rv;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    agent_port *ap = arg;
    if (!ap->dumping) {
        start_dump(ap);
    }
}

static void dump_done(agent_port *ap)
{
    ap->dumping = false;
    /* a name the whole table did not have is no interface */
    for (unsigned i = 0; i < ap->n; i++) {
        if (!ap->ports[i].seen) {
            ap->ports[i].ifindex = 0;
            set_state(ap, i, false);
        }
    }
    if (ap->redump) {
        start_dump(ap);
    }
}

/* The kernel's notifications were dropped (or cut): only a full read can tell what changed. */
static void overflow(agent_port *ap)
{
    ap->st.overflows++;
    util_log(UTIL_LOG_NOTICE, "ports: netlink notifications were lost: reading every link again");
    if (ap->dumping) {
        ap->redump = true;
    } else {
        start_dump(ap);
    }
}

static void process(agent_port *ap, int len)
{
    for (struct nlmsghdr *h = (struct nlmsghdr *)ap->buf; nlmsg_ok(h, len);
         h = nlmsg_next(h, &len)) {
        bool ours = ap->dumping && h->nlmsg_seq == ap->dump_seq;
        if (ours && (h->nlmsg_flags & NLM_F_DUMP_INTR)) {
            ap->redump = true; /* the table changed while it was being read */
        }
        switch (h->nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
            on_link(ap, h);
            break;
        case NLMSG_DONE:
            if (ours) {
                dump_done(ap);
            }
            break;
        case NLMSG_ERROR:
            if (ours && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
                const struct nlmsgerr *e = nlmsg_data(h);
                if (e->error) {
                    ap->dumping = false;
                    ap->dump_err = e->error;
                    util_log(UTIL_LOG_WARNING, "ports: the kernel refused the link dump: %s",
                             strerror(-e->error));
                    if (!ap->quiet) {
                        struct timeval tv = {0, RETRY_US};
                        evtimer_add(ap->retry, &tv);
                    }
                }
            }
            break;
        default:
            break;
        }
    }
}

/* Reads what the socket holds. libnl's nl_recvmsgs() is not used: it reports ENOBUFS as a
 * generic NLE_NOMEM and, non-blocking, ends a read differently from one version to another;
 * here the errno is seen as it is and libnl parses the messages. */
static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    agent_port *ap = arg;
    for (int k = 0; k < READS_PER_EVENT; k++) {
        struct sockaddr_nl sa;
        struct iovec iov = {ap->buf, sizeof(ap->buf)};
        struct msghdr mh = {
            .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};
        ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == ENOBUFS) {
                overflow(ap);
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                util_log(UTIL_LOG_ERR, "ports: netlink read: %s", strerror(errno));
            }
            return;
        }
        if (n == 0) {
            return;
        }
        if (mh.msg_flags & MSG_TRUNC) {
            overflow(ap);
            continue;
        }
        if (mh.msg_namelen != sizeof(sa) || sa.nl_pid != 0) {
            continue; /* only the kernel speaks for the links */
        }
        process(ap, (int)n);
    }
}

static bool ifname_ok(const char *s)
{
    size_t n = s ? strnlen(s, IFNAMSIZ) : 0;
    if (n == 0 || n >= IFNAMSIZ || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' || s[i] == ':' || (unsigned char)s[i] <= ' ' || s[i] == 0x7f) {
            return false;
        }
    }
    return true;
}

static int nl_to_errno(int nlerr)
{
    switch (-nlerr) {
    case NLE_NOMEM:
        return -ENOMEM;
    case NLE_PERM:
        return -EPERM;
    case NLE_AGAIN:
        return -EAGAIN;
    case NLE_BAD_SOCK:
        return -EBADF;
    default:
        return -EIO;
    }
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The first read, before the loop runs: done when a dump finished with no other to follow. */
static int first_read(agent_port *ap)
{
    int rv = start_dump(ap);
    uint64_t deadline = mono_ms() + FIRST_READ_MS;
    while (rv == 0 && ap->dumping) {
        uint64_t now = mono_ms();
        if (now >= deadline) {
            util_log(UTIL_LOG_ERR, "ports: no answer to the link dump in %d ms", FIRST_READ_MS);
            return -ETIMEDOUT;
        }
        struct pollfd pfd = {.fd = ap->fd, .events = POLLIN};
        int k = poll(&pfd, 1, (int)(deadline - now));
        if (k < 0 && errno != EINTR) {
            return -errno;
        }
        if (k > 0) {
            on_read(ap->fd, EV_READ, ap);
        }
        if (!ap->dumping && ap->dump_err) {
            rv = ap->dump_err;
        }
    }
    return rv;
}

int agent_port_new(struct event_base *base, const char *const *ifnames, unsigned nports,
                   agent_port_cb cb, void *user, agent_port **pport)
{
    if (!base || !ifnames || !cb || !pport || nports == 0 || nports > MRC_MAX_PORTS) {
        util_log(UTIL_LOG_ERR, "ports: need an event base, a callback and 1-%d interface names",
                 MRC_MAX_PORTS);
        return -EINVAL;
    }
    for (unsigned i = 0; i < nports; i++) {
        if (!ifname_ok(ifnames[i])) {
            util_log(UTIL_LOG_ERR,
                     "ports: port %u: '%.40s' is not an interface name (1-%d characters, no "
                     "'/', ':' or space)",
                     i, ifnames[i] ? ifnames[i] : "", IFNAMSIZ - 1);
            return -EINVAL;
        }
        for (unsigned j = 0; j < i; j++) {
            if (strcmp(ifnames[i], ifnames[j]) == 0) {
                util_log(UTIL_LOG_ERR, "ports: ports %u and %u are both '%s'", j, i, ifnames[i]);
                return -EINVAL;
            }
        }
    }
    agent_port *ap = util_xcalloc(1, sizeof(*ap));
    ap->base = base;
    ap->cb = cb;
    ap->user = user;
    ap->n = nports;
    for (unsigned i = 0; i < nports; i++) {
        memcpy(ap->ports[i].name, ifnames[i], strlen(ifnames[i]) + 1);
    }
    int rv;
    ap->sk = nl_socket_alloc();
    if (!ap->sk) {
        rv = -ENOMEM;
        goto fail_sock;
    }
    nl_socket_disable_auto_ack(ap->sk);
    if ((rv = nl_connect(ap->sk, NETLINK_ROUTE)) < 0 ||
        (rv = nl_socket_add_membership(ap->sk, RTNLGRP_LINK)) < 0 ||
        (rv = nl_socket_set_buffer_size(ap->sk, RCVBUF, 0)) < 0 ||
        (rv = nl_socket_set_nonblocking(ap->sk)) < 0) {
        util_log(UTIL_LOG_ERR, "ports: netlink socket: %s", nl_geterror(rv));
        rv = nl_to_errno(rv);
        goto fail_connect;
    }
    ap->fd = nl_socket_get_fd(ap->sk);
    ap->rd = event_new(base, ap->fd, EV_READ | EV_PERSIST, on_read, ap);
    ap->retry = evtimer_new(base, on_retry, ap);
    if (!ap->rd || !ap->retry) {
        rv = -ENOMEM;
        goto fail_events;
    }
    ap->quiet = true;
    if ((rv = first_read(ap)) != 0) {
        goto fail_events;
    }
    ap->quiet = false;
    if (event_add(ap->rd, NULL) != 0) {
        rv = -ENOMEM;
        goto fail_events;
    }
    *pport = ap;
    return 0;

fail_events:
    if (ap->retry) {
        event_free(ap->retry);
    }
    if (ap->rd) {
        event_free(ap->rd);
    }
fail_connect:
    nl_socket_free(ap->sk);
fail_sock:
    free(ap);
    return rv;
}

bool agent_port_up(const agent_port *ap, unsigned port)
{
    return ap && port < ap->n && ap->ports[port].up;
}

void agent_port_get_stats(const agent_port *ap, agent_port_stats *stats)
{
    *stats = ap->st;
}

void agent_port_free(agent_port *ap)
{
    if (!ap) {
        return;
    }
    event_free(ap->retry);
    event_free(ap->rd);
    nl_socket_free(ap->sk);
    free(ap);
}
