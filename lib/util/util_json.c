/* SPDX-License-Identifier: MIT */
/* A request or answer body as exactly one JSON value, strictly. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

json_object *util_json_parse(const char *what, const char *data, size_t len, char *err,
                             size_t errlen)
{
    if (len > INT32_MAX) {
        snprintf(err, errlen, "%s: %zu bytes is too large", what, len);
        return NULL;
    }
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        snprintf(err, errlen, "%s: out of memory", what);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, data, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue && end == len) {
        /* a number or literal at the very end ("null") is only complete once the tokener sees
         * the end of the text, which a NUL marks */
        root = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
        end = len;
    }
    while (jerr == json_tokener_success && end < len && strchr(" \t\r\n", data[end]) &&
           data[end] != '\0') {
        end++;
    }
    if (jerr != json_tokener_success || end != len) {
        snprintf(err, errlen, "%s: not JSON: at byte %zu: %s", what, end,
                 jerr == json_tokener_continue || jerr == json_tokener_error_parse_eof
                     ? "the text ends early"
                 : jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                : "text after the JSON value");
        json_object_put(root);
        root = NULL;
    } else if (!root) {
        snprintf(err, errlen, "%s: the top level must be an object, not null", what);
    }
    json_tokener_free(tok);
    return root;
}

const char *util_json_type_name(json_type type)
{
    switch (type) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "true or false";
    case json_type_double:
        return "a number";
    case json_type_int:
        return "an integer";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    default:
        return "a string";
    }
}

json_object *util_json_member(const char *what, json_object *o, const char *where, const char *key,
                              json_type type, char *err, size_t errlen)
{
    json_object *v = NULL;
    bool has = json_object_object_get_ex(o, key, &v);
    if (!has || !(json_object_is_type(v, type) ||
                  (type == json_type_double && json_object_is_type(v, json_type_int)))) {
        snprintf(err, errlen, "%s: %s%s %s: it must be %s", what, where, key,
                 has ? "has the wrong type" : "is missing", util_json_type_name(type));
        return NULL;
    }
    return v;
}
