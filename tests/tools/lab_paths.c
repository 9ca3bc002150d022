/* SPDX-License-Identifier: MIT */
/* lab-paths: one IPv6-in-IPv6 packet over every EV between every pair of lab host ports, and
 * a check that each arrives where its EV says — or, with a cable down, that exactly the EVs
 * over that cable are lost. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <mrcfab/fabric.h>
#include <netinet/in.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mrcctl_netlink.h"
#include "util.h"

#define MAGIC 0x4d524346u /* "MRCF" */

typedef struct probe {
    uint32_t src, dst; /* hosts */
    unsigned plane;
    fab_path path;
    uint32_t ev;
    bool expect_lost;
    bool arrived;
} probe;

typedef struct payload {
    uint32_t magic;
    uint32_t id;
    uint32_t ev;
} payload;

typedef struct lab {
    const fab_topo *topo;
    const char *prefix;
    int *rx;    /* per host: raw protocol-41 socket */
    int *tx;    /* per host port: raw protocol-41 socket bound to the port */
    int *ifidx; /* per host port: ifindex in its namespace */
    probe *probes;
    size_t nprobes;
    const char *down_a, *down_b;
    uint32_t only_src, only_dst; /* FAB_NONE: every host */
    bool verbose;
    size_t bad_arrivals;
} lab;

static int enter_ns(const char *prefix, const char *elem)
{
    char path[256];
    snprintf(path, sizeof(path), "/run/netns/%s-%s", prefix, elem);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "lab-paths: no namespace %s-%s: is the lab up?\n", prefix, elem);
        return -1;
    }
    int rv = setns(fd, CLONE_NEWNET);
    close(fd);
    return rv;
}

static int open_sockets(lab *l)
{
    const fab_topo *topo = l->topo;
    unsigned planes = fab_topo_planes(topo);
    int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), one = 1, rv = -1;
    l->rx = util_xcalloc(fab_topo_nhosts(topo), sizeof(int));
    l->tx = util_xcalloc((size_t)fab_topo_nhosts(topo) * planes, sizeof(int));
    l->ifidx = util_xcalloc((size_t)fab_topo_nhosts(topo) * planes, sizeof(int));
    for (uint32_t h = 0; h < fab_topo_nhosts(topo); h++) {
        if (enter_ns(l->prefix, fab_host_name(topo, h)) != 0) {
            goto out;
        }
        l->rx[h] = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_IPV6);
        if (l->rx[h] < 0) {
            perror("lab-paths: socket");
            goto out;
        }
        setsockopt(l->rx[h], IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
        for (unsigned p = 0; p < planes; p++) {
            int *tx = &l->tx[(size_t)h * planes + p];
            char ifname[FAB_IFNAME_MAX];
            struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
            *tx = -1;
            if (fab_host_addr(topo, h, p, sa.sin6_addr.s6_addr) != 0) {
                continue; /* a missing cable */
            }
            fab_host_ifname(topo, h, p, ifname, sizeof(ifname));
            l->ifidx[(size_t)h * planes + p] = (int)if_nametoindex(ifname);
            *tx = socket(AF_INET6, SOCK_RAW, IPPROTO_IPV6);
            if (*tx < 0 ||
                setsockopt(*tx, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) ||
                bind(*tx, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
                fprintf(stderr, "lab-paths: %s port %u (%s): %s\n", fab_host_name(topo, h), p,
                        ifname, strerror(errno));
                goto out;
            }
        }
    }
    rv = 0;
out:
    setns(self, CLONE_NEWNET);
    close(self);
    return rv;
}

/* Element names along a probe's way, host ports as host names, for matching a cable. */
static bool crosses(const lab *l, const probe *pr)
{
    const char *names[5];
    size_t n = 0;
    names[n++] = fab_host_name(l->topo, pr->src);
    for (unsigned i = 0; i < pr->path.nhops; i++) {
        fab_switch s;
        fab_switch_get(l->topo, pr->path.hops[i], &s);
        names[n++] = s.name;
    }
    names[n++] = fab_host_name(l->topo, pr->dst);
    for (size_t i = 0; i + 1 < n; i++) {
        if ((strcmp(names[i], l->down_a) == 0 && strcmp(names[i + 1], l->down_b) == 0) ||
            (strcmp(names[i], l->down_b) == 0 && strcmp(names[i + 1], l->down_a) == 0)) {
            return true;
        }
    }
    return false;
}

