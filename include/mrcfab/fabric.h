/* SPDX-License-Identifier: MIT */
/* libmrcfab: the fabric model — topology, addressing plan, EV codec, paths and static tables. */
#ifndef MRCFAB_FABRIC_H
#define MRCFAB_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Error codes. Every function returns 0 or one of these (negative).
 */
#define FAB_ERR_INVAL -1    /* the input (file, name, argument) is not valid */
#define FAB_ERR_NOMEM -2    /* out of memory */
#define FAB_ERR_IO -3       /* the file could not be read */
#define FAB_ERR_NOTFOUND -4 /* no element of that name or index */
#define FAB_ERR_NOSPACE -5  /* the caller's buffer is too small */

/* Returns a static, human-readable name of a FAB_ERR_* code. */
const char *fab_strerror(int err);

/* Largest plane count the codec supports (the plane field is at most 4 bits). */
#define FAB_MAX_PLANES 16
/* Marks "no such element" in every index-valued result. */
#define FAB_NONE UINT32_MAX
/* Longest element name, interface name and JSON path, with the terminating NUL. */
#define FAB_NAME_MAX 64
#define FAB_IFNAME_MAX 16
#define FAB_PATH_MAX 160
#define FAB_MSG_MAX 400

/*
 * A load error: |path| is the JSON path of the offending value ("$.cables[12].b"),
 * |msg| one sentence naming the element at fault.
 */
typedef struct fab_error {
    char path[FAB_PATH_MAX];
    char msg[FAB_MSG_MAX];
} fab_error;

typedef enum fab_tier { FAB_TIER_T0 = 0, FAB_TIER_T1 = 1 } fab_tier;

/*
 * The addressing plan (docs/architecture.md#addressing-plan). A uSID is 16 bits: plane | kind |
 * index, high bits first, with plane_bits + kind_bits + index_bits == 16. The locator block is
 * always a /32, so a uN prefix is a /48 and the outer address holds up to 6 uSIDs.
 *
 * EV layout (32 bits, carried as UDP source port = EV[15:0] and flow label[15:0] =
 * EV[31:16]):
 *
 *     31                 32-plane_bits                     salt_bits          0
 *     +--------------------+----------------------------------+---------------+
 *     | plane (plane_bits) | T1 index (index_bits)            | salt          |
 *     +--------------------+----------------------------------+---------------+
 *
 * salt_bits = 32 - plane_bits - index_bits (18 with the default plan). The plane picks the
 * NIC port, the T1 index picks the T0 uplink; the salt only varies the inner UDP source
 * port so that several EVs may share one path.
 */
typedef struct fab_plan {
    uint8_t block[16];      /* locator block, a /32: bytes 4..15 are zero */
    uint8_t host_block[16]; /* /32 of the host ports' own (inner) addresses */
    uint8_t plane_bits, kind_bits, index_bits;
    uint8_t kind_t0, kind_t1, kind_dl; /* distinct and non-zero */
    uint16_t udp_port;                 /* inner UDP destination port of MRC */
    uint16_t route_table;              /* kernel table of the static routes */
    uint8_t route_proto;               /* kernel route protocol that marks our routes */
} fab_plan;

/* Fills |plan| with the defaults: block fcbb:bb00::/32, hosts fdbb:bb00::/32, 3/2/11 bits,
 * kinds T0 = 1, T1 = 2, DL = 3, UDP 4791, table 254 (main), protocol 201. */
void fab_plan_default(fab_plan *plan);

/* The uSID of (plane, kind, index) under |plan|'s default numbering (pinned uSIDs aside). */
uint16_t fab_plan_usid(const fab_plan *plan, unsigned plane, unsigned kind, unsigned index);

/* Writes block:usids[0]:...:usids[n-1]:: into |dest| (n <= 6). */
void fab_plan_container(const fab_plan *plan, const uint16_t *usids, size_t n, uint8_t dest[16]);

