/* SPDX-License-Identifier: MIT */
/* The only glue between the plane ports and the engine. SRv6 mode: packets leave by a raw
 * protocol-41 socket per port, bound to the port's interface (so its route is the port's
 * own, not the best of every port's) and to the uSID address its T0 leaves in the outer
 * header, with the path as the outer destination; they arrive on one raw protocol-41 socket
 * for every port, which says each arrival's interface. One socket keeps the ports' packets
 * in the order they arrived: a socket per port read in turn would reorder the planes by a
 * whole batch, which the loss detector takes for loss. ECMP mode: the inner packet is sent as is
 * (IPPROTO_RAW) and read whole off the port by a packet socket with a filter for MRC's UDP port. */
#include "agent_io.h"

#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define IO_BATCH 64
#define IO_FLUSH_MAX 512 /* packets pulled per turn before the loop looks at the sockets */
#define IO_RX_TURNS 4    /* batches read per readable event */
#define IO_ROOM 9216

typedef struct io_port {
    struct agent_io *io;
    unsigned index; /* UINT_MAX: the shared socket, whose packets say their port */
    unsigned ifindex;
    int fd;   /* sends (and receives, SRv6) */
    int rxfd; /* ECMP: the packet socket */
    struct event *rx_ev, *tx_ev;
    bool blocked;
} io_port;

struct agent_io {
    agent_io_cfg cfg;
    unsigned nports;
    uint32_t port_ok; /* bit p: port p is cabled and open */
    io_port ports[MRC_MAX_PORTS];
    int sink;       /* ECMP: the UDP port held so that the kernel answers no port-unreachable */
    io_port shared; /* SRv6: the one socket */
    struct event *timer, *kick;
    uint64_t armed;
    /* per peer host: its template, built on first use */
    fab_template **tmpl;
    uint8_t last_dst[16];
    uint32_t last_host;
    uint8_t (*rxbuf)[IO_ROOM], (*txbuf)[IO_ROOM];
    agent_io_stats stats;
};

uint64_t agent_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rearm(agent_io *io)
{
    uint64_t exp = mrc_get_expiry(io->cfg.ctx);
    if (exp == io->armed) {
        return;
    }
    io->armed = exp;
    if (exp == UINT64_MAX) {
        evtimer_del(io->timer);
        return;
    }
    uint64_t now = agent_now(), wait = exp > now ? exp - now : 0;
    struct timeval tv = {.tv_sec = (time_t)(wait / 1000000000ull),
                         .tv_usec = (suseconds_t)((wait % 1000000000ull + 999) / 1000)};
    evtimer_add(io->timer, &tv);
}

/* The peer host that owns inner address |dst|, FAB_NONE if none. */
static uint32_t peer_of(agent_io *io, const uint8_t dst[16])
{
    if (io->last_host != FAB_NONE && memcmp(dst, io->last_dst, 16) == 0) {
        return io->last_host;
    }
    uint32_t host;
    unsigned port;
    if (fab_host_by_addr(io->cfg.topo, dst, &host, &port) != 0) {
        return FAB_NONE;
    }
    memcpy(io->last_dst, dst, 16);
    io->last_host = host;
    return host;
}

/* The outer destination of a packet: the path its EV names to the peer. */
static int outer_of(agent_io *io, const mrc_tx_info *info, uint8_t dest[16])
{
    uint32_t host = peer_of(io, info->dst);
    if (host == FAB_NONE || host == io->cfg.host) {
        return -ENOENT;
    }
    if (!io->tmpl[host]) {
        fab_template *t = util_xmalloc(sizeof(*t));
        if (fab_template_init(io->cfg.topo, io->cfg.host, host, t) != 0) {
            free(t);
            return -ENOENT;
        }
        io->tmpl[host] = t;
    }
    return fab_template_outer(io->tmpl[host], info->ev, dest) == 0 ? 0 : -ENOENT;
}

static void send_port(agent_io *io, io_port *pt, struct mmsghdr *msgs, unsigned n)
{
    unsigned done = 0;
    while (done < n) {
        int k = sendmmsg(pt->fd, msgs + done, n - done, MSG_DONTWAIT);
        if (k > 0) {
            for (unsigned i = done; i < done + (unsigned)k; i++) {
                io->stats.tx_bytes += msgs[i].msg_hdr.msg_iov->iov_len;
            }
            io->stats.tx_pkts += (unsigned)k;
            io->stats.tx_port[pt->index] += (unsigned)k;
            done += (unsigned)k;
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            /* the socket is full: the rest is lost to the engine, which resends it; the port
             * takes no more until it can write */
            io->stats.tx_blocked++;
            pt->blocked = true;
            event_add(pt->tx_ev, NULL);
            return;
        }
        if (errno != EINTR) {
            io->stats.tx_errors++; /* e.g. no route while the port is down: skip one packet */
            done++;
        }
    }
}

