/* The one JSON writer of the command line (triage --json, the nightly
 * reports in JSON and SARIF, explore --json, trace's Chrome and HTML
 * exports), and the reader of the flat objects it writes
 * (a triage line read back by the nightly job). Strings are escaped
 * completely: quotes, backslashes and every control character, so a tab or
 * a newline in a failure message never breaks a report. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if
 * the bytes there are not one (a stray continuation byte, an overlong or
 * surrogate form, a sequence cut short). */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (c >= 0xf5 || !n)
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
      (c == 0xf4 && s[1] >= 0x90))
    return 0;
  return n;
}

void cli_json_str(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c == '\t')
      fputs("\\t", f);
    else if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\u%04x", c);
    else if (c == '<') /* keeps "</script>" out of an HTML page */
      fputs("\\u003c", f);
    else if (c < 0x80)
      fputc(c, f);
    else { /* JSON is UTF-8: a byte that is not part of a character is U+FFFD */
      size_t n = utf8_len(p);
      if (n)
        fwrite(p, 1, n, f);
      else
        fputs("\\ufffd", f);
      p += n ? n - 1 : 0;
    }
  }
}

void cj_begin(cli_json *j, FILE *f) {
  memset(j, 0, sizeof *j);
  j->f = f;
}

/* A comma before a value or key that is not the first of its container. */
static void sep(cli_json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth > 0 && j->count[j->depth - 1]++)
    fputs(", ", j->f);
}

static void open_c(cli_json *j, char c) {
  sep(j);
  fputc(c, j->f);
  if (j->depth < CJ_MAX_DEPTH)
    j->count[j->depth] = 0;
  j->depth++;
}

static void close_c(cli_json *j, char c) {
  if (j->depth > 0)
    j->depth--;
  fputc(c, j->f);
}

void cj_obj(cli_json *j) {
  open_c(j, '{');
}
void cj_end_obj(cli_json *j) {
  close_c(j, '}');
}
void cj_arr(cli_json *j) {
  open_c(j, '[');
}
void cj_end_arr(cli_json *j) {
  close_c(j, ']');
}

void cj_key(cli_json *j, const char *k) {
  sep(j);
  fputc('"', j->f);
  cli_json_str(j->f, k);
  fputs("\": ", j->f);
  j->after_key = 1;
}

void cj_str(cli_json *j, const char *s) {
  sep(j);
  fputc('"', j->f);
  cli_json_str(j->f, s ? s : "");
  fputc('"', j->f);
}

void cj_int(cli_json *j, int64_t v) {
  sep(j);
  fprintf(j->f, "%" PRId64, v);
}

void cj_uint(cli_json *j, uint64_t v) {
  sep(j);
  fprintf(j->f, "%" PRIu64, v);
}

void cj_micros(cli_json *j, uint64_t ns) {
  sep(j);
  fprintf(j->f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

void cj_newline(cli_json *j) {
  SIM_ASSERT(!j->after_key);
  fputc('\n', j->f);
}

void cj_bool(cli_json *j, int v) {
  sep(j);
  fputs(v ? "true" : "false", j->f);
}

/* ---- reading back one flat object --------------------------------------- */

/* Parse a JSON string at *p (after its opening quote) into out (cap bytes,
 * NUL-terminated, cut if longer); *p ends after the closing quote.
 * Returns 0, or -1 if the string does not end. */
static int read_string(const char **p, char *out, size_t cap) {
  size_t n = 0;
  const char *v = *p;
  for (; *v && *v != '"'; v++) {
    char c = *v;
    if (c == '\\') {
      v++;
      switch (*v) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u': {
        unsigned x = 0;
        for (int i = 1; i <= 4; i++) {
          char h = v[i];
          if (!h)
            return -1;
          x = x * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        c = (char)(x & 0xff); /* our writer escapes only bytes */
        v += 4;
        break;
      }
      case 0: return -1;
      default: c = *v; break;
      }
    }
    if (out && n + 1 < cap)
      out[n++] = c;
  }
  if (*v != '"')
    return -1;
  if (out && cap)
    out[n] = 0;
  *p = v + 1;
  return 0;
}

/* Past one value at p: a string, a number or a word, or a whole array or
 * object (the strings in it skipped as strings); NULL if it does not end. */
static const char *skip_value(const char *p) {
  if (*p == '"') {
    p++;
    return read_string(&p, NULL, 0) == 0 ? p : NULL;
  }
  if (*p != '[' && *p != '{') { /* a number or a word */
    while (*p && *p != ',' && *p != ' ' && *p != '}' && *p != ']')
      p++;
    return p;
  }
  int depth = 0;
  for (;;) {
    if (*p == '"') {
      p++;
      if (read_string(&p, NULL, 0) != 0)
        return NULL;
      continue;
    }
    if (!*p)
      return NULL;
    if (*p == '[' || *p == '{') {
      if (++depth > CJ_MAX_DEPTH)
        return NULL;
    } else if ((*p == ']' || *p == '}') && --depth == 0) {
      return p + 1;
    }
    p++;
  }
}

uint64_t cli_json_count(const char *obj, const char *key) {
  char v[32];
  return obj && cli_json_field(obj, key, v, sizeof v) == 0 ? strtoull(v, NULL, 10) : 0;
}

const char *cli_json_value(const char *obj, const char *key) {
  const char *p = obj;
  while (*p == ' ')
    p++;
  if (*p++ != '{')
    return NULL;
  for (;;) {
    while (*p == ' ' || *p == ',')
      p++;
    if (*p != '"')
      return NULL; /* the object's end, or not this writer's output */
    p++;
    char k[64];
    if (read_string(&p, k, sizeof k) != 0)
      return NULL;
    while (*p == ' ')
      p++;
    if (*p++ != ':')
      return NULL;
    while (*p == ' ')
      p++;
    if (!strcmp(k, key))
      return p;
    if (!(p = skip_value(p)))
      return NULL;
  }
}

int cli_json_field(const char *obj, const char *key, char *out, size_t cap) {
  const char *p = cli_json_value(obj, key);
  if (!p || !cap)
    return -1;
  if (*p == '"') {
    p++;
    return read_string(&p, out, cap);
  }
  const char *end = skip_value(p);
  if (!end)
    return -1;
  size_t n = (size_t)(end - p) < cap - 1 ? (size_t)(end - p) : cap - 1;
  memcpy(out, p, n);
  out[n] = 0;
  return 0;
}

const char *cli_json_next(const char **it) {
  const char *p = *it;
  if (*p == '[')
    p++;
  while (*p == ' ' || *p == ',')
    p++;
  if (!*p || *p == ']')
    return NULL;
  const char *end = skip_value(p);
  if (!end)
    return NULL;
  *it = end;
  return p;
}

void cj_kstr(cli_json *j, const char *k, const char *s) {
  cj_key(j, k);
  cj_str(j, s);
}

void cj_kint(cli_json *j, const char *k, int64_t v) {
  cj_key(j, k);
  cj_int(j, v);
}

void cj_kbool(cli_json *j, const char *k, int v) {
  cj_key(j, k);
  cj_bool(j, v);
}

void cj_kmicros(cli_json *j, const char *k, uint64_t ns) {
  cj_key(j, k);
  cj_micros(j, ns);
}

void cj_kobj(cli_json *j, const char *k) {
  cj_key(j, k);
  cj_obj(j);
}

void cj_karr(cli_json *j, const char *k) {
  cj_key(j, k);
  cj_arr(j);
}