/* EV codec (layout above). Fields that overflow their width are truncated. */
uint32_t fab_ev_make(const fab_plan *plan, unsigned plane, unsigned t1, uint32_t salt);
unsigned fab_ev_plane(const fab_plan *plan, uint32_t ev);
unsigned fab_ev_t1(const fab_plan *plan, uint32_t ev);
uint32_t fab_ev_salt(const fab_plan *plan, uint32_t ev);
/* The EV on the wire: UDP source port and the 20-bit flow label (bits 19:16 zero). */
void fab_ev_to_wire(uint32_t ev, uint16_t *psport, uint32_t *pflowlabel);
uint32_t fab_ev_from_wire(uint16_t sport, uint32_t flowlabel);

/*
 * The fabric: switches, hosts and cables, loaded from a topology file in either form and
 * validated. Immutable once loaded, so any number of threads may read it.
 */
typedef struct fab_topo fab_topo;

/*
 * Loads and validates a topology from |data| (JSON, |datalen| bytes) or from the file
 * |path|. On success stores a new model in |*ptopo|, which the caller frees with
 * fab_topo_free(). On failure returns FAB_ERR_INVAL (with |*perr| filled, if non-NULL),
 * FAB_ERR_IO or FAB_ERR_NOMEM, and stores nothing.
 */
int fab_topo_load(const char *data, size_t datalen, fab_topo **ptopo, fab_error *perr);
int fab_topo_load_file(const char *path, fab_topo **ptopo, fab_error *perr);
void fab_topo_free(fab_topo *topo);

const char *fab_topo_name(const fab_topo *topo);
const fab_plan *fab_topo_plan(const fab_topo *topo);
unsigned fab_topo_planes(const fab_topo *topo);
uint32_t fab_topo_nswitches(const fab_topo *topo);
uint32_t fab_topo_nhosts(const fab_topo *topo);
/* Cables present (NIC–T0 and T0–T1), and cables declared missing in the overrides. */
uint64_t fab_topo_ncables(const fab_topo *topo);
uint64_t fab_topo_nmissing(const fab_topo *topo);
/* How many T0 (T1) switches plane |plane| has: one more than the highest index. */
uint32_t fab_topo_nt0(const fab_topo *topo, unsigned plane);
uint32_t fab_topo_nt1(const fab_topo *topo, unsigned plane);

typedef struct fab_switch {
    const char *name;
    const char *sid_device; /* the device the local SID hangs on */
    unsigned plane;
    fab_tier tier;
    unsigned index; /* T0 index a or T1 index j within the plane */
    unsigned nports;
    uint16_t usid;
} fab_switch;

/* Switch |sw| (0 <= sw < nswitches). Returns 0 or FAB_ERR_NOTFOUND. Strings are borrowed
 * from |topo|. */
int fab_switch_get(const fab_topo *topo, uint32_t sw, fab_switch *pinfo);
/* The switch called |name|, or of (plane, tier, index); FAB_NONE if there is none. */
uint32_t fab_switch_find(const fab_topo *topo, const char *name);
uint32_t fab_switch_at(const fab_topo *topo, unsigned plane, fab_tier tier, unsigned index);
/* The interface name of port |port| of switch |sw| into |dest|. Returns 0,
 * FAB_ERR_NOTFOUND or FAB_ERR_NOSPACE. */
int fab_switch_ifname(const fab_topo *topo, uint32_t sw, unsigned port, char *dest, size_t destlen);
/* The link-local address the plan gives port |port| of switch |sw|: fe80::<usid>:<port>. */
void fab_switch_port_lladdr(const fab_topo *topo, uint32_t sw, unsigned port, uint8_t dest[16]);

typedef enum fab_peer_kind { FAB_PEER_NONE = 0, FAB_PEER_SWITCH, FAB_PEER_HOST } fab_peer_kind;

/* What is cabled to a switch port: a switch port or a host port (host, host port). */
typedef struct fab_peer {
    fab_peer_kind kind;
    uint32_t id; /* switch or host */
    unsigned port;
} fab_peer;

/* The far end of port |port| of switch |sw|. Returns 0 or FAB_ERR_NOTFOUND. */
int fab_switch_peer(const fab_topo *topo, uint32_t sw, unsigned port, fab_peer *ppeer);

