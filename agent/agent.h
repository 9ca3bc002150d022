/* SPDX-License-Identifier: MIT */
/* mrc-agent: what its modules share. */
#ifndef AGENT_H
#define AGENT_H

#define MRCFAB_AGENT_VERSION "0.1.0"

const char *agent_version(void);

#endif
