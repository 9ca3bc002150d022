/* SPDX-License-Identifier: MIT */
/* The agent's version, as it registers and reports it. */
#include "agent.h"

const char *agent_version(void)
{
    return MRCFAB_AGENT_VERSION;
}
