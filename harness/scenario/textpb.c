/* Protobuf text format for scenarios, generic over protobuf-c descriptors:
 * the printer writes what `protoc --decode` writes, the parser reads what
 * `protoc --encode` reads (fields by name, nested messages in {} or <>,
 * repeated scalars one by one or as [a, b], strings with C escapes,
 * # comments). protobuf-c has no text format of its own. */
#include "textpb.h"

#include "scenario.pb-c.h"

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

/* ---- parsing -------------------------------------------------------------
 *
 * The lexical rules are protoc's (protobuf 3.21's TextFormat and
 * Tokenizer), checked against `protoc --encode` by tests/test_textpb.c and
 * the textpb fuzzer:
 *   - integers: decimal, 0x/0X hex, or octal after a leading 0 (8 and 9 are
 *     errors there); no sign for unsigned fields; "-" (spaces allowed after
 *     it) for signed ones; out of range is an error, never a wrap;
 *   - booleans: true, True, t, false, False, f, or the integers 0 and 1;
 *   - strings: adjacent literals concatenate; escapes \a \b \f \n \r \t \v
 *     \\ \? \' \", octal \ooo (one to three digits, the low 8 bits kept),
 *     \x with one or two hex digits, \uXXXX and \UXXXXXXXX (UTF-8); any
 *     other escape, a \x without digits and a newline are errors;
 *   - a non-repeated field given twice, or two members of one oneof, is an
 *     error; fields end with an optional ',' or ';'; messages are {...} or
 *     <...>, with an optional ':' before them; repeated fields also take
 *     [a, b] lists.
 * Every buffer grows geometrically: parsing is linear in the text. */

enum { TK_END, TK_IDENT, TK_INT, TK_FLOAT, TK_STRING, TK_SYM };

typedef struct {
  int kind;
  const char *s; /* the token's text */
  size_t n;
  int line;
} token;

typedef struct {
  const char *p, *end;
  int line;
  token tok; /* the current token (one of lookahead) */
  char *err;
  size_t errcap;
  int failed;
} lexer;

static void fail(lexer *lx, const char *fmt, ...) {
  if (lx->failed)
    return;
  lx->failed = 1;
  int k = snprintf(lx->err, lx->errcap, "line %d: ", lx->tok.line ? lx->tok.line : lx->line);
  va_list ap;
  va_start(ap, fmt);
  if (k >= 0 && (size_t)k < lx->errcap)
    vsnprintf(lx->err + k, lx->errcap - (size_t)k, fmt, ap);
  va_end(ap);
}