static void flush(agent_io *io)
{
    static const int srv6_cmsg = CMSG_SPACE(sizeof(int));
    mrc_tx_pkt pkts[IO_BATCH];
    struct mmsghdr msgs[MRC_MAX_PORTS][IO_BATCH];
    struct iovec iov[IO_BATCH];
    struct sockaddr_in6 to[IO_BATCH];
    char ctl[IO_BATCH][CMSG_SPACE(sizeof(int))];
    unsigned total = 0;
    for (;;) {
        uint32_t mask = io->port_ok;
        for (unsigned p = 0; p < io->nports; p++) {
            mask &= io->ports[p].blocked ? ~(1u << p) : ~0u;
        }
        if (!mask || total >= IO_FLUSH_MAX) {
            if (mask) {
                event_active(io->kick, 0, 0); /* more may be due: after the sockets' turn */
            }
            break;
        }
        for (unsigned i = 0; i < IO_BATCH; i++) {
            pkts[i].data = io->txbuf[i];
            pkts[i].room = IO_ROOM;
        }
        int n = mrc_write_pkts(io->cfg.ctx, pkts, IO_BATCH, mask, agent_now());
        if (n <= 0) {
            break;
        }
        total += (unsigned)n;
        unsigned cnt[MRC_MAX_PORTS] = {0};
        for (int i = 0; i < n; i++) {
            const mrc_tx_info *ti = &pkts[i].info;
            memset(&to[i], 0, sizeof(to[i]));
            to[i].sin6_family = AF_INET6;
            if (io->cfg.mode == AGENT_IO_SRV6) {
                if (outer_of(io, ti, to[i].sin6_addr.s6_addr) != 0) {
                    io->stats.tx_unmapped++;
                    continue;
                }
            } else {
                memcpy(to[i].sin6_addr.s6_addr, ti->dst, 16);
            }
            iov[i] = (struct iovec){.iov_base = pkts[i].data, .iov_len = pkts[i].len};
            struct msghdr *mh = &msgs[ti->port][cnt[ti->port]++].msg_hdr;
            *mh = (struct msghdr){.msg_name = &to[i],
                                  .msg_namelen = sizeof(to[i]),
                                  .msg_iov = &iov[i],
                                  .msg_iovlen = 1};
            if (io->cfg.mode == AGENT_IO_SRV6) {
                /* the outer traffic class is what switches mark and trim by */
                memset(ctl[i], 0, sizeof(ctl[i]));
                mh->msg_control = ctl[i];
                mh->msg_controllen = (size_t)srv6_cmsg;
                struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
                cm->cmsg_level = IPPROTO_IPV6;
                cm->cmsg_type = IPV6_TCLASS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                int tc = ti->dscp << 2 | ti->ecn;
                memcpy(CMSG_DATA(cm), &tc, sizeof(tc));
            }
        }
        for (unsigned p = 0; p < io->nports; p++) {
            if (cnt[p]) {
                send_port(io, &io->ports[p], msgs[p], cnt[p]);
            }
        }
        if (n < IO_BATCH) {
            break;
        }
    }
    rearm(io);
}

static void after(agent_io *io, uint64_t now)
{
    if (io->cfg.after) {
        io->cfg.after(io->cfg.user, now);
    }
    flush(io);
}

/* The outer traffic class and the port of an arrival on the shared socket (UINT_MAX: not a
 * plane port). */
static unsigned srv6_arrival(const agent_io *io, struct msghdr *mh, uint8_t *ptc)
{
    unsigned port = UINT_MAX;
    *ptc = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
            int tc;
            memcpy(&tc, CMSG_DATA(cm), sizeof(tc));
            *ptc = (uint8_t)tc;
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
            for (unsigned p = 0; p < io->nports; p++) {
                port = io->ports[p].ifindex == pi.ipi6_ifindex && (io->port_ok >> p & 1) ? p : port;
            }
        }
    }
    return port;
}

