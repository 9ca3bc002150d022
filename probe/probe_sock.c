/* SPDX-License-Identifier: MIT */
#include "probe_sock.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe_wire.h"

int probe_sock_port(const fab_topo *topo, uint32_t host, unsigned plane, uint8_t tclass,
                    probe_port *p, char *err, size_t errlen)
{
    char ifname[FAB_IFNAME_MAX];
    uint32_t sw;
    unsigned swport;
    fab_switch t0;
    int tc = tclass, rv;
    if (fab_host_attach(topo, host, plane, &sw, &swport) != 0 ||
        fab_switch_get(topo, sw, &t0) != 0) {
        return 1;
    }
    *p = (probe_port){.plane = plane, .t0 = t0.index, .port = swport, .fd = -1};
    fab_host_ifname(topo, host, plane, ifname, sizeof(ifname));
    fab_host_addr(topo, host, plane, p->addr);
    fab_host_usid_addr(topo, host, plane, p->uaddr);
    p->ifindex = if_nametoindex(ifname);
    if (!p->ifindex) {
        snprintf(err, errlen, "port %u: no interface %s in this namespace", plane, ifname);
        return -ENODEV;
    }
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
    memcpy(sa.sin6_addr.s6_addr, p->uaddr, 16);
    /* it sends only; arrivals are the packet socket's */
    struct sock_filter none[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
    struct sock_fprog prog = {.len = 1, .filter = none};
    p->fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_IPV6);
    if (p->fd < 0 ||
        setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) != 0 ||
        bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        setsockopt(p->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0 ||
        setsockopt(p->fd, IPPROTO_IPV6, IPV6_TCLASS, &tc, sizeof(tc)) != 0) {
        rv = -errno;
        snprintf(err, errlen, "port %u (%s): %s", plane, ifname, strerror(errno));
        if (p->fd >= 0) {
            close(p->fd);
            p->fd = -1;
        }
        return rv;
    }
    return 0;
}

int probe_sock_rx(uint16_t udp, char *err, size_t errlen)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_IPV6, 0, 5),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, PROBE_IP6_LEN + 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 3),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 2 * PROBE_IP6_LEN + 2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, udp, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
    struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IPV6)};
    int one = 1, big = 4 << 20, rv;
    /* opened for no protocol, so that nothing arrives before the filter is on */
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&ll, sizeof(ll)) != 0) {
        rv = -errno;
        snprintf(err, errlen, "the probe packet socket: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return rv;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
    return fd;
}

probe_port *probe_sock_arrival(probe_port *ports, unsigned nports, int ifindex,
                               const uint8_t *outer)
{
    for (unsigned k = 0; k < nports; k++) {
        if (ports[k].ifindex == (unsigned)ifindex && memcmp(outer + 24, ports[k].uaddr, 16) == 0) {
            return &ports[k];
        }
    }
    return NULL;
}
