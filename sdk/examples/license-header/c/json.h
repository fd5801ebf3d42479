// A small JSON reader for producer config: enough for discern's canonical config JSON
// (objects, arrays, strings with every escape, numbers, true, false, null).
#ifndef LICENSE_HEADER_JSON_H
#define LICENSE_HEADER_JSON_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value {
  json_kind kind;
  int boolean;
  double number;
  char *string;             // UTF-8, NUL-terminated (JSON_STRING)
  size_t string_len;
  struct json_value *items; // JSON_ARRAY elements, or JSON_OBJECT values
  char **keys;              // JSON_OBJECT keys, parallel to items
  size_t len;
} json_value;

// Parse `text`; on failure return 0 and write a message into `err`.
int json_parse(const char *text, size_t len, json_value *out, char *err, size_t err_len);
void json_free(json_value *value);
// The value under `key` of an object (the last one if repeated), or NULL.
const json_value *json_get(const json_value *object, const char *key);

#endif
