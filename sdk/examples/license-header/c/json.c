#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t n, i;
  char *err;
  size_t err_len;
} parser;

static int fail(parser *p, const char *what) {
  snprintf(p->err, p->err_len, "%s at byte %zu", what, p->i);
  return 0;
}

static void skip_ws(parser *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                         p->s[p->i] == '\r'))
    p->i++;
}

static int literal(parser *p, const char *word) {
  size_t len = strlen(word);
  if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0) return fail(p, "unexpected token");
  p->i += len;
  return 1;
}

static int hex4(parser *p, unsigned *out) {
  if (p->n - p->i < 4) return fail(p, "short \\u escape");
  unsigned v = 0;
  for (int k = 0; k < 4; k++) {
    char c = p->s[p->i++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return fail(p, "bad \\u escape");
  }
  *out = v;
  return 1;
}

static size_t put_utf8(char *dst, unsigned cp) {
  if (cp < 0x80) { dst[0] = (char)cp; return 1; }
  if (cp < 0x800) { dst[0] = (char)(0xC0 | cp >> 6); dst[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    dst[0] = (char)(0xE0 | cp >> 12); dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  dst[0] = (char)(0xF0 | cp >> 18); dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); dst[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

// Called with p->i on the opening quote. The result is never longer than the source text.
static int parse_string(parser *p, char **out, size_t *out_len) {
  p->i++;
  char *buf = malloc(p->n - p->i + 1);
  if (!buf) return fail(p, "out of memory");
  size_t len = 0;
  while (1) {
    if (p->i >= p->n) { free(buf); return fail(p, "unterminated string"); }
    unsigned char c = (unsigned char)p->s[p->i++];
    if (c == '"') break;
    if (c < 0x20) { free(buf); return fail(p, "control character in string"); }
    if (c != '\\') { buf[len++] = (char)c; continue; }
    if (p->i >= p->n) { free(buf); return fail(p, "unterminated escape"); }
    char e = p->s[p->i++];
    switch (e) {
      case '"': buf[len++] = '"'; break;
      case '\\': buf[len++] = '\\'; break;
      case '/': buf[len++] = '/'; break;
      case 'b': buf[len++] = '\b'; break;
      case 'f': buf[len++] = '\f'; break;
      case 'n': buf[len++] = '\n'; break;
      case 'r': buf[len++] = '\r'; break;
      case 't': buf[len++] = '\t'; break;
      case 'u': {
        unsigned cp;
        if (!hex4(p, &cp)) { free(buf); return 0; }
        if (cp >= 0xD800 && cp < 0xDC00 && p->n - p->i >= 6 && p->s[p->i] == '\\' &&
            p->s[p->i + 1] == 'u') {
          size_t at = p->i;
          unsigned low;
          p->i += 2;
          if (!hex4(p, &low)) { free(buf); return 0; }
          if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          else p->i = at;
        }
        if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;  // a lone surrogate
        len += put_utf8(buf + len, cp);
        break;
      }
      default: free(buf); return fail(p, "bad escape");
    }
  }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  return 1;
}

static int parse_value(parser *p, json_value *out, int depth);

static int push(parser *p, json_value *v, size_t *cap) {
  if (v->len < *cap) return 1;
  *cap = *cap ? *cap * 2 : 4;
  json_value *items = realloc(v->items, *cap * sizeof *items);
  if (!items) return fail(p, "out of memory");
  v->items = items;
  if (v->kind == JSON_OBJECT) {
    char **keys = realloc(v->keys, *cap * sizeof *keys);
    if (!keys) return fail(p, "out of memory");
    v->keys = keys;
  }
  return 1;
}

static int parse_container(parser *p, json_value *out, int depth) {
  int object = p->s[p->i] == '{';
  char close = object ? '}' : ']';
  size_t cap = 0;
  out->kind = object ? JSON_OBJECT : JSON_ARRAY;
  p->i++;
  skip_ws(p);
  if (p->i < p->n && p->s[p->i] == close) { p->i++; return 1; }
  while (1) {
    if (!push(p, out, &cap)) return 0;
    if (object) {
      skip_ws(p);
      if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a key");
      size_t key_len;
      if (!parse_string(p, &out->keys[out->len], &key_len)) return 0;
      skip_ws(p);
      if (p->i >= p->n || p->s[p->i] != ':') { free(out->keys[out->len]); return fail(p, "expected ':'"); }
      p->i++;
    }
    if (!parse_value(p, &out->items[out->len], depth + 1)) {
      json_free(&out->items[out->len]);
      if (object) free(out->keys[out->len]);
      return 0;
    }
    out->len++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
    if (p->i < p->n && p->s[p->i] == close) { p->i++; return 1; }
    return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int parse_number(parser *p, json_value *out) {
  size_t start = p->i;
  if (p->i < p->n && p->s[p->i] == '-') p->i++;
  while (p->i < p->n && strchr("0123456789.eE+-", p->s[p->i])) p->i++;
  char tmp[64];
  size_t len = p->i - start;
  if (len == 0 || len >= sizeof tmp) return fail(p, "bad number");
  memcpy(tmp, p->s + start, len);
  tmp[len] = '\0';
  char *end;
  out->kind = JSON_NUMBER;
  out->number = strtod(tmp, &end);
  if (*end != '\0') return fail(p, "bad number");
  return 1;
}

static int parse_value(parser *p, json_value *out, int depth) {
  memset(out, 0, sizeof *out);
  if (depth > 64) return fail(p, "nested too deeply");
  skip_ws(p);
  if (p->i >= p->n) return fail(p, "unexpected end");
  switch (p->s[p->i]) {
    case '{': case '[': return parse_container(p, out, depth);
    case '"': out->kind = JSON_STRING; return parse_string(p, &out->string, &out->string_len);
    case 't': out->kind = JSON_BOOL; out->boolean = 1; return literal(p, "true");
    case 'f': out->kind = JSON_BOOL; return literal(p, "false");
    case 'n': out->kind = JSON_NULL; return literal(p, "null");
    default: return parse_number(p, out);
  }
}

int json_parse(const char *text, size_t len, json_value *out, char *err, size_t err_len) {
  parser p = {text, len, 0, err, err_len};
  if (!parse_value(&p, out, 0)) { json_free(out); return 0; }
  skip_ws(&p);
  if (p.i != p.n) { json_free(out); return fail(&p, "trailing characters"); }
  return 1;
}

void json_free(json_value *v) {
  free(v->string);
  for (size_t k = 0; k < v->len; k++) {
    json_free(&v->items[k]);
    if (v->keys) free(v->keys[k]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

const json_value *json_get(const json_value *object, const char *key) {
  const json_value *found = NULL;
  for (size_t k = 0; k < object->len; k++)
    if (strcmp(object->keys[k], key) == 0) found = &object->items[k];
  return found;
}
