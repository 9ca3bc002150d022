/* SPDX-License-Identifier: MIT */
/* Maintenance windows on time: a thread that wakes at each window's start and end, records it
 * in the audit log, bumps the denylist's version and wakes the push channel. */
#ifndef CTL_WINDOW_H
#define CTL_WINDOW_H

#include "ctl_api.h"

typedef struct ctl_window ctl_window;

ctl_window *ctl_window_start(ctl_ctx *ctx);
void ctl_window_stop(ctl_window *w);

#endif