static int is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(int c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}
static int is_hex(int c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int hex_val(int c) {
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Read the next token into lx->tok. */
static void next(lexer *lx) {
  for (;;) { /* whitespace and # comments */
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r' ||
                               *lx->p == '\n' || *lx->p == '\v' || *lx->p == '\f')) {
      if (*lx->p == '\n')
        lx->line++;
      lx->p++;
    }
    if (lx->p < lx->end && *lx->p == '#') {
      while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
      continue;
    }
    break;
  }
  token *t = &lx->tok;
  t->s = lx->p;
  t->line = lx->line;
  if (lx->p >= lx->end) {
    t->kind = TK_END;
    t->n = 0;
    return;
  }
  int c = (unsigned char)*lx->p;
  if (is_ident_start(c)) {
    while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
      lx->p++;
    t->kind = TK_IDENT;
  } else if ((c >= '0' && c <= '9') ||
             (c == '.' && lx->p + 1 < lx->end && lx->p[1] >= '0' && lx->p[1] <= '9')) {
    int fl = 0;
    if (c == '0' && lx->p + 1 < lx->end && (lx->p[1] == 'x' || lx->p[1] == 'X')) {
      lx->p += 2;
      if (lx->p >= lx->end || !is_hex((unsigned char)*lx->p)) {
        t->n = (size_t)(lx->p - t->s);
        fail(lx, "\"0x\" must be followed by hex digits");
      }
      while (lx->p < lx->end && is_hex((unsigned char)*lx->p))
        lx->p++;
    } else {
      while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9')
        lx->p++;
      if (lx->p < lx->end && *lx->p == '.') {
        fl = 1;
        lx->p++;
        while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9')
          lx->p++;
      }
      if (lx->p < lx->end && (*lx->p == 'e' || *lx->p == 'E')) {
        fl = 1;
        lx->p++;
        if (lx->p < lx->end && (*lx->p == '+' || *lx->p == '-'))
          lx->p++;
        while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9')
          lx->p++;
      }
      if (lx->p < lx->end && (*lx->p == 'f' || *lx->p == 'F')) {
        fl = 1;
        lx->p++;
      }
      if (!fl && c == '0')
        for (const char *q = t->s; q < lx->p; q++)
          if (*q == '8' || *q == '9') {
            fail(lx, "numbers starting with leading zero must be in octal");
            break;
          }
    }
    if (lx->p < lx->end && is_ident_start((unsigned char)*lx->p))
      fail(lx, "need space between number and identifier");
    t->kind = fl ? TK_FLOAT : TK_INT;
  } else if (c == '"' || c == '\'') {
    lx->p++;
    while (lx->p < lx->end && *lx->p != c) {
      if (*lx->p == '\n') {
        fail(lx, "string literals cannot cross line boundaries");
        break;
      }
      if (*lx->p == '\\' && lx->p + 1 < lx->end)
        lx->p++;
      lx->p++;
    }
    if (lx->p >= lx->end)
      fail(lx, "unterminated string");
    else
      lx->p++;
    t->kind = TK_STRING;
  } else {
    lx->p++;
    t->kind = TK_SYM;
  }
  t->n = (size_t)(lx->p - t->s);
}

static int is_sym(const lexer *lx, char c) {
  return lx->tok.kind == TK_SYM && lx->tok.s[0] == c;
}

static int accept(lexer *lx, char c) {
  if (!is_sym(lx, c))
    return 0;
  next(lx);
  return 1;
}

/* What the current token is, for messages. */
static const char *tok_text(const lexer *lx, char *buf, size_t cap) {
  if (lx->tok.kind == TK_END)
    return "end of input";
  size_t n = lx->tok.n < cap - 1 ? lx->tok.n : cap - 1;
  memcpy(buf, lx->tok.s, n);
  buf[n] = 0;
  return buf;
}

/* A growable byte buffer (doubling). */
typedef struct {
  uint8_t *b;
  size_t n, cap;
} bytes_buf;

static int put_byte(bytes_buf *bb, uint8_t c) {
  if (bb->n == bb->cap) {
    size_t cap = bb->cap ? bb->cap * 2 : 32;
    uint8_t *nb = realloc(bb->b, cap);
    if (!nb)
      return -1;
    bb->b = nb;
    bb->cap = cap;
  }
  bb->b[bb->n++] = c;
  return 0;
}

static int put_utf8(bytes_buf *bb, uint32_t cp) {
  if (cp < 0x80)
    return put_byte(bb, (uint8_t)cp);
  if (cp < 0x800)
    return put_byte(bb, (uint8_t)(0xc0 | cp >> 6)) | put_byte(bb, (uint8_t)(0x80 | (cp & 0x3f)));
  if (cp < 0x10000)
    return put_byte(bb, (uint8_t)(0xe0 | cp >> 12)) |
           put_byte(bb, (uint8_t)(0x80 | (cp >> 6 & 0x3f))) |
           put_byte(bb, (uint8_t)(0x80 | (cp & 0x3f)));
  return put_byte(bb, (uint8_t)(0xf0 | (cp >> 18 & 0x07))) |
         put_byte(bb, (uint8_t)(0x80 | (cp >> 12 & 0x3f))) |
         put_byte(bb, (uint8_t)(0x80 | (cp >> 6 & 0x3f))) |
         put_byte(bb, (uint8_t)(0x80 | (cp & 0x3f)));
}

