/* SPDX-License-Identifier: MIT */
/* One run of a scenario. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <stdbool.h>

#include "sim_out.h"
#include "sim_scenario.h"

/*
 * Runs |sc| to the end of its traffic or its end time, with a progress bar on stderr when
 * |progress| and stderr is a terminal. Fills |res| and |ts| (free them with sim_results_free;
 * |res| borrows strings from |sc|). Returns 0, or -1 with a sentence in |errmsg|.
 */
int sim_run(const sim_scenario *sc, bool progress, sim_results *res, sim_series *ts, char *errmsg,
            size_t errmsglen);
void sim_results_free(sim_results *res, sim_series *ts);

#endif