static void plan_probes(lab *l, uint64_t seed)
{
    const fab_topo *topo = l->topo;
    const fab_plan *plan = fab_topo_plan(topo);
    size_t cap = 64;
    l->probes = util_xmalloc(cap * sizeof(probe));
    fab_path *paths = util_xcalloc(2048, sizeof(fab_path));
    for (uint32_t s = 0; s < fab_topo_nhosts(topo); s++) {
        for (uint32_t d = 0; d < fab_topo_nhosts(topo); d++) {
            if ((l->only_src != FAB_NONE && s != l->only_src) ||
                (l->only_dst != FAB_NONE && d != l->only_dst)) {
                continue;
            }
            for (unsigned p = 0; p < fab_topo_planes(topo) && s != d; p++) {
                size_t n;
                if (fab_path_enum(topo, s, p, d, p, paths, 2048, &n) != 0) {
                    continue;
                }
                for (size_t k = 0; k < n; k++) {
                    if (l->nprobes == cap) {
                        cap *= 2;
                        l->probes = util_xrealloc(l->probes, cap * sizeof(probe));
                    }
                    probe *pr = &l->probes[l->nprobes];
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    *pr = (probe){.src = s, .dst = d, .plane = p, .path = paths[k]};
                    /* a random salt: the path is the plane and T1, whatever the salt */
                    pr->ev = fab_ev_make(plan, p, pr->path.t1 < 0 ? 0 : (unsigned)pr->path.t1,
                                         (uint32_t)(seed >> 33));
                    pr->expect_lost = !pr->path.usable || (l->down_a && crosses(l, pr));
                    l->nprobes++;
                }
            }
        }
    }
    free(paths);
}

static uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    }
    if (n & 1) {
        sum += (uint32_t)(p[n - 1] << 8);
    }
    return sum;
}

/* The inner MRC-shaped packet: IPv6 between the two host ports, UDP with the EV in the source
 * port and flow label, a payload naming the probe. */
static size_t build(const lab *l, const probe *pr, size_t id, uint8_t *buf)
{
    const fab_topo *topo = l->topo;
    struct ip6_hdr *ip = (struct ip6_hdr *)buf;
    struct udphdr *udp = (struct udphdr *)(buf + sizeof(*ip));
    payload *pl = (payload *)(udp + 1);
    uint16_t sport;
    uint32_t fl;
    fab_ev_to_wire(pr->ev, &sport, &fl);
    memset(buf, 0, 64);
    ip->ip6_flow = htonl(6u << 28 | fl);
    ip->ip6_plen = htons(sizeof(*udp) + sizeof(*pl));
    ip->ip6_nxt = IPPROTO_UDP;
    ip->ip6_hlim = 64;
    fab_host_addr(topo, pr->src, pr->plane, ip->ip6_src.s6_addr);
    fab_host_addr(topo, pr->dst, pr->plane, ip->ip6_dst.s6_addr);
    udp->uh_sport = htons(sport);
    udp->uh_dport = htons(fab_topo_plan(topo)->udp_port);
    udp->uh_ulen = htons(sizeof(*udp) + sizeof(*pl));
    pl->magic = htonl(MAGIC);
    pl->id = htonl((uint32_t)id);
    pl->ev = htonl(pr->ev);
    uint32_t sum = csum_add(0, ip->ip6_src.s6_addr, 32);
    sum += sizeof(*udp) + sizeof(*pl) + IPPROTO_UDP;
    sum = csum_add(sum, (const uint8_t *)udp, sizeof(*udp) + sizeof(*pl));
    uint16_t c = csum_fold(sum);
    udp->uh_sum = htons(c ? c : 0xffff);
    return sizeof(*ip) + sizeof(*udp) + sizeof(*pl);
}