static void on_rx(evutil_socket_t fd, short what, void *arg)
{
    io_port *pt = arg;
    agent_io *io = pt->io;
    struct mmsghdr msgs[IO_BATCH];
    struct iovec iov[IO_BATCH];
    char ctl[IO_BATCH][CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct in6_pktinfo))];
    mrc_rx_pkt rx[IO_BATCH];
    (void)what;
    for (int turn = 0; turn < IO_RX_TURNS; turn++) {
        for (unsigned i = 0; i < IO_BATCH; i++) {
            iov[i] = (struct iovec){.iov_base = io->rxbuf[i], .iov_len = IO_ROOM};
            msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i],
                                              .msg_iovlen = 1,
                                              .msg_control = ctl[i],
                                              .msg_controllen = sizeof(ctl[i])};
        }
        int n = recvmmsg(fd, msgs, IO_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            break;
        }
        int k = 0;
        for (int i = 0; i < n; i++) {
            unsigned port = pt->index;
            uint8_t tc = 0;
            if (io->cfg.mode == AGENT_IO_SRV6) {
                port = srv6_arrival(io, &msgs[i].msg_hdr, &tc);
                if (port == UINT_MAX) {
                    io->stats.rx_garbage++; /* protocol 41 on another interface */
                    continue;
                }
            }
            rx[k].data = io->rxbuf[i];
            rx[k].len = msgs[i].msg_len;
            rx[k].info = (mrc_rx_info){.port = (uint8_t)port};
            io->stats.rx_port[port]++;
            io->stats.rx_bytes += rx[k].len;
            if (io->cfg.mode == AGENT_IO_SRV6) {
                rx[k].info.ecn = tc & 3;
                rx[k].info.dscp = tc >> 2;
            } else if (rx[k].len >= 2) {
                /* the inner header is the only one: the engine reads its class itself */
                rx[k].info.ecn = (io->rxbuf[i][1] >> 4) & 3;
                rx[k].info.dscp = (uint8_t)((io->rxbuf[i][0] & 0xf) << 2 | io->rxbuf[i][1] >> 6);
            }
            k++;
        }
        io->stats.rx_pkts += (unsigned)n;
        uint64_t now = agent_now();
        int ok = mrc_read_pkts(io->cfg.ctx, rx, (unsigned)k, now);
        io->stats.rx_garbage += (unsigned)(k - (ok > 0 ? ok : 0));
        after(io, now);
        if (n < IO_BATCH) {
            break;
        }
    }
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    io_port *pt = arg;
    (void)fd;
    (void)what;
    pt->blocked = false;
    flush(pt->io);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    agent_io *io = arg;
    (void)fd;
    (void)what;
    uint64_t now = agent_now();
    io->armed = UINT64_MAX;
    mrc_handle_expiry(io->cfg.ctx, now);
    after(io, now);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
    agent_io *io = arg;
    (void)fd;
    (void)what;
    after(io, agent_now());
}

void agent_io_kick(agent_io *io)
{
    event_active(io->kick, 0, 0);
}

/* ECMP mode's receive filter: IPv6, next header UDP, destination port |udp| (no extension
 * headers: MRC's inner packets carry none). */
static int attach_udp_filter(int fd, uint16_t udp)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 3),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 42),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, udp, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static int drop_all(int fd)
{
    struct sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
    struct sock_fprog prog = {.len = 1, .filter = code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* A UDP socket on MRC's port that drops everything in its filter: the packet socket reads
 * the packets, and the kernel, finding a socket, sends no port-unreachable. */
static int open_sink(uint16_t udp)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(udp)};
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || drop_all(fd) != 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = -errno;
        if (fd >= 0) {
            close(fd);
        }
        return e;
    }
    return fd;
}