/* Decode the string literal of the current token (quotes included). */
static int decode_string(lexer *lx, bytes_buf *bb) {
  const char *p = lx->tok.s + 1, *end = lx->tok.s + lx->tok.n - 1;
  while (p < end) {
    int c = (unsigned char)*p++;
    if (c != '\\') {
      if (put_byte(bb, (uint8_t)c))
        return fail(lx, "out of memory"), 0;
      continue;
    }
    int e = p < end ? (unsigned char)*p++ : 0;
    uint32_t v = 0;
    switch (e) {
    case 'a': v = 7; break;
    case 'b': v = 8; break;
    case 'f': v = 12; break;
    case 'n': v = '\n'; break;
    case 'r': v = '\r'; break;
    case 't': v = '\t'; break;
    case 'v': v = 11; break;
    case '\\':
    case '?':
    case '\'':
    case '"': v = (uint32_t)e; break;
    case 'x':
    case 'X': {
      int k = 0;
      while (k < 2 && p < end && is_hex((unsigned char)*p))
        v = v * 16 + (uint32_t)hex_val((unsigned char)*p++), k++;
      if (!k)
        return fail(lx, "expected hex digits for escape sequence"), 0;
      break;
    }
    case 'u':
    case 'U': {
      int want = e == 'u' ? 4 : 8, k = 0;
      while (k < want && p < end && is_hex((unsigned char)*p))
        v = v * 16 + (uint32_t)hex_val((unsigned char)*p++), k++;
      if (k < want || v > 0x10ffff)
        return fail(lx, "expected %d hex digits for a \\%c escape", want, e), 0;
      if (put_utf8(bb, v))
        return fail(lx, "out of memory"), 0;
      continue;
    }
    default:
      if (e >= '0' && e <= '7') {
        v = (uint32_t)(e - '0');
        for (int k = 1; k < 3 && p < end && *p >= '0' && *p <= '7'; k++)
          v = v * 8 + (uint32_t)(*p++ - '0');
        v &= 0xff;
        break;
      }
      return fail(lx, "invalid escape sequence in string literal"), 0;
    }
    if (put_byte(bb, (uint8_t)v))
      return fail(lx, "out of memory"), 0;
  }
  return 1;
}

/* One or more adjacent string literals. */
static int string_value(lexer *lx, bytes_buf *bb) {
  if (lx->tok.kind != TK_STRING) {
    char b[64];
    fail(lx, "expected a string, got: %s", tok_text(lx, b, sizeof b));
    return 0;
  }
  while (lx->tok.kind == TK_STRING && !lx->failed) {
    if (!decode_string(lx, bb))
      return 0;
    next(lx);
  }
  return !lx->failed;
}

/* The value of an integer token (decimal, hex or octal); -1 if it does not
 * fit 64 bits. */
static int int_value(const token *t, uint64_t *v) {
  const char *p = t->s, *end = t->s + t->n;
  unsigned base = 10;
  if (t->n > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  } else if (t->n > 1 && p[0] == '0') {
    base = 8;
  }
  uint64_t x = 0;
  for (; p < end; p++) {
    unsigned d = (unsigned)hex_val((unsigned char)*p);
    if (x > (UINT64_MAX - d) / base)
      return -1;
    x = x * base + d;
  }
  *v = x;
  return 0;
}

static int is_signed(ProtobufCType t) {
  return t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
         t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_INT64 ||
         t == PROTOBUF_C_TYPE_SINT64 || t == PROTOBUF_C_TYPE_SFIXED64 || t == PROTOBUF_C_TYPE_ENUM;
}

/* An integer for field fd: [-]INT, the sign only for signed types. */
static int integer(lexer *lx, const ProtobufCFieldDescriptor *fd, int *neg, uint64_t *mag) {
  char b[64];
  *neg = 0;
  if (is_sym(lx, '-') && is_signed(fd->type)) {
    *neg = 1;
    next(lx);
  }
  if (lx->tok.kind != TK_INT) {
    fail(lx, "expected integer, got: %s", tok_text(lx, b, sizeof b));
    return 0;
  }
  if (int_value(&lx->tok, mag) != 0) {
    fail(lx, "integer out of range (%s)", tok_text(lx, b, sizeof b));
    return 0;
  }
  return 1;
}

static int parse_msg(lexer *lx, ProtobufCMessage *m, char close, int depth);

