/* SPDX-License-Identifier: MIT */
/* Prints the controller's role table (controller/ctl_roles.c): --markdown as docs/controller.md
 * shows it, --tsv for tests/controller/roles.sh's requests. */
#include <stdio.h>
#include <string.h>

#include "ctl_roles.h"

static const char *own_text(ctl_own k)
{
    return k == CTL_OWN_HOST ? "own host" : k == CTL_OWN_PROBER ? "prober entries" : "";
}

int main(int argc, char **argv)
{
    bool md = argc == 2 && strcmp(argv[1], "--markdown") == 0;
    if (argc != 2 || (!md && strcmp(argv[1], "--tsv") != 0)) {
        fprintf(stderr, "usage: ctl-roles-dump --markdown|--tsv\n");
        return 2;
    }
    size_t n;
    const ctl_route *t = ctl_roles_table(&n);
    if (md) {
        printf("| method | path | roles | what |\n|---|---|---|---|\n");
    }
    for (size_t i = 0; i < n; i++) {
        char roles[160] = "", own[160] = "";
        ctl_roles_names(t[i].roles, roles, sizeof(roles));
        ctl_roles_names(t[i].own, own, sizeof(own));
        if (!md) {
            printf("%s\t%s\t%s\t%s\t%s\t%s\n", t[i].method, t[i].pattern,
                   t[i].qualifier ? t[i].qualifier : "-", roles, own[0] ? own : "-",
                   own_text(t[i].own_kind)[0] ? own_text(t[i].own_kind) : "-");
            continue;
        }
        /* each role held to its own things says so: "agent (own host)" */
        char cell[320] = "";
        size_t at = 0;
        for (unsigned r = UTIL_ROLE_NONE; r <= UTIL_ROLE_ADMIN; r++) {
            if (!(t[i].roles & CTL_ROLE_BIT(r))) {
                continue;
            }
            int k = snprintf(cell + at, sizeof(cell) - at, "%s%s%s%s%s", at ? ", " : "",
                             util_role_name((util_role)r),
                             t[i].own & CTL_ROLE_BIT(r) ? " (" : "",
                             t[i].own & CTL_ROLE_BIT(r) ? own_text(t[i].own_kind) : "",
                             t[i].own & CTL_ROLE_BIT(r) ? ")" : "");
            at += k > 0 ? (size_t)k : 0;
        }
        printf("| %s | `%s%s%s` | %s | %s |\n", t[i].method, t[i].pattern,
               t[i].qualifier ? "?" : "", t[i].qualifier ? t[i].qualifier : "", cell,
               t[i].what);
    }
    return 0;
}
