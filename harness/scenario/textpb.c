/* Protobuf text format for scenarios, generic over protobuf-c descriptors:
 * the printer writes what `protoc --decode` writes, the parser reads what
 * `protoc --encode` reads (fields by name, nested messages in {} or <>,
 * repeated scalars one by one or as [a, b], strings with C escapes,
 * # comments). protobuf-c has no text format of its own. */
#include "textpb.h"

#include "scenario.pb-c.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- printing ------------------------------------------------------------ */

static void print_bytes(FILE *f, const uint8_t *p, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    switch (c) {
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    case '"': fputs("\\\"", f); break;
    case '\'': fputs("\\'", f); break;
    case '\\': fputs("\\\\", f); break;
    default:
      if (c >= 0x20 && c < 0x7f)
        fputc(c, f);
      else
        fprintf(f, "\\%03o", c);
    }
  }
  fputc('"', f);
}

static int is_zero(const ProtobufCFieldDescriptor *fd, const void *v) {
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_ENUM:
  case PROTOBUF_C_TYPE_BOOL:
  case PROTOBUF_C_TYPE_FLOAT: return *(const uint32_t *)v == 0;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE: return *(const uint64_t *)v == 0;
  case PROTOBUF_C_TYPE_STRING: return !*(char *const *)v || !**(char *const *)v;
  case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)v)->len == 0;
  case PROTOBUF_C_TYPE_MESSAGE: return *(void *const *)v == NULL;
  }
  return 0;
}

static size_t type_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE: return 8;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  default: return 4;
  }
}

static void print_msg(FILE *f, const ProtobufCMessage *m, int indent);

static void print_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *v, int indent) {
  fprintf(f, "%*s%s", indent, "", fd->name);
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: fprintf(f, ": %" PRId32 "\n", *(const int32_t *)v); break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: fprintf(f, ": %" PRIu32 "\n", *(const uint32_t *)v); break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64: fprintf(f, ": %" PRId64 "\n", *(const int64_t *)v); break;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: fprintf(f, ": %" PRIu64 "\n", *(const uint64_t *)v); break;
  case PROTOBUF_C_TYPE_BOOL:
    fprintf(f, ": %s\n", *(const protobuf_c_boolean *)v ? "true" : "false");
    break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value(fd->descriptor, *(const int *)v);
    if (ev)
      fprintf(f, ": %s\n", ev->name);
    else
      fprintf(f, ": %d\n", *(const int *)v);
    break;
  }
  case PROTOBUF_C_TYPE_STRING:
    fputs(": ", f);
    print_bytes(f, (const uint8_t *)*(char *const *)v, strlen(*(char *const *)v));
    fputc('\n', f);
    break;
  case PROTOBUF_C_TYPE_BYTES:
    fputs(": ", f);
    print_bytes(f, ((const ProtobufCBinaryData *)v)->data, ((const ProtobufCBinaryData *)v)->len);
    fputc('\n', f);
    break;
  case PROTOBUF_C_TYPE_MESSAGE:
    fputs(" {\n", f);
    print_msg(f, *(const ProtobufCMessage *const *)v, indent + 2);
    fprintf(f, "%*s}\n", indent, "");
    break;
  default: fputs(": 0\n", f); break;
  }
}

static void print_msg(FILE *f, const ProtobufCMessage *m, int indent) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  const char *base = (const char *)m;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *fd = &d->fields[i];
    if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(base + fd->quantifier_offset);
      const char *arr = *(char *const *)(base + fd->offset);
      for (size_t k = 0; k < n; k++)
        print_value(f, fd, arr + k * type_size(fd->type), indent);
      continue;
    }
    if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (*(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
        continue;
    } else if (is_zero(fd, base + fd->offset)) {
      continue; /* proto3: defaults are not written */
    }
    print_value(f, fd, base + fd->offset, indent);
  }
}

int sf_text_print(const sf_scenario *s, FILE *f) {
  size_t n = sf_encoded_size(s);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf)
    return -1;
  sf_encode(s, buf, n);
  Simfuzz__Scenario *m = simfuzz__scenario__unpack(NULL, n, buf);
  free(buf);
  if (!m)
    return -1;
  print_msg(f, &m->base, 0);
  simfuzz__scenario__free_unpacked(m, NULL);
  return 0;
}

/* ---- parsing ------------------------------------------------------------- */

typedef struct {
  const char *p, *end;
  int line;
  char *err;
  size_t errcap;
  int failed;
} lexer;

static void fail(lexer *lx, const char *fmt, ...) {
  if (lx->failed)
    return;
  lx->failed = 1;
  int k = snprintf(lx->err, lx->errcap, "line %d: ", lx->line);
  va_list ap;
  va_start(ap, fmt);
  if (k >= 0 && (size_t)k < lx->errcap)
    vsnprintf(lx->err + k, lx->errcap - (size_t)k, fmt, ap);
  va_end(ap);
}