static bool check_arrival(lab *l, uint32_t host, const uint8_t *buf, ssize_t len,
                          const struct in6_pktinfo *pi, size_t *pid)
{
    const fab_topo *topo = l->topo;
    const struct ip6_hdr *ip = (const struct ip6_hdr *)buf;
    const struct udphdr *udp = (const struct udphdr *)(buf + sizeof(*ip));
    const payload *pl = (const payload *)(udp + 1);
    uint32_t h;
    unsigned port;
    if (len != (ssize_t)(sizeof(*ip) + sizeof(*udp) + sizeof(*pl)) || ntohl(pl->magic) != MAGIC ||
        ntohl(pl->id) >= l->nprobes) {
        return false;
    }
    size_t id = ntohl(pl->id);
    const probe *pr = &l->probes[id];
    uint8_t uaddr[16];
    uint16_t sport;
    uint32_t fl;
    fab_ev_to_wire(pr->ev, &sport, &fl);
    fab_host_usid_addr(topo, pr->dst, pr->plane, uaddr);
    uint32_t sum = csum_add(0, ip->ip6_src.s6_addr, 32);
    sum += ntohs(udp->uh_ulen) + IPPROTO_UDP;
    sum = csum_add(sum, (const uint8_t *)udp, sizeof(*udp) + sizeof(*pl));
    *pid = id;
    /* where it landed must be the port the EV names: host, plane port, outer address */
    return fab_host_by_addr(topo, ip->ip6_dst.s6_addr, &h, &port) == 0 && h == host &&
           h == pr->dst && port == pr->plane && pi &&
           pi->ipi6_ifindex == (unsigned)l->ifidx[(size_t)h * fab_topo_planes(topo) + port] &&
           memcmp(pi->ipi6_addr.s6_addr, uaddr, 16) == 0 && ntohs(udp->uh_sport) == sport &&
           (ntohl(ip->ip6_flow) & 0xfffff) == fl && ntohl(pl->ev) == pr->ev && csum_fold(sum) == 0;
}

static size_t drain(lab *l, int timeout_ms)
{
    size_t got = 0;
    uint32_t nh = fab_topo_nhosts(l->topo);
    struct pollfd *pfd = util_xcalloc(nh, sizeof(*pfd));
    for (uint32_t h = 0; h < nh; h++) {
        pfd[h] = (struct pollfd){.fd = l->rx[h], .events = POLLIN};
    }
    while (poll(pfd, nh, timeout_ms) > 0) {
        for (uint32_t h = 0; h < nh; h++) {
            if (!(pfd[h].revents & POLLIN)) {
                continue;
            }
            for (;;) {
                uint8_t buf[2048], cbuf[256];
                struct iovec iov = {buf, sizeof(buf)};
                struct msghdr mh = {.msg_iov = &iov,
                                    .msg_iovlen = 1,
                                    .msg_control = cbuf,
                                    .msg_controllen = sizeof(cbuf)};
                ssize_t n = recvmsg(l->rx[h], &mh, 0);
                if (n < 0) {
                    break;
                }
                struct in6_pktinfo *pi = NULL;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
                        pi = (struct in6_pktinfo *)CMSG_DATA(c);
                    }
                }
                size_t id = SIZE_MAX;
                if (check_arrival(l, h, buf, n, pi, &id)) {
                    l->probes[id].arrived = true;
                    got++;
                } else if (id != SIZE_MAX) {
                    l->bad_arrivals++;
                    fprintf(stderr, "lab-paths: probe %zu arrived wrong at %s\n", id,
                            fab_host_name(l->topo, h));
                }
            }
        }
    }
    free(pfd);
    return got;
}

