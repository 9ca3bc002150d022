/* SPDX-License-Identifier: MIT */
/* Traffic: flows from the scenario's items, their QPs, their units and completions. */
#ifndef SIM_TRAFFIC_H
#define SIM_TRAFFIC_H

#include "sim_world.h"

/* The flows of every traffic item (before the hosts: it says which hosts run MRC and how many
 * QPs each needs). Returns 0, or -1 with a sentence in |errmsg|. */
int sim_traffic_build(sim_world *w, char *errmsg, size_t errmsglen);
/* After the hosts: every flow's QPs, and the events that start them. */
int sim_traffic_connect(sim_world *w, char *errmsg, size_t errmsglen);
void sim_traffic_free(sim_world *w);
void sim_traffic_on_start(sim_world *w, uint32_t flow);
/* Bytes the receiver has taken in so far (for the time series). */
uint64_t sim_traffic_delivered(const sim_world *w, const sim_flow *f);

#endif