static int range_error(lexer *lx, int neg, uint64_t v) {
  fail(lx, "integer out of range (%s%" PRIu64 ")", neg ? "-" : "", v);
  return 0;
}

/* Store one scalar of field fd at dst. */
static int scalar(lexer *lx, const ProtobufCFieldDescriptor *fd, void *dst) {
  char b[64];
  if (fd->type == PROTOBUF_C_TYPE_BYTES || fd->type == PROTOBUF_C_TYPE_STRING) {
    bytes_buf bb = {NULL, 0, 0};
    if (!string_value(lx, &bb) || put_byte(&bb, 0)) { /* NUL-terminated for strings */
      free(bb.b);
      return 0;
    }
    if (fd->type == PROTOBUF_C_TYPE_BYTES) {
      ProtobufCBinaryData *bd = dst;
      free(bd->data);
      bd->data = bb.b;
      bd->len = bb.n - 1;
    } else {
      free(*(char **)dst);
      *(char **)dst = (char *)bb.b;
    }
    return 1;
  }
  if (fd->type == PROTOBUF_C_TYPE_BOOL && lx->tok.kind == TK_IDENT) {
    const char *names[] = {"true", "True", "t", "false", "False", "f"};
    for (int i = 0; i < 6; i++)
      if (strlen(names[i]) == lx->tok.n && !memcmp(names[i], lx->tok.s, lx->tok.n)) {
        *(protobuf_c_boolean *)dst = i < 3;
        next(lx);
        return 1;
      }
    fail(lx, "invalid value for boolean field \"%s\": %s", fd->name, tok_text(lx, b, sizeof b));
    return 0;
  }
  if (fd->type == PROTOBUF_C_TYPE_ENUM && lx->tok.kind == TK_IDENT) {
    char name[128];
    tok_text(lx, name, sizeof name);
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value_by_name(fd->descriptor, name);
    if (!ev) {
      fail(lx, "unknown enumeration value \"%s\" for field \"%s\"", name, fd->name);
      return 0;
    }
    *(int *)dst = ev->value;
    next(lx);
    return 1;
  }
  int neg;
  uint64_t v;
  if (!integer(lx, fd, &neg, &v))
    return 0;
  next(lx);
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_ENUM:
    if (v > (neg ? 2147483648ull : 2147483647ull))
      return range_error(lx, neg, v);
    *(int32_t *)dst = neg ? (int32_t)(0 - v) : (int32_t)v;
    return 1;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    if (v > UINT32_MAX)
      return range_error(lx, neg, v);
    *(uint32_t *)dst = (uint32_t)v;
    return 1;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    if (v > (neg ? 9223372036854775808ull : 9223372036854775807ull))
      return range_error(lx, neg, v);
    *(int64_t *)dst = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: *(uint64_t *)dst = v; return 1;
  case PROTOBUF_C_TYPE_BOOL:
    if (v > 1)
      return range_error(lx, neg, v);
    *(protobuf_c_boolean *)dst = (protobuf_c_boolean)v;
    return 1;
  default: fail(lx, "field %s: unsupported type", fd->name); return 0;
  }
}

static ProtobufCMessage *new_msg(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (m)
    protobuf_c_message_init(d, m);
  return m;
}

enum { MAX_DEPTH = 32 };

/* One value (scalar or {message}) of field fd into dst. */
static int value(lexer *lx, const ProtobufCFieldDescriptor *fd, void *dst, int depth) {
  if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
    return scalar(lx, fd, dst);
  char open = is_sym(lx, '{') ? '{' : is_sym(lx, '<') ? '<' : 0;
  if (!open) {
    char b[64];
    fail(lx, "expected \"{\" after %s, got: %s", fd->name, tok_text(lx, b, sizeof b));
    return 0;
  }
  if (depth >= MAX_DEPTH) {
    fail(lx, "messages nested too deeply");
    return 0;
  }
  next(lx);
  ProtobufCMessage **slot = dst;
  if (!*slot && !(*slot = new_msg(fd->descriptor))) {
    fail(lx, "out of memory");
    return 0;
  }
  return parse_msg(lx, *slot, open == '{' ? '}' : '>', depth + 1);
}

