/* SPDX-License-Identifier: MIT */
/* The only glue between the plane ports and the engine. SRv6 mode: packets leave by a raw
 * protocol-41 socket per port, bound to the port's interface (so its route is the port's
 * own, not the best of every port's) and to the uSID address its T0 leaves in the outer
 * header, with the path as the outer destination; they arrive on one packet socket for every
 * port, filtered to IPv6-in-IPv6, which says each arrival's interface (the raw sockets, which
 * keep nothing, stand in for a protocol-41 handler so that the kernel answers no error). One
 * socket keeps the ports' packets in the order they arrived: a socket per port read in turn
 * would reorder the planes by a whole batch, which the loss detector takes for loss. A raw
 * protocol-41 socket would do the same, but this kernel (6.18) hands it some 0.1 % of the
 * packets with no payload at all under load. Once the kernel's neighbour table knows
 * a port's next hop, the port's packets leave by a packet socket instead, the agent writing the
 * Ethernet and outer IPv6 headers itself: the kernel's IPv6 output (a route and neighbour
 * lookup per packet) was the largest cost of a send. ECMP mode: the inner packet is sent as is
 * (IPPROTO_RAW) and read whole off the port by a packet socket with a filter for MRC's UDP port. */
#include "agent_io.h"

#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <net/if_arp.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent_nexthop.h"
#include "util.h"

#define IO_BATCH 64
#define IO_FLUSH_MAX 512 /* packets pulled per turn before the loop looks at the sockets */
#define IO_RX_TURNS 4    /* batches read per readable event */
#define IO_ROOM 9216
#define IO_LL 14                    /* Ethernet header */
#define IO_HEAD (IO_LL + 40)        /* ... and the outer IPv6 header, before the packet */
#define IO_LL_REFRESH 2000000000ull /* the next hop is asked again this often (ns) ... */
#define IO_LL_RETRY 100000000ull    /* ... or this soon while it is not resolved */
#define IO_HOP_LIMIT 64

