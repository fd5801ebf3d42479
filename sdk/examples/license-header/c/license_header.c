// Example producer (C): how many files lack a license header. The same behaviour is implemented
// in Rust, Python and JavaScript beside this folder; ../README.md specifies it. Build: see
// ../../../guides/c.md (or run ../../build.sh).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "producer.h"

#define HEAD_BYTES 8192
#define MAX_LINES 1000000
#define SCHEMA                                                                         \
  "{\"type\":\"object\",\"required\":[\"paths\"],\"additionalProperties\":false,"      \
  "\"properties\":{\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"   \
  "\"marker\":{\"type\":\"string\",\"minLength\":1},"                          \
  "\"lines\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000000}}}"

typedef producer_string_t string_t;
typedef exports_discern_producer_measure_metric_t metric_t;
typedef exports_discern_producer_measure_finding_t finding_t;

void exports_discern_producer_measure_describe(exports_discern_producer_measure_info_t *ret) {
  // Everything returned is freed by the bindings after the call: hand over heap copies.
  producer_string_dup(&ret->name, "license-header");
  producer_string_dup(&ret->version, "0.1.0");
  ret->metrics.len = 2;
  ret->metrics.ptr = malloc(2 * sizeof(string_t));
  producer_string_dup(&ret->metrics.ptr[0], "files_without_header");
  producer_string_dup(&ret->metrics.ptr[1], "license_header_share");
  ret->config_schema.is_some = true;
  producer_string_dup(&ret->config_schema.val, SCHEMA);
}

static bool error(string_t *err, const char *message) {
  producer_string_dup(err, message);
  return false;
}

// The length of the bytes before the `lines`-th newline.
static size_t head_len(const uint8_t *data, size_t len, long lines) {
  size_t from = 0;
  for (long line = 0; line < lines; line++) {
    const uint8_t *nl = from < len ? memchr(data + from, '\n', len - from) : NULL;
    if (!nl) return len;
    if (line + 1 == lines) return (size_t)(nl - data);
    from = (size_t)(nl - data) + 1;
  }
  return len;
}

static bool contains(const uint8_t *hay, size_t hay_len, const char *needle, size_t needle_len) {
  for (size_t i = 0; i + needle_len <= hay_len; i++)
    if (memcmp(hay + i, needle, needle_len) == 0) return true;
  return false;
}

typedef struct {
  producer_list_string_t paths;  // the strings are borrowed from the parsed JSON
  const char *marker;
  size_t marker_len;
  long lines;
} config_t;

static bool parse_config(const json_value *root, config_t *cfg, string_t *err) {
  char message[512];
  if (root->kind != JSON_OBJECT) return error(err, "config must be a table");
  for (size_t k = 0; k < root->len; k++) {
    const char *key = root->keys[k];
    if (strcmp(key, "paths") && strcmp(key, "marker") && strcmp(key, "lines")) {
      snprintf(message, sizeof message, "config.%s is not a known key (allowed: paths, marker, lines)", key);
      return error(err, message);
    }
  }
  const json_value *paths = json_get(root, "paths");
  bool paths_ok = paths && paths->kind == JSON_ARRAY && paths->len > 0;
  for (size_t k = 0; paths_ok && k < paths->len; k++) paths_ok = paths->items[k].kind == JSON_STRING;
  if (!paths_ok) return error(err, "config `paths` must be a non-empty list of globs");

  const json_value *marker = json_get(root, "marker");
  cfg->marker = "SPDX-License-Identifier:";
  cfg->marker_len = strlen(cfg->marker);
  if (marker) {
    if (marker->kind != JSON_STRING || marker->string_len == 0)
      return error(err, "config `marker` must be a non-empty string");
    cfg->marker = marker->string;
    cfg->marker_len = marker->string_len;
  }

  const json_value *lines = json_get(root, "lines");
  cfg->lines = 5;
  if (lines) {
    if (lines->kind != JSON_NUMBER || !(lines->number >= 1 && lines->number <= MAX_LINES) ||
        lines->number != (double)(long)lines->number)
      return error(err, "config `lines` must be a whole number from 1 to 1000000");
    cfg->lines = (long)lines->number;
  }

  cfg->paths.len = paths->len;
  cfg->paths.ptr = malloc(paths->len * sizeof(string_t));
  for (size_t k = 0; k < paths->len; k++) {
    cfg->paths.ptr[k].ptr = (uint8_t *)paths->items[k].string;
    cfg->paths.ptr[k].len = paths->items[k].string_len;
  }
  return true;
}

