/* SPDX-License-Identifier: MIT */
/* The tokens the controller's API tests authenticate with: one of each role. */
#ifndef CTL_TEST_TOKENS_H
#define CTL_TEST_TOKENS_H

#include "util.h"

static const util_token T_READER = {.role = UTIL_ROLE_READER, .name = (char[]){"rita"}};
static const util_token T_AGENT = {.role = UTIL_ROLE_AGENT, .name = (char[]){"h3"}};
static const util_token T_PROBER = {.role = UTIL_ROLE_PROBER, .name = (char[]){"pat"}};
static const util_token T_LOCAL = {.role = UTIL_ROLE_LOCALIZER, .name = (char[]){"loc"}};
static const util_token T_OPER = {.role = UTIL_ROLE_OPERATOR, .name = (char[]){"olga"}};
static const util_token T_ADMIN = {.role = UTIL_ROLE_ADMIN, .name = (char[]){"ada"}};

#endif
