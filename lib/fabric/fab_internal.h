/* SPDX-License-Identifier: MIT */
/* libmrcfab private model: compact arrays sized for 131,072 hosts x 8 planes. */
#ifndef FAB_INTERNAL_H
#define FAB_INTERNAL_H

#include <mrcfab/fabric.h>

/* A switch port's far end; 8 bytes so the 3 million ports of the full fabric fit in 25 MB. */
typedef struct fab_port {
    uint32_t peer;
    uint16_t peer_port;
    uint8_t peer_kind; /* fab_peer_kind */
    uint8_t pad;
} fab_port;

/* One host port's cable: the T0 it reaches (FAB_NONE when missing) and the T0's port. */
typedef struct fab_att {
    uint32_t sw;
    uint16_t port;
    uint16_t pad;
} fab_att;

/* Interface naming of a switch: a pattern with one "{port}", plus per-port exceptions. */
typedef struct fab_ifexc {
    uint16_t port;
    uint32_t name; /* arena offset */
} fab_ifexc;

typedef struct fab_ifspec {
    uint32_t pattern; /* arena offset */
    uint32_t exc0;    /* first exception in topo->ifexc, sorted by port */
    uint32_t nexc;
} fab_ifspec;

typedef struct fab_sw {
    uint32_t name;    /* arena offset */
    uint32_t sid_dev; /* arena offset */
    uint32_t port0;   /* first port in topo->ports */
    uint32_t ifspec;  /* index into topo->ifspecs */
    uint16_t usid;
    uint16_t index;
    uint16_t nports;
    uint8_t plane;
    uint8_t tier;
    uint8_t pinned;     /* usid pinned: 1 by the switch object, 2 by overrides.switches */
    uint8_t if_source;  /* own interface naming: 1 switch object, 2 overrides.switches */
    uint8_t sid_source; /* own SID device: 1 switch object, 2 overrides.switches */
    uint8_t pad;
} fab_sw;

typedef enum fab_missing_kind { FAB_MISSING_UPLINK = 0, FAB_MISSING_HOST = 1 } fab_missing_kind;

/* A cable the file declares absent: T0 a–T1 b, or host a's port b. */
typedef struct fab_missing {
    uint32_t a;
    uint32_t b;
    uint8_t kind;
} fab_missing;

#define FAB_HOST_TAG 0x80000000u

struct fab_topo {
    fab_plan plan;
    char *arena; /* NUL-terminated strings, addressed by offset */
    size_t arena_len, arena_cap;
    uint32_t name;    /* arena offset of the fabric's name */
    uint32_t sid_dev; /* default SID device (arena offset) */
    unsigned planes;

    fab_sw *sw;
    uint32_t nsw;
    fab_port *ports;
    uint64_t nports;

    uint32_t *host_name; /* arena offsets */
    uint32_t nhosts;
    fab_att *att; /* nhosts * planes */
    uint32_t host_ifspec;

    fab_ifspec *ifspecs;
    uint32_t nifspecs;
    fab_ifexc *ifexc;
    uint32_t nifexc;

    fab_missing *missing;
    uint32_t nmissing;
    uint64_t ncables;

    /* by plane: switch ids of T0 a and T1 j (contiguous indexes), and T1 uSIDs for templates */
    uint32_t *t0_of[FAB_MAX_PLANES];
    uint32_t *t1_of[FAB_MAX_PLANES];
    uint16_t *t1_usid[FAB_MAX_PLANES];
    uint32_t nt0[FAB_MAX_PLANES], nt1[FAB_MAX_PLANES];

    uint32_t *usid_sw; /* 65536 entries: switch id of each uSID, FAB_NONE if unused */

    uint32_t *hash; /* open addressing: element ids (host ids tagged), FAB_NONE empty */
    uint32_t hash_mask;

    /* parametric origin, kept so expansion can name the pattern of hosts */
    uint32_t dl_ports; /* 0 for the explicit form */
};

/* topo model (fab_topo.c) */
fab_topo *fab_topo_alloc(void);
int fab_arena_add(fab_topo *topo, const char *s, size_t len, uint32_t *poff);
static inline const char *fab_str(const fab_topo *topo, uint32_t off)
{
    return topo->arena + off;
}
int fab_index_build(fab_topo *topo, fab_error *perr);
uint32_t fab_elem_find(const fab_topo *topo, const char *name, size_t len);
int fab_ifname_format(const fab_topo *topo, const fab_ifspec *spec, unsigned port, char *dest,
                      size_t destlen);

/* loader pieces (fab_load.c, fab_validate.c) */
void fab_error_set(fab_error *perr, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fab_topo_finish(fab_topo *topo, fab_error *perr);

/* buffered writer to a sink (fab_out.c) */
typedef struct fab_out {
    fab_sink_fn fn;
    void *user;
    int err;
    size_t len;
    char buf[16384];
} fab_out;

void fab_out_init(fab_out *out, fab_sink_fn fn, void *user);
int fab_out_flush(fab_out *out);
void fab_out_mem(fab_out *out, const char *data, size_t len);
void fab_out_str(fab_out *out, const char *s);
void fab_out_char(fab_out *out, char c);
void fab_out_uint(fab_out *out, uint64_t v);
void fab_out_hex(fab_out *out, unsigned v);
void fab_out_addr(fab_out *out, const uint8_t addr[16]);
void fab_out_json_str(fab_out *out, const char *s);
void fab_out_fmt(fab_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