static void add_finding(finding_t *finding, const string_t *path, const config_t *cfg) {
  char tail[600];
  int n = snprintf(tail, sizeof tail, ": no `%.*s` in the first %ld lines", (int)cfg->marker_len,
                   cfg->marker, cfg->lines);
  size_t tail_len = (size_t)n < sizeof tail ? (size_t)n : sizeof tail - 1;
  finding->message.len = path->len + tail_len;
  finding->message.ptr = malloc(finding->message.len);
  memcpy(finding->message.ptr, path->ptr, path->len);
  memcpy(finding->message.ptr + path->len, tail, tail_len);
  producer_string_dup_n(&finding->fingerprint, (const char *)path->ptr, path->len);
  finding->path.is_some = true;
  producer_string_dup_n(&finding->path.val, (const char *)path->ptr, path->len);
  finding->line.is_some = true;  // the header belongs at the top of the file
  finding->line.val = 1;
  finding->column.is_some = false;
  finding->severity.is_some = false;
}

bool exports_discern_producer_measure_run(string_t *config_text,
                                          exports_discern_producer_measure_list_metric_t *ret,
                                          string_t *err) {
  char message[512];
  json_value root;
  if (!json_parse((const char *)config_text->ptr, config_text->len, &root, message, sizeof message)) {
    char full[600];
    snprintf(full, sizeof full, "config is not JSON: %s", message);
    return error(err, full);
  }
  config_t cfg = {0};
  if (!parse_config(&root, &cfg, err)) {
    json_free(&root);
    return false;
  }

  discern_producer_snapshot_list_entry_t entries;
  discern_producer_snapshot_files(&cfg.paths, &entries);
  free(cfg.paths.ptr);

  finding_t *findings = malloc((entries.len ? entries.len : 1) * sizeof(finding_t));
  size_t missing = 0;
  bool ok = true;
  for (size_t k = 0; k < entries.len && ok; k++) {
    const string_t *path = &entries.ptr[k].path;
    producer_list_u8_t bytes;
    if (!discern_producer_snapshot_read_range((string_t *)path, 0, HEAD_BYTES, &bytes, err)) {
      ok = false;  // the host's message becomes ours
      break;
    }
    if (!contains(bytes.ptr, head_len(bytes.ptr, bytes.len, cfg.lines), cfg.marker, cfg.marker_len))
      add_finding(&findings[missing++], path, &cfg);
    producer_list_u8_free(&bytes);
  }
  size_t total = entries.len;
  discern_producer_snapshot_list_entry_free(&entries);
  json_free(&root);
  if (!ok) {
    for (size_t f = 0; f < missing; f++) exports_discern_producer_measure_finding_free(&findings[f]);
    free(findings);
    return false;
  }

  metric_t *metrics = malloc(2 * sizeof(metric_t));
  producer_string_dup(&metrics[0].name, "files_without_header");
  metrics[0].value = (double)missing;
  metrics[0].findings.ptr = findings;
  metrics[0].findings.len = missing;
  metrics[0].counted = true;  // the value is the number of findings
  producer_string_dup(&metrics[1].name, "license_header_share");
  metrics[1].value = total ? (double)(total - missing) / (double)total : 1.0;
  metrics[1].findings.ptr = NULL;
  metrics[1].findings.len = 0;
  metrics[1].counted = false;
  ret->ptr = metrics;
  ret->len = 2;
  return true;
}