static int open_port(agent_io *io, io_port *pt, char *err, size_t errlen)
{
    const fab_topo *topo = io->cfg.topo;
    char ifname[FAB_IFNAME_MAX];
    int one = 1, in = PACKET_IGNORE_OUTGOING, big = 32 << 20, rv;
    fab_host_ifname(topo, io->cfg.host, pt->index, ifname, sizeof(ifname));
    unsigned ifindex = if_nametoindex(ifname);
    if (!ifindex) {
        snprintf(err, errlen, "port %u: no interface %s in this namespace", pt->index, ifname);
        return -ENODEV;
    }
    pt->ifindex = ifindex;
    pt->fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    io->cfg.mode == AGENT_IO_SRV6 ? IPPROTO_IPV6 : IPPROTO_RAW);
    if (pt->fd < 0 ||
        setsockopt(pt->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) != 0) {
        goto fail;
    }
    if (io->cfg.mode == AGENT_IO_SRV6) {
        /* it sends only: what arrives is the shared socket's, so this one keeps nothing */
        struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
        fab_host_usid_addr(topo, io->cfg.host, pt->index, sa.sin6_addr.s6_addr);
        if (bind(pt->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || drop_all(pt->fd) != 0) {
            goto fail;
        }
        setsockopt(pt->fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
        pt->tx_ev = event_new(io->cfg.base, pt->fd, EV_WRITE, on_writable, pt);
        io->port_ok |= 1u << pt->index;
        return 0;
    }
    struct sockaddr_ll ll = {
        .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IPV6), .sll_ifindex = (int)ifindex};
    pt->rxfd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_IPV6));
    /* only what arrives: the socket would also see this host's own sends */
    if (pt->rxfd < 0 || attach_udp_filter(pt->rxfd, fab_topo_plan(topo)->udp_port) != 0 ||
        bind(pt->rxfd, (struct sockaddr *)&ll, sizeof(ll)) != 0 ||
        setsockopt(pt->rxfd, SOL_PACKET, in, &one, sizeof(one)) != 0) {
        goto fail;
    }
    /* a burst of the whole window must fit: a drop here costs a timeout */
    setsockopt(pt->rxfd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
    setsockopt(pt->fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
    pt->rx_ev = event_new(io->cfg.base, pt->rxfd, EV_READ | EV_PERSIST, on_rx, pt);
    pt->tx_ev = event_new(io->cfg.base, pt->fd, EV_WRITE, on_writable, pt);
    event_add(pt->rx_ev, NULL);
    io->port_ok |= 1u << pt->index;
    return 0;
fail:
    rv = -errno;
    snprintf(err, errlen, "port %u (%s): %s", pt->index, ifname, strerror(errno));
    return rv;
}

int agent_io_new(const agent_io_cfg *cfg, agent_io **pio, char *err, size_t errlen)
{
    agent_io *io = util_xcalloc(1, sizeof(*io));
    int rv = 0;
    io->cfg = *cfg;
    io->nports = fab_topo_planes(cfg->topo);
    io->armed = UINT64_MAX;
    io->last_host = FAB_NONE;
    io->sink = -1;
    io->tmpl = util_xcalloc(fab_topo_nhosts(cfg->topo), sizeof(*io->tmpl));
    io->rxbuf = util_xmalloc(IO_BATCH * sizeof(*io->rxbuf));
    io->txbuf = util_xmalloc(IO_BATCH * sizeof(*io->txbuf));
    io->timer = evtimer_new(cfg->base, on_timer, io);
    io->kick = event_new(cfg->base, -1, 0, on_kick, io);
    for (unsigned p = 0; p < io->nports; p++) {
        io->ports[p] = (io_port){.io = io, .index = p, .fd = -1, .rxfd = -1};
    }
    io->shared = (io_port){.io = io, .index = UINT_MAX, .fd = -1, .rxfd = -1};
    if (cfg->mode == AGENT_IO_SRV6) {
        int one = 1, big = 32 << 20; /* as a port's, below */
        io_port *sh = &io->shared;
        sh->fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_IPV6);
        if (sh->fd < 0 ||
            setsockopt(sh->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) != 0 ||
            setsockopt(sh->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) != 0) {
            rv = -errno;
            snprintf(err, errlen, "the protocol-41 socket: %s", strerror(errno));
            goto out;
        }
        setsockopt(sh->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
        setsockopt(sh->fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
        sh->rxfd = sh->fd;
        sh->rx_ev = event_new(cfg->base, sh->fd, EV_READ | EV_PERSIST, on_rx, sh);
        event_add(sh->rx_ev, NULL);
    } else {
        io->sink = open_sink(fab_topo_plan(cfg->topo)->udp_port);
        if (io->sink < 0) {
            rv = io->sink;
            snprintf(err, errlen, "UDP port %u: %s", fab_topo_plan(cfg->topo)->udp_port,
                     strerror(-rv));
            goto out;
        }
    }
    for (unsigned p = 0; p < io->nports; p++) {
        uint32_t sw;
        unsigned swport;
        if (fab_host_attach(cfg->topo, cfg->host, p, &sw, &swport) != 0) {
            continue; /* not cabled: the engine never sends there */
        }
        rv = open_port(io, &io->ports[p], err, errlen);
        if (rv != 0) {
            goto out;
        }
    }
out:
    if (rv != 0) {
        agent_io_free(io);
        return rv;
    }
    *pio = io;
    return 0;
}

void agent_io_free(agent_io *io)
{
    if (!io) {
        return;
    }
    for (unsigned p = 0; p <= io->nports; p++) {
        io_port *pt = p < io->nports ? &io->ports[p] : &io->shared;
        if (p < io->nports && io->cfg.mode == AGENT_IO_SRV6) {
            pt->rxfd = -1; /* the shared socket's, closed last */
        }
        if (pt->rx_ev) {
            event_free(pt->rx_ev);
        }
        if (pt->tx_ev) {
            event_free(pt->tx_ev);
        }
        if (pt->rxfd >= 0 && pt->rxfd != pt->fd) {
            close(pt->rxfd);
        }
        if (pt->fd >= 0) {
            close(pt->fd);
        }
    }
    if (io->sink >= 0) {
        close(io->sink);
    }
    for (uint32_t h = 0; h < fab_topo_nhosts(io->cfg.topo); h++) {
        free(io->tmpl[h]);
    }
    free(io->tmpl);
    event_free(io->timer);
    event_free(io->kick);
    free(io->rxbuf);
    free(io->txbuf);
    free(io);
}

void agent_io_get_stats(const agent_io *io, agent_io_stats *stats)
{
    *stats = io->stats;
}