typedef struct io_port {
    struct agent_io *io;
    unsigned index; /* UINT_MAX: the shared socket, whose packets say their port */
    unsigned ifindex;
    int fd;   /* sends (and receives, SRv6) */
    int rxfd; /* ECMP: the packet socket */
    struct event *rx_ev, *tx_ev;
    bool blocked;
    /* SRv6: the packet socket and the headers it sends with, once the next hop is known */
    int llfd;
    struct event *lltx_ev;
    bool ll_ok;
    uint64_t ll_due;
    uint8_t ll[IO_LL]; /* next hop's MAC, the port's, 0x86dd */
    uint8_t src[16];   /* the port's uSID address: the outer source, and destination inbound */
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
    agent_nexthop *nh;
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

/* Whether port |pt| sends by its packet socket: asks the kernel for the next hop toward |dst|
 * when the last answer is due for renewal. */
static bool ll_ready(agent_io *io, io_port *pt, const uint8_t dst[16], uint64_t now)
{
    if (pt->llfd < 0 || now < pt->ll_due) {
        return pt->ll_ok;
    }
    uint8_t mac[6];
    int rv = agent_nexthop_mac(io->nh, pt->ifindex, dst, mac);
    if (rv == 0) {
        if (!pt->ll_ok || memcmp(pt->ll, mac, 6) != 0) {
            util_log(UTIL_LOG_DEBUG, "port %u: next hop %02x:%02x:%02x:%02x:%02x:%02x", pt->index,
                     mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
        }
        memcpy(pt->ll, mac, 6);
        pt->ll_ok = true;
        pt->ll_due = now + IO_LL_REFRESH;
    } else {
        /* the kernel's own sends resolve it meanwhile */
        if (pt->ll_ok || !pt->ll_due) {
            util_log(UTIL_LOG_DEBUG, "port %u: no next hop yet: %s", pt->index, strerror(-rv));
        }
        pt->ll_ok = false;
        pt->ll_due = now + IO_LL_RETRY;
    }
    return pt->ll_ok;
}

/* Writes the Ethernet and outer IPv6 headers in front of inner packet |pkt| (|len| bytes, room
 * for IO_HEAD before it) and returns the frame's start. The outer flow label is the inner's,
 * which carries the EV, so that an ECMP hop on the way spreads by it too. */
static uint8_t *ll_frame(const io_port *pt, uint8_t *pkt, size_t len, const uint8_t dst[16],
                         uint8_t tclass)
{
    uint8_t *f = pkt - IO_HEAD, *h = f + IO_LL;
    uint32_t flow = (uint32_t)(pkt[1] & 0xf) << 16 | (uint32_t)pkt[2] << 8 | pkt[3];
    uint32_t w = 6u << 28 | (uint32_t)tclass << 20 | flow;
    memcpy(f, pt->ll, IO_LL);
    h[0] = (uint8_t)(w >> 24);
    h[1] = (uint8_t)(w >> 16);
    h[2] = (uint8_t)(w >> 8);
    h[3] = (uint8_t)w;
    h[4] = (uint8_t)(len >> 8);
    h[5] = (uint8_t)len;
    h[6] = IPPROTO_IPV6;
    h[7] = IO_HOP_LIMIT;
    memcpy(h + 8, pt->src, 16);
    memcpy(h + 24, dst, 16);
    return f;
}

static void send_port(agent_io *io, io_port *pt, struct mmsghdr *msgs, unsigned n)
{
    unsigned done = 0;
    int fd = pt->ll_ok ? pt->llfd : pt->fd;
    while (done < n) {
        int k = sendmmsg(fd, msgs + done, n - done, MSG_DONTWAIT);
        if (k > 0) {
            for (unsigned i = done; i < done + (unsigned)k; i++) {
                io->stats.tx_port_bytes[pt->index] +=
                    msgs[i].msg_hdr.msg_iov->iov_len - (pt->ll_ok ? IO_HEAD : 0);
            }
            io->stats.tx_pkts += (unsigned)k;
            io->stats.tx_frames += pt->ll_ok ? (unsigned)k : 0;
            io->stats.tx_port[pt->index] += (unsigned)k;
            done += (unsigned)k;
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            /* the socket is full: the rest is lost to the engine, which resends it; the port
             * takes no more until it can write */
            io->stats.tx_blocked++;
            pt->blocked = true;
            event_add(pt->ll_ok ? pt->lltx_ev : pt->tx_ev, NULL);
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
    uint64_t now = agent_now();
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
            pkts[i].data = io->txbuf[i] + IO_HEAD;
            pkts[i].room = IO_ROOM - IO_HEAD;
        }
        int n = mrc_write_pkts(io->cfg.ctx, pkts, IO_BATCH, mask, now);
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
            io_port *pt = &io->ports[ti->port];
            uint8_t tc = (uint8_t)(ti->dscp << 2 | ti->ecn);
            /* the first of a port's packets in the batch decides how all of them leave */
            bool ll = cnt[ti->port] ? pt->ll_ok : ll_ready(io, pt, to[i].sin6_addr.s6_addr, now);
            struct msghdr *mh = &msgs[ti->port][cnt[ti->port]++].msg_hdr;
            if (ll) {
                uint8_t *f = ll_frame(pt, pkts[i].data, pkts[i].len, to[i].sin6_addr.s6_addr, tc);
                iov[i] = (struct iovec){.iov_base = f, .iov_len = pkts[i].len + IO_HEAD};
                *mh = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
                continue;
            }
            iov[i] = (struct iovec){.iov_base = pkts[i].data, .iov_len = pkts[i].len};
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
                int itc = tc;
                memcpy(CMSG_DATA(cm), &itc, sizeof(itc));
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

/* The plane port an IPv6-in-IPv6 arrival on the shared socket came in by and was sent to
 * (UINT_MAX: none), and its outer traffic class. */
static unsigned srv6_arrival(const agent_io *io, const struct sockaddr_ll *from, const uint8_t *pkt,
                             size_t len, uint8_t *ptc)
{
    if (len < IO_HEAD - IO_LL || (size_t)(pkt[4] << 8 | pkt[5]) + IO_HEAD - IO_LL != len) {
        return UINT_MAX; /* shorter than its outer header says (extension headers: not ours) */
    }
    for (unsigned p = 0; p < io->nports; p++) {
        const io_port *pt = &io->ports[p];
        if (pt->ifindex == (unsigned)from->sll_ifindex && (io->port_ok >> p & 1) &&
            memcmp(pkt + 24, pt->src, 16) == 0) {
            *ptc = (uint8_t)((pkt[0] & 0xf) << 4 | pkt[1] >> 4);
            return p;
        }
    }
    return UINT_MAX;
}

/* Reads and hands the engine one batch from |pt|'s socket; how many packets it read (0: none
 * waiting). */
static int rx_batch(agent_io *io, io_port *pt)
{
    struct mmsghdr msgs[IO_BATCH];
    struct iovec iov[IO_BATCH];
    struct sockaddr_ll from[IO_BATCH];
    mrc_rx_pkt rx[IO_BATCH];
    for (unsigned i = 0; i < IO_BATCH; i++) {
        iov[i] = (struct iovec){.iov_base = io->rxbuf[i], .iov_len = IO_ROOM};
        msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i],
                                          .msg_iovlen = 1,
                                          .msg_name = &from[i],
                                          .msg_namelen = sizeof(from[i])};
    }
    int n = recvmmsg(pt->rxfd, msgs, IO_BATCH, MSG_DONTWAIT, NULL);
    if (n <= 0) {
        return 0;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        unsigned port = pt->index;
        uint8_t tc = 0, *data = io->rxbuf[i];
        size_t len = msgs[i].msg_len;
        if (io->cfg.mode == AGENT_IO_SRV6) {
            port = srv6_arrival(io, &from[i], data, len, &tc);
            if (port == UINT_MAX) {
                io->stats.rx_garbage++; /* another interface's, or another address's */
                continue;
            }
            data += IO_HEAD - IO_LL;
            len -= IO_HEAD - IO_LL;
        }
        rx[k].data = data;
        rx[k].len = len;
        rx[k].info = (mrc_rx_info){.port = (uint8_t)port};
        io->stats.rx_port[port]++;
        io->stats.rx_port_bytes[port] += rx[k].len;
        if (io->cfg.mode == AGENT_IO_SRV6) {
            rx[k].info.ecn = tc & 3;
            rx[k].info.dscp = tc >> 2;
        } else if (rx[k].len >= 2) {
            /* the inner header is the only one: the engine reads its class itself */
            rx[k].info.ecn = (data[1] >> 4) & 3;
            rx[k].info.dscp = (uint8_t)((data[0] & 0xf) << 2 | data[1] >> 6);
        }
        k++;
    }
    io->stats.rx_pkts += (unsigned)n;
    uint64_t now = agent_now();
    int ok = mrc_read_pkts(io->cfg.ctx, rx, (unsigned)k, now);
    io->stats.rx_garbage += (unsigned)(k - (ok > 0 ? ok : 0));
    after(io, now);
    return n;
}

/* Busy polling (--busy-poll-us): after an arrival the socket is read again and again, and the
 * engine's timers run when due, until nothing came for |busy_ns|: the answer to a packet just
 * sent is read the moment it lands, with no sleep and wakeup between (some 20 us on a VM). At
 * most IO_BUSY_MAX at a time, so that the loop's other events (the API, the controller) still
 * get their turn under steady traffic. */
#define IO_BUSY_MAX 2000000ull
static void busy_poll(agent_io *io)
{
    uint64_t start = agent_now(), last = start, now = start;
    while (now - last < io->cfg.busy_ns && now - start < IO_BUSY_MAX) {
        /* every socket that receives: SRv6's shared one, or each port's (ECMP) */
        int got = io->cfg.mode == AGENT_IO_SRV6 ? rx_batch(io, &io->shared) : 0;
        for (unsigned p = 0; io->cfg.mode != AGENT_IO_SRV6 && p < io->nports; p++) {
            got += io->ports[p].rxfd >= 0 ? rx_batch(io, &io->ports[p]) : 0;
        }
        if (got > 0) {
            last = now = agent_now();
            continue;
        }
        now = agent_now();
        if (mrc_get_expiry(io->cfg.ctx) <= now) {
            mrc_handle_expiry(io->cfg.ctx, now);
            after(io, now);
        }
    }
}

static void on_rx(evutil_socket_t fd, short what, void *arg)
{
    io_port *pt = arg;
    agent_io *io = pt->io;
    (void)fd;
    (void)what;
    for (int turn = 0; turn < IO_RX_TURNS; turn++) {
        if (rx_batch(io, pt) < IO_BATCH) {
            break;
        }
    }
    if (io->cfg.busy_ns) {
        busy_poll(io);
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

/* SRv6 mode's receive filter: IPv6-in-IPv6 whose inner packet is UDP to MRC's port |udp| (the
 * packet socket starts at the outer IPv6 header; MRC's headers carry no extensions). Other
 * tunnelled traffic, such as the prober's, is not the engine's. */
static int attach_ip6ip6_filter(int fd, uint16_t udp)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_IPV6, 0, 5),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 40 + 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 3),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 80 + 2),
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

/* SRv6: the packet socket a port sends its frames by (bound with protocol 0, it receives
 * nothing). Without one (no next-hop lookup, not an Ethernet port) the port sends by its raw
 * socket alone. */
static void open_ll(agent_io *io, io_port *pt)
{
    struct sockaddr_ll sl = {.sll_family = AF_PACKET, .sll_ifindex = (int)pt->ifindex};
    socklen_t len = sizeof(sl);
    int big = 32 << 20, one = 1;
    if (!io->nh) {
        return;
    }
    pt->llfd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* getsockname names the device's own address */
    if (pt->llfd < 0 || bind(pt->llfd, (struct sockaddr *)&sl, sizeof(sl)) != 0 ||
        getsockname(pt->llfd, (struct sockaddr *)&sl, &len) != 0 || sl.sll_hatype != ARPHRD_ETHER ||
        sl.sll_halen != 6) {
        util_log(UTIL_LOG_WARNING, "port %u: sends through the kernel's IPv6 output: %s", pt->index,
                 pt->llfd < 0 ? strerror(errno) : "not an Ethernet port");
        if (pt->llfd >= 0) {
            close(pt->llfd);
        }
        pt->llfd = -1;
        return;
    }
    setsockopt(pt->llfd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
    /* the engine is the NIC's scheduler: a qdisc below it would only add a lock per packet */
    setsockopt(pt->llfd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
    memcpy(pt->ll + 6, sl.sll_addr, 6);
    pt->ll[12] = ETH_P_IPV6 >> 8;
    pt->ll[13] = ETH_P_IPV6 & 0xff;
    pt->lltx_ev = event_new(io->cfg.base, pt->llfd, EV_WRITE, on_writable, pt);
}

/* Port |port| of |host|: its interface's name and index, or -ENODEV with a sentence. */
static int port_if(const fab_topo *topo, uint32_t host, unsigned port, char ifname[FAB_IFNAME_MAX],
                   unsigned *ifindex, char *err, size_t errlen)
{
    fab_host_ifname(topo, host, port, ifname, FAB_IFNAME_MAX);
    *ifindex = if_nametoindex(ifname);
    if (!*ifindex) {
        snprintf(err, errlen,
                 "port %u: no interface %s in this network namespace: run the agent on host %s "
                 "(in the lab, in its namespace: ip netns exec PREFIX-%s mrc-agent ...)",
                 port, ifname, fab_host_name(topo, host), fab_host_name(topo, host));
        return -ENODEV;
    }
    return 0;
}

int agent_io_link_mtu(const fab_topo *topo, uint32_t host, unsigned *mtu, char *err, size_t errlen)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), rv = 0;
    *mtu = UINT_MAX;
    if (fd < 0) {
        rv = -errno;
        snprintf(err, errlen, "a socket to ask the ports' MTU: %s", strerror(errno));
        goto out;
    }
    for (unsigned p = 0; p < fab_topo_planes(topo); p++) {
        char ifname[FAB_IFNAME_MAX];
        unsigned ifindex;
        uint32_t sw;
        unsigned swport;
        if (fab_host_attach(topo, host, p, &sw, &swport) != 0) {
            continue; /* not cabled: never sent on */
        }
        rv = port_if(topo, host, p, ifname, &ifindex, err, errlen);
        if (rv != 0) {
            goto out;
        }
        struct ifreq ifr = {0};
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
        if (ioctl(fd, SIOCGIFMTU, &ifr) != 0) {
            rv = -errno;
            snprintf(err, errlen, "port %u (%s): its MTU: %s", p, ifname, strerror(errno));
            goto out;
        }
        *mtu = (unsigned)ifr.ifr_mtu < *mtu ? (unsigned)ifr.ifr_mtu : *mtu;
    }
    if (*mtu == UINT_MAX) {
        rv = -ENODEV;
        snprintf(err, errlen, "host %s has no cabled plane port", fab_host_name(topo, host));
    }
out:
    if (fd >= 0) {
        close(fd);
    }
    return rv;
}

static int open_port(agent_io *io, io_port *pt, char *err, size_t errlen)
{
    const fab_topo *topo = io->cfg.topo;
    char ifname[FAB_IFNAME_MAX];
    int one = 1, in = PACKET_IGNORE_OUTGOING, big = 32 << 20, rv;
    unsigned ifindex;
    rv = port_if(topo, io->cfg.host, pt->index, ifname, &ifindex, err, errlen);
    if (rv != 0) {
        return rv;
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
        fab_host_usid_addr(topo, io->cfg.host, pt->index, pt->src);
        memcpy(sa.sin6_addr.s6_addr, pt->src, 16);
        if (bind(pt->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || drop_all(pt->fd) != 0) {
            goto fail;
        }
        setsockopt(pt->fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
        pt->tx_ev = event_new(io->cfg.base, pt->fd, EV_WRITE, on_writable, pt);
        open_ll(io, pt);
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
    snprintf(err, errlen, "port %u (%s): %s%s", pt->index, ifname, strerror(errno),
             errno == EPERM || errno == EACCES
                 ? ": the agent needs CAP_NET_RAW and CAP_NET_ADMIN (run it as root, or as "
                   "mrc-agent.service runs it)"
             : errno == EADDRNOTAVAIL
                 ? ": the port does not hold the host's address the topology gives it (is this "
                   "the host --host names? mrcctl topo hosts lists each port's address)"
                 : "");
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
        io->ports[p] = (io_port){.io = io, .index = p, .fd = -1, .rxfd = -1, .llfd = -1};
    }
    io->shared = (io_port){.io = io, .index = UINT_MAX, .fd = -1, .rxfd = -1, .llfd = -1};
    if (cfg->mode == AGENT_IO_SRV6) {
        int one = 1, big = 32 << 20; /* as a port's, below */
        if (agent_nexthop_new(&io->nh) != 0) {
            util_log(UTIL_LOG_WARNING,
                     "no netlink for next hops: packets take the kernel's IPv6 output");
        }
        io_port *sh = &io->shared;
        /* opened for no protocol, so that nothing arrives before the filter is on */
        struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IPV6)};
        sh->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (sh->fd < 0 || attach_ip6ip6_filter(sh->fd, fab_topo_plan(cfg->topo)->udp_port) != 0 ||
            setsockopt(sh->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0 ||
            bind(sh->fd, (struct sockaddr *)&ll, sizeof(ll)) != 0) {
            rv = -errno;
            snprintf(err, errlen, "the IPv6-in-IPv6 packet socket: %s", strerror(errno));
            goto out;
        }
        setsockopt(sh->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
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
        if (pt->lltx_ev) {
            event_free(pt->lltx_ev);
        }
        if (pt->llfd >= 0) {
            close(pt->llfd);
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
    agent_nexthop_free(io->nh);
    event_free(io->timer);
    event_free(io->kick);
    free(io->rxbuf);
    free(io->txbuf);
    free(io);
}

void agent_io_get_stats(const agent_io *io, agent_io_stats *stats)
{
    *stats = io->stats;
    /* kept per port only (the same one addition per packet), summed here */
    stats->rx_bytes = stats->tx_bytes = 0;
    for (unsigned p = 0; p < MRC_MAX_PORTS; p++) {
        stats->rx_bytes += stats->rx_port_bytes[p];
        stats->tx_bytes += stats->tx_port_bytes[p];
    }
}
