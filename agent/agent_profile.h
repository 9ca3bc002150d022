/* SPDX-License-Identifier: MIT */
/* The host's profile as the agent runs on it: the body of GET /api/v1/hosts/{host}/profile
 * (schemas/openapi.yaml, HostProfile; controller/ctl_profile.c), checked against the
 * agent's own fabric. */
#ifndef AGENT_PROFILE_H
#define AGENT_PROFILE_H

#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One plane port; port k is on plane k. Past |cabled| only when cabled. */
typedef struct agent_profile_port {
    unsigned port, plane;
    bool cabled;
    char ifname[FAB_IFNAME_MAX];
    uint8_t address[16];      /* the port's own (inner) address */
    uint8_t usid_address[16]; /* the address it owns in the uSID block and decapsulates */
    char t0[FAB_NAME_MAX];    /* the T0's name ... */
    unsigned t0_index;        /* ... and its index in the plane */
    unsigned t0_port;
} agent_profile_port;

typedef enum agent_class_kind { AGENT_CLASS_LOCAL, AGENT_CLASS_REMOTE } agent_class_kind;

/* The EVs toward one class of destinations: the T0s of |plane| in |t0s| (bit a of word
 * a / 64, |nt0| bits: the plane's T0 count). */
typedef struct agent_profile_class {
    unsigned plane;
    agent_class_kind kind;
    uint64_t *t0s;
    uint32_t nt0;
    uint32_t *evs;
    unsigned nevs;
} agent_profile_class;

#define AGENT_CC_NAME_MAX 32

/* The congestion-control profile; |nscc| is meaningful when |has_nscc|. A null
 * qa_threshold_ns (no delay triggers quick adapt) is UINT64_MAX, as the engine has it. */
typedef struct agent_profile_cc {
    char algorithm[AGENT_CC_NAME_MAX]; /* "uet-1.0-nscc" or "none" */
    uint32_t mtu;
    bool trimming;
    bool has_nscc;
    mrc_cc_nscc_cfg nscc;
} agent_profile_cc;

typedef struct agent_profile {
    char host[FAB_NAME_MAX];
    uint32_t host_id; /* in the topology it was checked against */
    unsigned nports;  /* the topology's planes */
    agent_profile_port ports[FAB_MAX_PLANES];
    agent_profile_class *classes;
    unsigned nclasses;
    agent_profile_cc cc;
} agent_profile;

/*
 * Parses a profile body (|json|, |len| bytes) and checks it against |topo|: the host exists
 * under that name, there is one port per plane of |topo|, each port's cabling, T0 and
 * addresses are the ones |topo| gives it, the EV codec is |topo|'s plan, every class is on a
 * plane the host is cabled on with T0s the plane has, and each EV names the class's plane and
 * a T1 the plane has. Members the agent does not use ("templates", "peer") are not read. On
 * success stores a new profile in |*pprof| (free it with agent_profile_free()). Returns 0, or
 * -EINVAL with a sentence in |err| naming the member at fault (nothing stored).
 */
int agent_profile_parse(const fab_topo *topo, const char *json, size_t len, agent_profile **pprof,
                        char *err, size_t errlen);
void agent_profile_free(agent_profile *prof);

/*
 * The EVs this host uses toward |peer_host|: on each plane both are cabled on, those of the
 * class whose T0s hold the peer's T0 on that plane, each with .port the local port of that
 * plane; planes in order. Writes up to |max| into |evs| and their count into |*pn|. Returns
 * 0, -EINVAL (|peer_host| is this host or not in |topo|, which must be the topology the
 * profile was parsed against), -ENOENT (no plane gives an EV), or -ENOSPC (then |*pn| is how
 * many there are).
 */
int agent_profile_evs(const agent_profile *prof, const fab_topo *topo, uint32_t peer_host,
                      mrc_ev *evs, unsigned max, unsigned *pn);

/*
 * The ports' addresses as 16-byte arrays by port index (as mrc_settings.addr wants them):
 * the own inner addresses, or with |usid| the uSID-block addresses; all zero for a port that
 * is not cabled. Writes up to |max| rows and the port count into |*pn|. Returns 0 or -ENOSPC
 * (|max| below the port count; then |*pn| is that count).
 */
int agent_profile_addrs(const agent_profile *prof, bool usid, uint8_t (*dest)[16], unsigned max,
                        unsigned *pn);

/* The profile's class for destination T0 |t0| on |plane|, NULL if none. */
const agent_profile_class *agent_profile_class_of(const agent_profile *prof, unsigned plane,
                                                  uint32_t t0);

#endif