static void skip_space(lexer *lx) {
  while (lx->p < lx->end) {
    if (*lx->p == '#') {
      while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
    } else if (isspace((unsigned char)*lx->p)) {
      if (*lx->p == '\n')
        lx->line++;
      lx->p++;
    } else {
      break;
    }
  }
}

static int peek(lexer *lx) {
  skip_space(lx);
  return lx->p < lx->end ? (unsigned char)*lx->p : -1;
}

static int accept(lexer *lx, char c) {
  if (peek(lx) == c) {
    lx->p++;
    return 1;
  }
  return 0;
}

static int ident(lexer *lx, char *out, size_t cap) {
  skip_space(lx);
  size_t n = 0;
  while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '_')) {
    if (n + 1 < cap)
      out[n++] = *lx->p;
    lx->p++;
  }
  out[n] = 0;
  return n > 0;
}

/* A quoted string with C escapes; appends to *buf. Adjacent strings concatenate. */
static int string_lit(lexer *lx, uint8_t **buf, size_t *len) {
  int any = 0;
  while (peek(lx) == '"' || peek(lx) == '\'') {
    char q = *lx->p++;
    any = 1;
    while (lx->p < lx->end && *lx->p != q) {
      int c = (unsigned char)*lx->p++;
      if (c == '\n') {
        fail(lx, "newline in string");
        return 0;
      }
      if (c == '\\' && lx->p < lx->end) {
        int e = (unsigned char)*lx->p++;
        switch (e) {
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'a': c = 7; break;
        case 'b': c = 8; break;
        case 'f': c = 12; break;
        case 'v': c = 11; break;
        case 'x': {
          int v = 0, k = 0;
          while (k < 2 && lx->p < lx->end && isxdigit((unsigned char)*lx->p)) {
            int h = *lx->p++;
            v = v * 16 + (isdigit(h) ? h - '0' : (tolower(h) - 'a' + 10));
            k++;
          }
          c = v;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0', k = 1;
            while (k < 3 && lx->p < lx->end && *lx->p >= '0' && *lx->p <= '7') {
              v = v * 8 + (*lx->p++ - '0');
              k++;
            }
            c = v & 0xff;
          } else {
            c = e; /* \" \' \\ \? */
          }
        }
      }
      uint8_t *nb = realloc(*buf, *len + 1);
      if (!nb) {
        fail(lx, "out of memory");
        return 0;
      }
      *buf = nb;
      (*buf)[(*len)++] = (uint8_t)c;
    }
    if (lx->p >= lx->end) {
      fail(lx, "unterminated string");
      return 0;
    }
    lx->p++;
  }
  if (!any)
    fail(lx, "expected a string");
  return any;
}

/* An integer (decimal, 0x hex, or a leading '-') or true/false. */
static int number(lexer *lx, int *neg, uint64_t *mag) {
  char tok[64];
  skip_space(lx);
  *neg = 0;
  if (lx->p < lx->end && *lx->p == '-') {
    *neg = 1;
    lx->p++;
  }
  if (!ident(lx, tok, sizeof tok)) {
    fail(lx, "expected a number");
    return 0;
  }
  if (!strcmp(tok, "true") || !strcmp(tok, "True") || !strcmp(tok, "t")) {
    *mag = 1;
    return 1;
  }
  if (!strcmp(tok, "false") || !strcmp(tok, "False") || !strcmp(tok, "f")) {
    *mag = 0;
    return 1;
  }
  char *e;
  *mag = strtoull(tok, &e, 0);
  if (*e || !isdigit((unsigned char)tok[0])) {
    fail(lx, "bad number '%s'", tok);
    return 0;
  }
  return 1;
}

static int parse_msg(lexer *lx, ProtobufCMessage *m, char close);

/* Store one scalar of field fd at dst. */
static int scalar(lexer *lx, const ProtobufCFieldDescriptor *fd, void *dst) {
  if (fd->type == PROTOBUF_C_TYPE_BYTES || fd->type == PROTOBUF_C_TYPE_STRING) {
    uint8_t *b = NULL;
    size_t n = 0;
    if (!string_lit(lx, &b, &n)) {
      free(b);
      return 0;
    }
    if (fd->type == PROTOBUF_C_TYPE_BYTES) {
      ProtobufCBinaryData *bd = dst;
      free(bd->data);
      bd->data = b;
      bd->len = n;
    } else {
      uint8_t *z = realloc(b, n + 1);
      if (!z) {
        free(b);
        return 0;
      }
      z[n] = 0;
      *(char **)dst = (char *)z;
    }
    return 1;
  }
  if (fd->type == PROTOBUF_C_TYPE_ENUM && isalpha(peek(lx))) {
    char tok[128];
    ident(lx, tok, sizeof tok);
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value_by_name(fd->descriptor, tok);
    if (!ev) {
      fail(lx, "unknown value '%s' for %s", tok, fd->name);
      return 0;
    }
    *(int *)dst = ev->value;
    return 1;
  }
  int neg;
  uint64_t v;
  if (!number(lx, &neg, &v))
    return 0;
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_ENUM:
    if (v > (neg ? 2147483648ull : 2147483647ull))
      goto range;
    *(int32_t *)dst = neg ? (int32_t)(0 - v) : (int32_t)v;
    return 1;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    if (neg || v > UINT32_MAX)
      goto range;
    *(uint32_t *)dst = (uint32_t)v;
    return 1;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    if (v > (neg ? 9223372036854775808ull : 9223372036854775807ull))
      goto range;
    *(int64_t *)dst = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    if (neg)
      goto range;
    *(uint64_t *)dst = v;
    return 1;
  case PROTOBUF_C_TYPE_BOOL:
    if (neg || v > 1)
      goto range;
    *(protobuf_c_boolean *)dst = (protobuf_c_boolean)v;
    return 1;
  default: fail(lx, "field %s: unsupported type", fd->name); return 0;
  }