/* Host |host| (0 <= host < nhosts): its name (borrowed), or FAB_NONE from find. */
const char *fab_host_name(const fab_topo *topo, uint32_t host);
uint32_t fab_host_find(const fab_topo *topo, const char *name);
/* The interface name of host port |port| (port k is on plane k). */
int fab_host_ifname(const fab_topo *topo, uint32_t host, unsigned port, char *dest, size_t destlen);
/* The T0 (switch id) and T0 port that host port |port| is cabled to. Returns 0 or
 * FAB_ERR_NOTFOUND when the cable is missing. */
int fab_host_attach(const fab_topo *topo, uint32_t host, unsigned port, uint32_t *psw,
                    unsigned *pswport);
/* The host port's own (inner) address, host_block:plane:T0:T0port::1, and the address it
 * owns in the uSID block, block:U(plane,DL,T0port)::. FAB_ERR_NOTFOUND if not cabled. */
int fab_host_addr(const fab_topo *topo, uint32_t host, unsigned port, uint8_t dest[16]);
int fab_host_usid_addr(const fab_topo *topo, uint32_t host, unsigned port, uint8_t dest[16]);
/* The host port that owns inner address |addr|, FAB_ERR_NOTFOUND if none. */
int fab_host_by_addr(const fab_topo *topo, const uint8_t addr[16], uint32_t *phost,
                     unsigned *pport);

/*
 * Static tables (docs/architecture.md#static-tables): per switch, its own uN SID and one /48
 * forward route per neighbour uSID. All routes are block:usid::/48.
 */
typedef enum fab_action { FAB_ACT_UN = 0, FAB_ACT_FORWARD = 1 } fab_action;

typedef struct fab_route {
    uint16_t usid;     /* the prefix is block:usid::/48 */
    uint8_t action;    /* fab_action */
    uint8_t peer_kind; /* fab_peer_kind of the neighbour (forward only) */
    uint16_t port;     /* egress port (forward only) */
    uint16_t peer_port;
    uint32_t peer; /* neighbour switch or host (forward only) */
} fab_route;

typedef struct fab_tables fab_tables;

/* Computes the table of every switch. The result borrows |topo|; free it first. Returns 0
 * or FAB_ERR_NOMEM. */
int fab_tables_compute(const fab_topo *topo, fab_tables **ptables);
void fab_tables_free(fab_tables *tables);
/* The routes of switch |sw|, uN first then by port; |*pn| gets their count. */
const fab_route *fab_tables_routes(const fab_tables *tables, uint32_t sw, size_t *pn);
uint64_t fab_tables_nroutes(const fab_tables *tables);
/* The address of |route|'s /48 prefix, and its next hop: the neighbour switch port's
 * link-local address, or all zero for a host port (on-link: the host owns the address). */
void fab_route_prefix(const fab_topo *topo, const fab_route *route, uint8_t dest[16]);
void fab_route_nexthop(const fab_topo *topo, const fab_route *route, uint8_t dest[16]);

/*
 * Paths. A host port (host, port) lives on plane |port|. Two host ports of one plane have
 * one path per T1 of the plane, or one T0-local path when they share a T0.
 */
typedef struct fab_path {
    uint32_t ev; /* the path's EV with salt 0 */
    unsigned plane;
    int t1;            /* T1 index, -1 for a T0-local path */
    bool usable;       /* false when a cable on it is missing */
    uint8_t outer[16]; /* outer destination address */
    uint32_t hops[3];  /* switches in order */
    unsigned nhops;
} fab_path;

/*
 * Enumerates the paths from host port (src, sport) to host port (dst, dport), in T1 order,
 * into |paths| (room for |maxpaths|); |*pnpaths| gets how many there are. Returns 0,
 * FAB_ERR_INVAL (different planes, same port, or not cabled) or FAB_ERR_NOSPACE (then
 * |*pnpaths| says how many are needed).
 */
