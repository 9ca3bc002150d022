/* SPDX-License-Identifier: MIT */
/* rtnetlink in a network namespace: IPv6 routes with seg6local encap, and addresses. */
#ifndef MRCCTL_NETLINK_H
#define MRCCTL_NETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mrcctl_nl mrcctl_nl;

/* An IPv6 route as the kernel holds it; only the fields we set or compare. */
typedef struct mrcctl_nl_route {
    uint8_t dst[16];
    uint8_t dst_len;
    uint8_t protocol;
    uint8_t type; /* RTN_* */
    uint32_t table;
    uint32_t priority;
    int oif;
    bool has_gw;
    uint8_t gw[16];
    /* seg6local encap */
    bool seg6local;
    uint32_t action;
    uint32_t flv_ops; /* bitmask of SEG6_LOCAL_FLV_OP_* */
    uint8_t lblen, nflen;
    bool counters;
    uint64_t packets, errors; /* the counters' values in a dump */
} mrcctl_nl_route;

typedef struct mrcctl_nl_addr {
    int ifindex;
    uint8_t addr[16];
    uint8_t plen;
    uint8_t proto; /* IFA_PROTO, 0 when the kernel has none */
} mrcctl_nl_addr;

/*
 * Opens an rtnetlink socket in network namespace |netns| (a name under /run/netns, or NULL
 * for the caller's own). The caller's thread returns to its own namespace afterwards.
 * Returns 0 or a negative errno, with a sentence in |errmsg|.
 */
int mrcctl_nl_open(const char *netns, mrcctl_nl **pnl, char *errmsg, size_t errmsglen);
void mrcctl_nl_close(mrcctl_nl *nl);

/* The ifindex of interface |name| in the socket's namespace, or 0 if there is none. */
int mrcctl_nl_ifindex(mrcctl_nl *nl, const char *name);
/* The name of |ifindex| into |dest| (IFNAMSIZ); "?" when unknown. */
void mrcctl_nl_ifname(mrcctl_nl *nl, int ifindex, char *dest, size_t destlen);

/* Every IPv6 route (all tables). The caller frees |*proutes|. Returns 0 or -errno. */
int mrcctl_nl_routes_dump(mrcctl_nl *nl, mrcctl_nl_route **proutes, size_t *pn, char *errmsg,
                       size_t errmsglen);
/* Adds (|replace| false: fails if it exists) or replaces a route. Returns 0 or -errno with the
 * kernel's own sentence in |errmsg| when it gives one. */
int mrcctl_nl_route_add(mrcctl_nl *nl, const mrcctl_nl_route *r, bool replace, char *errmsg,
                     size_t errmsglen);
int mrcctl_nl_route_del(mrcctl_nl *nl, const mrcctl_nl_route *r, char *errmsg, size_t errmsglen);

/* Every IPv6 address. The caller frees |*paddrs|. */
int mrcctl_nl_addrs_dump(mrcctl_nl *nl, mrcctl_nl_addr **paddrs, size_t *pn, char *errmsg, size_t errmsglen);
/* Adds a permanent address without duplicate address detection, marked with |a->proto|. */
int mrcctl_nl_addr_add(mrcctl_nl *nl, const mrcctl_nl_addr *a, char *errmsg, size_t errmsglen);
int mrcctl_nl_addr_del(mrcctl_nl *nl, const mrcctl_nl_addr *a, char *errmsg, size_t errmsglen);

/* Reads an IPv6 sysctl of the socket's namespace (e.g. "conf/all/forwarding"); -1 if none. */
int mrcctl_nl_sysctl6(mrcctl_nl *nl, const char *name);

#endif