range:
  fail(lx, "value out of range for %s", fd->name);
  return 0;
}

static ProtobufCMessage *new_msg(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (m)
    protobuf_c_message_init(d, m);
  return m;
}

/* One value (scalar or {message}) of field fd into dst. */
static int value(lexer *lx, const ProtobufCFieldDescriptor *fd, void *dst) {
  if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
    return scalar(lx, fd, dst);
  char open = (char)peek(lx);
  if (open != '{' && open != '<') {
    fail(lx, "expected { after %s", fd->name);
    return 0;
  }
  lx->p++;
  ProtobufCMessage **slot = dst;
  if (!*slot && !(*slot = new_msg(fd->descriptor))) {
    fail(lx, "out of memory");
    return 0;
  }
  return parse_msg(lx, *slot, open == '{' ? '}' : '>');
}

static int field(lexer *lx, ProtobufCMessage *m) {
  char name[128];
  if (!ident(lx, name, sizeof name)) {
    fail(lx, "expected a field name");
    return 0;
  }
  const ProtobufCFieldDescriptor *fd =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
  if (!fd) {
    fail(lx, "%s has no field '%s'", m->descriptor->short_name, name);
    return 0;
  }
  char *base = (char *)m;
  int colon = accept(lx, ':');
  if (fd->type != PROTOBUF_C_TYPE_MESSAGE && !colon) {
    fail(lx, "expected ':' after %s", name);
    return 0;
  }
  if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
    size_t *n = (size_t *)(base + fd->quantifier_offset);
    char **arr = (char **)(base + fd->offset);
    size_t es = type_size(fd->type);
    int list = accept(lx, '[');
    if (list && accept(lx, ']'))
      return 1;
    do {
      char *na = realloc(*arr, (*n + 1) * es);
      if (!na) {
        fail(lx, "out of memory");
        return 0;
      }
      *arr = na;
      memset(na + *n * es, 0, es);
      (*n)++;
      if (!value(lx, fd, na + (*n - 1) * es))
        return 0;
    } while (list && accept(lx, ','));
    if (list && !accept(lx, ']')) {
      fail(lx, "expected ] after the list of %s", name);
      return 0;
    }
    return 1;
  }
  if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    uint32_t *cs = (uint32_t *)(base + fd->quantifier_offset);
    if (*cs && *cs != fd->id) {
      fail(lx, "%s: another field of the same oneof is already set", name);
      return 0;
    }
    *cs = fd->id;
  }
  return value(lx, fd, base + fd->offset);
}

static int parse_msg(lexer *lx, ProtobufCMessage *m, char close) {
  for (;;) {
    int c = peek(lx);
    if (c == -1) {
      if (close) {
        fail(lx, "missing '%c' at the end", close);
        return 0;
      }
      return 1;
    }
    if (close && c == close) {
      lx->p++;
      return 1;
    }
    if (!field(lx, m))
      return 0;
    if (!accept(lx, ','))
      accept(lx, ';');
  }
}

int sf_text_to_binary(const char *text, size_t len, uint8_t **out, size_t *out_len, char *err,
                      size_t errcap) {
  lexer lx = {text, text + len, 1, err, errcap, 0};
  if (errcap)
    err[0] = 0;
  ProtobufCMessage *m = new_msg(&simfuzz__scenario__descriptor);
  if (!m)
    return -1;
  int ok = parse_msg(&lx, m, 0);
  int rc = -1;
  if (ok) {
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(n ? n : 1);
    if (b) {
      protobuf_c_message_pack(m, b);
      *out = b;
      *out_len = n;
      rc = 0;
    }
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

int sf_looks_like_text(const uint8_t *data, size_t len) {
  size_t i = 0;
  while (i < len && (isspace(data[i]) || data[i] == '#')) {
    if (data[i] == '#')
      while (i < len && data[i] != '\n')
        i++;
    else
      i++;
  }
  if (i == len || !(isalpha(data[i]) || data[i] == '_'))
    return 0;
  for (size_t k = 0; k < len; k++)
    if (data[k] == 0 || (data[k] < 0x20 && !isspace(data[k])))
      return 0;
  return 1;
}
