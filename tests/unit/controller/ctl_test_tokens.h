/* SPDX-License-Identifier: MIT */
/* The tokens the controller's API tests authenticate with: one of each role. */
#ifndef CTL_TEST_TOKENS_H
#define CTL_TEST_TOKENS_H

#include "util.h"

static const util_token T_READER = {(char[]){"reader-0123456789"}, UTIL_ROLE_READER,
                                    (char[]){"rita"}};
static const util_token T_AGENT = {(char[]){"agent-0123456789a"}, UTIL_ROLE_AGENT, (char[]){"h3"}};
static const util_token T_PROBER = {(char[]){"prober-0123456789"}, UTIL_ROLE_PROBER,
                                    (char[]){"pat"}};
static const util_token T_LOCAL = {(char[]){"localizer-0123456"}, UTIL_ROLE_LOCALIZER,
                                   (char[]){"loc"}};
static const util_token T_OPER = {(char[]){"operator-01234567"}, UTIL_ROLE_OPERATOR,
                                  (char[]){"olga"}};
static const util_token T_ADMIN = {(char[]){"admin-0123456789a"}, UTIL_ROLE_ADMIN, (char[]){"ada"}};

#endif