/* Room for one more element of a repeated field (capacity doubles; the
 * element count stays exact for protobuf-c). */
static void *grow(char **arr, size_t n, size_t es) {
  if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) { /* capacity 4, 8, 16, ...: full */
    size_t cap = n ? n * 2 : 4;
    char *na = realloc(*arr, cap * es);
    if (!na)
      return NULL;
    *arr = na;
  }
  memset(*arr + n * es, 0, es);
  return *arr + n * es;
}

static int field(lexer *lx, ProtobufCMessage *m, uint8_t *seen, int depth) {
  char name[128], b[64];
  if (lx->tok.kind != TK_IDENT) {
    fail(lx, "expected a field name, got: %s", tok_text(lx, b, sizeof b));
    return 0;
  }
  tok_text(lx, name, sizeof name);
  const ProtobufCFieldDescriptor *fd =
      lx->tok.n < sizeof name ? protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name)
                              : NULL;
  if (!fd) {
    fail(lx, "message type \"%s\" has no field named \"%s\"", m->descriptor->name, name);
    return 0;
  }
  next(lx);
  char *base = (char *)m;
  size_t idx = (size_t)(fd - m->descriptor->fields);
  int colon = accept(lx, ':');
  if (fd->type != PROTOBUF_C_TYPE_MESSAGE && !colon) {
    fail(lx, "expected \":\" after %s, got: %s", name, tok_text(lx, b, sizeof b));
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
      void *slot = grow(arr, *n, es);
      if (!slot) {
        fail(lx, "out of memory");
        return 0;
      }
      (*n)++;
      if (!value(lx, fd, slot, depth))
        return 0;
    } while (list && accept(lx, ','));
    if (list && !accept(lx, ']')) {
      fail(lx, "expected \"]\" after the list of %s, got: %s", name, tok_text(lx, b, sizeof b));
      return 0;
    }
    return 1;
  }
  if (seen[idx]) {
    fail(lx, "non-repeated field \"%s\" is specified multiple times", name);
    return 0;
  }
  seen[idx] = 1;
  if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    uint32_t *cs = (uint32_t *)(base + fd->quantifier_offset);
    if (*cs && *cs != fd->id) {
      fail(lx, "field \"%s\" is specified along with another member of its oneof", name);
      return 0;
    }
    *cs = fd->id;
  }
  return value(lx, fd, base + fd->offset, depth);
}

static int parse_msg(lexer *lx, ProtobufCMessage *m, char close, int depth) {
  uint8_t *seen = calloc(m->descriptor->n_fields ? m->descriptor->n_fields : 1, 1);
  if (!seen) {
    fail(lx, "out of memory");
    return 0;
  }
  int ok = 0;
  for (;;) {
    if (lx->failed)
      break;
    if (lx->tok.kind == TK_END) {
      if (close)
        fail(lx, "reached end of input in a message (missing \"%c\")", close);
      else
        ok = 1;
      break;
    }
    if (close && is_sym(lx, close)) {
      next(lx);
      ok = 1;
      break;
    }
    if (!field(lx, m, seen, depth))
      break;
    if (!accept(lx, ','))
      accept(lx, ';');
  }
  free(seen);
  return ok && !lx->failed;
}

int sf_text_to_binary(const char *text, size_t len, uint8_t **out, size_t *out_len, char *err,
                      size_t errcap) {
  lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.p = text;
  lx.end = text + len;
  lx.line = 1;
  lx.err = err;
  lx.errcap = errcap;
  if (errcap)
    err[0] = 0;
  ProtobufCMessage *m = new_msg(&simfuzz__scenario__descriptor);
  if (!m) {
    fail(&lx, "out of memory");
    return -1;
  }
  next(&lx);
  int ok = parse_msg(&lx, m, 0, 0);
  int rc = -1;
  if (ok) {
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(n ? n : 1);
    if (b) {
      protobuf_c_message_pack(m, b);
      *out = b;
      *out_len = n;
      rc = 0;
    } else {
      fail(&lx, "out of memory");
    }
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}