int fab_path_enum(const fab_topo *topo, uint32_t src, unsigned sport, uint32_t dst, unsigned dport,
                  fab_path *paths, size_t maxpaths, size_t *pnpaths);
/* The path that |ev| names from host |src| to host |dst| (the plane comes from the EV).
 * Returns 0, FAB_ERR_INVAL (plane or T1 out of range, not cabled). */
int fab_path_of_ev(const fab_topo *topo, uint32_t src, uint32_t dst, uint32_t ev, fab_path *ppath);

/*
 * The per-QP address template (docs/architecture.md#per-qp-address-template): built once per host
 * pair, then each packet's outer address is one copy and one uSID write. Holds pointers into
 * |topo|.
 */
typedef struct fab_template {
    uint8_t base[FAB_MAX_PLANES][16]; /* outer address per plane with the T1 uSID zero */
    const uint16_t *t1_usid[FAB_MAX_PLANES];
    uint16_t nt1[FAB_MAX_PLANES];
    uint8_t local[FAB_MAX_PLANES]; /* 1: T0-local, no T1 slot */
    uint16_t planes_ok;            /* bit p: both hosts are cabled on plane p */
    uint8_t plane_shift, t1_shift;
    uint32_t t1_mask;
} fab_template;

/* Builds the template from host |src| to host |dst|. Returns 0 or FAB_ERR_INVAL when they are
 * the same host or share no plane. */
int fab_template_init(const fab_topo *topo, uint32_t src, uint32_t dst, fab_template *tmpl);
/* The outer destination address of |ev|. Returns 0 or FAB_ERR_INVAL when the EV's plane is
 * not usable or its T1 does not exist. */
int fab_template_outer(const fab_template *tmpl, uint32_t ev, uint8_t dest[16]);

/* Decodes an outer address as the sender wrote it (a full container). */
typedef struct fab_outer {
    unsigned plane;
    uint32_t src_t0; /* switch ids */
    uint32_t t1;     /* FAB_NONE for a T0-local path */
    uint32_t dst_t0;
    unsigned dst_port; /* down-port of dst_t0 */
} fab_outer;

/* Returns 0 or FAB_ERR_INVAL when |addr| is not a path of this fabric. */
int fab_outer_decode(const fab_topo *topo, const uint8_t addr[16], fab_outer *pout);

/*
 * Output goes to a sink: |fn| gets the text in pieces and returns 0, or a negative value
 * that stops the writer, which then returns that value.
 */
typedef int (*fab_sink_fn)(void *user, const char *data, size_t datalen);

typedef enum fab_format {
    FAB_FMT_JSON = 0, /* our own route list */
    FAB_FMT_IPROUTE2, /* ip -batch input */
    FAB_FMT_SONIC,    /* SONiC config_db JSON */
    FAB_FMT_FRR,      /* FRR 10.4 staticd/zebra configuration */
} fab_format;

/* Parses "json", "iproute2", "sonic" or "frr"; -1 if none. */
int fab_format_parse(const char *name);
/* Renders the table of switch |sw|. Returns 0, FAB_ERR_NOTFOUND or the sink's error. */
int fab_render_switch(const fab_topo *topo, const fab_tables *tables, uint32_t sw, fab_format fmt,
                      fab_sink_fn fn, void *user);
/* Writes the explicit form of |topo| (docs/topology.md): loading it gives the same fabric. */
int fab_topo_expand(const fab_topo *topo, fab_sink_fn fn, void *user);

/* Formats an IPv6 address in RFC 5952 form; |dest| needs 46 bytes. Returns |dest|. */
char *fab_addr_str(const uint8_t addr[16], char *dest);
/* Parses a host-port name "HOST:PORT". Returns 0 or FAB_ERR_NOTFOUND / FAB_ERR_INVAL. */
int fab_hostport_parse(const fab_topo *topo, const char *text, uint32_t *phost, unsigned *pport);

