/* SPDX-License-Identifier: MIT */
/* The fault timeline of a run. */
#ifndef SIM_FAULT_H
#define SIM_FAULT_H

#include "sim_world.h"

/* Schedules every fault of the scenario. Returns 0, or -1 with a sentence in |errmsg|. */
int sim_fault_build(sim_world *w, char *errmsg, size_t errmsglen);
void sim_fault_free(sim_world *w);
void sim_fault_on_event(sim_world *w, uint32_t index);

#endif