/* The End counter of each switch's own uN route, read over netlink in its namespace. */
static int read_counters(const lab *l, uint64_t *pkts, uint64_t *errs)
{
    const fab_topo *topo = l->topo;
    for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
        fab_switch s;
        char netns[128], errmsg[256];
        mrcctl_nl *nl;
        mrcctl_nl_route *routes;
        size_t n;
        uint8_t pfx[16];
        fab_switch_get(topo, sw, &s);
        fab_plan_container(fab_topo_plan(topo), &s.usid, 1, pfx);
        snprintf(netns, sizeof(netns), "%s-%s", l->prefix, s.name);
        if (mrcctl_nl_open(netns, &nl, errmsg, sizeof(errmsg)) != 0 ||
            mrcctl_nl_routes_dump(nl, &routes, &n, errmsg, sizeof(errmsg)) != 0) {
            fprintf(stderr, "lab-paths: %s\n", errmsg);
            return -1;
        }
        pkts[sw] = errs[sw] = 0;
        for (size_t i = 0; i < n; i++) {
            if (routes[i].seg6local && memcmp(routes[i].dst, pfx, 16) == 0) {
                pkts[sw] = routes[i].packets;
                errs[sw] = routes[i].errors;
            }
        }
        free(routes);
        mrcctl_nl_close(nl);
    }
    return 0;
}

