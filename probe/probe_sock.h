/* SPDX-License-Identifier: MIT */
/* The prober's sockets, shared by its roles: a raw protocol-41 socket per plane port that
 * sends (bound to the port and the uSID address arrivals carry, the kernel writing the outer
 * header), and one packet socket that reads every port's IPv6-in-IPv6 probes of a UDP port. */
#ifndef PROBE_SOCK_H
#define PROBE_SOCK_H

#include <mrcfab/fabric.h>
#include <stdint.h>

typedef struct probe_port {
    unsigned plane, t0, port; /* in the plan: the T0's index and its down-port */
    unsigned ifindex;
    int fd;                      /* sends; -1 when not open */
    uint8_t addr[16], uaddr[16]; /* own inner address; the uSID address arrivals carry */
} probe_port;

/* Opens host |host|'s port on |plane| into |p|. Returns 0, 1 when the port is not cabled (|p|
 * untouched), or a negative errno with a sentence in |err|. */
int probe_sock_port(const fab_topo *topo, uint32_t host, unsigned plane, uint8_t tclass,
                    probe_port *p, char *err, size_t errlen);

/* The packet socket that reads IPv6-in-IPv6 probes to inner UDP port |udp| (frames start at
 * the outer IPv6 header). Returns the socket or a negative errno with a sentence in |err|. */
int probe_sock_rx(uint16_t udp, char *err, size_t errlen);

/* Which of |ports| an arrival on the packet socket came in by (interface |ifindex|, outer
 * header |outer|), or NULL. */
probe_port *probe_sock_arrival(probe_port *ports, unsigned nports, int ifindex,
                               const uint8_t *outer);

#endif