/*
 * Denylists (docs/architecture.md#denylists). An entry names a fabric element: a switch
 * ("p3-t1-17"), a T0–T1 link ("p3-t0-5~p3-t1-17", either order) or a host port ("h3:1"), whole or
 * one direction of it. Up is toward the T1 on a link and from the host toward its T0 on a host
 * port.
 */
typedef enum fab_element_kind { FAB_EL_SWITCH, FAB_EL_LINK, FAB_EL_PORT } fab_element_kind;

typedef struct fab_element {
    fab_element_kind kind;
    unsigned plane;
    uint32_t sw;     /* switch: its id */
    fab_tier tier;   /* switch: its tier */
    unsigned index;  /* switch: its T0 or T1 index in the plane */
    unsigned t0, t1; /* link: the T0 index a and the T1 index j */
    uint32_t host;   /* host port: the host; its port is |plane| */
} fab_element;

/* Parses |name| into |el|. Returns 0, or FAB_ERR_INVAL with a sentence in |why| naming what is
 * not in the fabric (a link must be cabled, a host port must exist). */
int fab_element_parse(const fab_topo *topo, const char *name, fab_element *el, char *why,
                      size_t whylen);

#define FAB_DIR_UP 1u   /* toward the T1; from a host port toward its T0 */
#define FAB_DIR_DOWN 2u /* toward the T0; from a T0 toward the host port */
#define FAB_DIR_BOTH 3u

/* A denylist scope, "both", "up" or "down", as FAB_DIR_* bits; 0 for anything else. */
unsigned fab_dir_parse(const char *scope);

/*
 * A set of denied elements and the rule that turns them into paths. The data of an ordered
 * host pair (src -> dst) on plane p from T0 a over T1 j to T0 b is denied when switch T0 a,
 * T0 b or T1 j is denied (a switch is denied whole, whatever its directions), link a–j up,
 * link b–j down, src's port on plane p up or dst's port on plane p down. A T0-local path
 * (a == b) crosses no T1 and no T0–T1 link. Only the data direction counts: this is the
 * rule the controller's blast radius counts host pairs' capacity with, so an agent that
 * excludes by it loses exactly the paths the blast radius reported.
 * Borrows the topology, which must outlive it. Read-only calls are thread safe.
 */
typedef struct fab_deny fab_deny;

/* An empty set. Returns 0 or FAB_ERR_NOMEM. */
int fab_deny_new(const fab_topo *topo, fab_deny **pdeny);
void fab_deny_free(fab_deny *deny);
/* Denies |el| (as fab_element_parse gave it for the same topology) in the directions
 * |dirs| (FAB_DIR_*; ignored for a switch). Returns 0, FAB_ERR_INVAL (an element out of the
 * topology's range, or no direction) or FAB_ERR_NOMEM. */
int fab_deny_add(fab_deny *deny, const fab_element *el, unsigned dirs);
/* Whether the set denies the path |ev| names from host |src| to host |dst| by the rule
 * above. An EV that names no path (a host or plane out of range, a port not cabled, a T1 the
 * plane does not have, src == dst) is reported denied. O(1), no allocation. */
bool fab_deny_ev(const fab_deny *deny, uint32_t src, uint32_t dst, uint32_t ev);
/* Whether no switch or T0–T1 link of plane |plane| is denied (host ports aside). */
bool fab_deny_plane_clean(const fab_deny *deny, unsigned plane);
/* How many paths from T0 |a| to T0 |b| of plane |plane| the switches and links of the set
 * leave: 1 or 0 for a == b; otherwise the T1s in both |ua| and |ub| (the T1s each T0 is
 * cabled to, |words| 64-bit words of bits by T1 index) that the set does not deny. */
unsigned fab_deny_t1s(const fab_deny *deny, unsigned plane, uint32_t a, uint32_t b,
                      const uint64_t *ua, const uint64_t *ub, unsigned words);
/* The planes (bit p) on which host |host|'s port is denied as a sender (up) and as a
 * receiver (down). */
void fab_deny_host(const fab_deny *deny, uint32_t host, uint32_t *psrc_planes,
                   uint32_t *pdst_planes);

#ifdef __cplusplus
}
#endif

#endif