static int split_cable(const char *arg, char **pa, char **pb)
{
    const char *colon = strchr(arg, ',');
    if (!colon) {
        return -1;
    }
    *pa = strndup(arg, (size_t)(colon - arg));
    *pb = strdup(colon + 1);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"topology", required_argument, NULL, 't'}, {"prefix", required_argument, NULL, 'p'},
        {"down", required_argument, NULL, 'd'},     {"seed", required_argument, NULL, 's'},
        {"from", required_argument, NULL, 'f'},     {"to", required_argument, NULL, 'o'},
        {"verbose", no_argument, NULL, 'v'},        {NULL, 0, NULL, 0}};
    lab l = {.prefix = "mf", .only_src = FAB_NONE, .only_dst = FAB_NONE};
    const char *from = NULL, *to = NULL;
    const char *path = NULL;
    char *da = NULL, *db = NULL;
    uint64_t seed = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "t:p:d:s:v", opts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            from = optarg;
            break;
        case 'o':
            to = optarg;
            break;
        case 'v':
            l.verbose = true;
            break;
        case 't':
            path = optarg;
            break;
        case 'p':
            l.prefix = optarg;
            break;
        case 'd':
            if (split_cable(optarg, &da, &db) != 0) {
                fprintf(stderr, "lab-paths: --down takes A,B (two element names)\n");
                return 2;
            }
            l.down_a = da;
            l.down_b = db;
            break;
        case 's':
            seed = strtoull(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: lab-paths -t TOPOLOGY [-p PREFIX] [--down A,B] [--seed S] "
                            "[--from HOST] [--to HOST] [--verbose]\n");
            return 2;
        }
    }
    fab_topo *topo;
    fab_error err;
    if (!path || fab_topo_load_file(path, &topo, &err) != 0) {
        fprintf(stderr, "lab-paths: cannot load the topology\n");
        return 2;
    }
    l.topo = topo;
    if ((from && (l.only_src = fab_host_find(topo, from)) == FAB_NONE) ||
        (to && (l.only_dst = fab_host_find(topo, to)) == FAB_NONE)) {
        fprintf(stderr, "lab-paths: no such host\n");
        return 2;
    }
    plan_probes(&l, seed);
    uint32_t nsw = fab_topo_nswitches(topo);
    uint64_t *p0 = util_xcalloc(nsw, 8), *e0 = util_xcalloc(nsw, 8);
    uint64_t *p1 = util_xcalloc(nsw, 8), *e1 = util_xcalloc(nsw, 8);
    if (open_sockets(&l) != 0 || read_counters(&l, p0, e0) != 0) {
        return 1;
    }
    /* one source port at a time, so queues stay short at any lab size */
    unsigned planes = fab_topo_planes(topo);
    size_t sent = 0, arrived = 0;
    for (size_t i = 0; i < l.nprobes;) {
        size_t j = i;
        for (; j < l.nprobes && l.probes[j].src == l.probes[i].src; j++) {
            probe *pr = &l.probes[j];
            uint8_t buf[128];
            struct sockaddr_in6 to = {.sin6_family = AF_INET6};
            fab_template t;
            fab_template_init(topo, pr->src, pr->dst, &t);
            if (fab_template_outer(&t, pr->ev, to.sin6_addr.s6_addr) != 0 ||
                memcmp(to.sin6_addr.s6_addr, pr->path.outer, 16) != 0) {
                fprintf(stderr, "lab-paths: template and path disagree on EV 0x%08" PRIx32 "\n",
                        pr->ev);
                return 1;
            }
            size_t len = build(&l, pr, j, buf);
            int fd = l.tx[(size_t)pr->src * planes + pr->plane];
            if (sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len &&
                !pr->expect_lost) {
                fprintf(stderr, "lab-paths: send: %s\n", strerror(errno));
            }
            sent++;
        }
        arrived += drain(&l, 150);
        i = j;
    }
    arrived += drain(&l, 300);
    size_t lost = 0, unexpected = 0, expected_lost = 0;
    for (size_t i = 0; i < l.nprobes; i++) {
        const probe *pr = &l.probes[i];
        expected_lost += pr->expect_lost;
        if (l.verbose) {
            char addr[48];
            printf("  %s:%u -> %s:%u  EV 0x%08" PRIx32 "  outer %-34s %s\n",
                   fab_host_name(topo, pr->src), pr->plane, fab_host_name(topo, pr->dst), pr->plane,
                   pr->ev, fab_addr_str(pr->path.outer, addr), pr->arrived ? "arrived" : "lost");
        }
        if (pr->arrived == !pr->expect_lost) {
            continue;
        }
        char addr[48];
        fprintf(stderr, "lab-paths: %s %s:%u -> %s:%u EV 0x%08" PRIx32 " outer %s\n",
                pr->arrived ? "UNEXPECTED ARRIVAL" : "LOST", fab_host_name(topo, pr->src),
                pr->plane, fab_host_name(topo, pr->dst), pr->plane, pr->ev,
                fab_addr_str(pr->path.outer, addr));
        if (pr->arrived) {
            unexpected++;
        } else {
            lost++;
        }
    }
    /* every switch must have run its End exactly once per packet that crossed it */
    size_t counter_faults = 0;
    if (!l.down_a && read_counters(&l, p1, e1) == 0) {
        uint64_t *want = util_xcalloc(nsw, 8);
        for (size_t i = 0; i < l.nprobes; i++) {
            for (unsigned k = 0; k < l.probes[i].path.nhops && l.probes[i].arrived; k++) {
                want[l.probes[i].path.hops[k]]++;
            }
        }
        for (uint32_t sw = 0; sw < nsw; sw++) {
            fab_switch s;
            fab_switch_get(topo, sw, &s);
            if (l.verbose && p1[sw] != p0[sw]) {
                printf("  %-10s ran its uN (End, next-csid) %" PRIu64 " time%s\n", s.name,
                       p1[sw] - p0[sw], p1[sw] - p0[sw] == 1 ? "" : "s");
            }
            if (p1[sw] - p0[sw] != want[sw] || e1[sw] != e0[sw]) {
                fprintf(stderr,
                        "lab-paths: %s ran End %" PRIu64 " times (%" PRIu64
                        " errors), expected %" PRIu64 "\n",
                        s.name, p1[sw] - p0[sw], e1[sw] - e0[sw], want[sw]);
                counter_faults++;
            }
        }
        free(want);
    }
    printf("{\"probes\": %zu, \"sent\": %zu, \"arrived\": %zu, \"expected_lost\": %zu, "
           "\"lost\": %zu, \"unexpected_arrivals\": %zu, \"misdelivered\": %zu, "
           "\"counter_faults\": %zu}\n",
           l.nprobes, sent, arrived, expected_lost, lost, unexpected, l.bad_arrivals,
           counter_faults);
    bool ok = lost == 0 && unexpected == 0 && l.bad_arrivals == 0 && counter_faults == 0;
    free(p0);
    free(p1);
    free(e0);
    free(e1);
    free(da);
    free(db);
    free(l.probes);
    free(l.rx);
    free(l.tx);
    free(l.ifidx);
    fab_topo_free(topo);
    return ok ? 0 : 1;
}
