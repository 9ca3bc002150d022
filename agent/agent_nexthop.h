/* SPDX-License-Identifier: MIT */
/* The link-layer next hop of a plane port: the MAC address the kernel would send a packet for
 * a destination to, out of that port. The agent writes its frames itself (agent_io) and asks
 * the kernel's route and neighbour tables for this, so that the host's routes, not the
 * agent, decide the next hop. */
#ifndef AGENT_NEXTHOP_H
#define AGENT_NEXTHOP_H

#include <stdint.h>

typedef struct agent_nexthop agent_nexthop;

int agent_nexthop_new(agent_nexthop **pnh);
void agent_nexthop_free(agent_nexthop *nh);

/* The MAC of the next hop toward |dst| out of interface |ifindex|: the gateway of the route
 * the kernel picks with that interface as the output, or |dst| itself on a link route.
 * Returns 0, -ENETUNREACH without such a route, -EAGAIN when the neighbour is not resolved
 * (the kernel resolves it when it sends there itself), or -EIO / -ENOMEM. */
int agent_nexthop_mac(agent_nexthop *nh, unsigned ifindex, const uint8_t dst[16], uint8_t mac[6]);

#endif
