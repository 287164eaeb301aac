/* The command line's one option parser and command table type (cli.h). */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int is_name(const cli_opt *o, const char *a) {
  return !strcmp(a, o->name) || (o->alias && !strcmp(a, o->alias));
}

static const cli_opt *find(const cli_opt *opts, const char *a) {
  for (const cli_opt *o = opts; o->name; o++)
    if (is_name(o, a))
      return o;
  return NULL;
}

/* A decimal within the option's bounds; 0, or -1 after printing why. */
static int number(const char *cmd, const cli_opt *o, const char *v, uint64_t *x) {
  if (cli_parse_u64(v, x) == 0 && *x >= o->min && (!o->max || *x <= o->max))
    return 0;
  if (o->max)
    return cli_error("%s: %s wants a number from %" PRIu64 " to %" PRIu64 ", not '%s'", cmd,
                     o->name, o->min, o->max, v),
           -1;
  return cli_error("%s: %s wants a number of at least %" PRIu64 ", not '%s'", cmd, o->name, o->min,
                   v),
         -1;
}

/* Store one option's value; 0, or -1 after printing why. */
static int store(const char *cmd, const cli_opt *o, const char *v) {
  uint64_t x;
  char *end;
  switch (o->kind) {
  case CLI_OPT_FLAG: *(int *)o->dst = 1; return 0;
  case CLI_OPT_STR: *(const char **)o->dst = v; return 0;
  case CLI_OPT_U64:
    if (number(cmd, o, v, &x) < 0)
      return -1;
    *(uint64_t *)o->dst = x;
    return 0;
  case CLI_OPT_U32:
    SIM_ASSERT(o->max && o->max <= UINT32_MAX);
    if (number(cmd, o, v, &x) < 0)
      return -1;
    *(uint32_t *)o->dst = (uint32_t)x;
    return 0;
  case CLI_OPT_SECONDS: {
    double d = strtod(v, &end);
    if (end == v || *end || !(d > 0 && d < 1e7))
      return cli_error("%s: bad %s '%s' (seconds)", cmd, o->name, v), -1;
    *(double *)o->dst = d;
    return 0;
  }
  case CLI_OPT_TIME:
    if (cli_parse_time(v, (uint64_t *)o->dst) < 0)
      return cli_error("%s: bad time '%s' for %s (e.g. 1.5, 300ms, 20us)", cmd, v, o->name), -1;
    return 0;
  case CLI_OPT_RANGE:
    if (cli_parse_range(v, &((uint64_t *)o->dst)[0], &((uint64_t *)o->dst)[1]) < 0)
      return cli_error("%s: bad range '%s' for %s (want A-B)", cmd, v, o->name), -1;
    return 0;
  case CLI_OPT_FN: return o->fn(cmd, v, o->dst) < 0 ? -1 : 0;
  case CLI_OPT_LIMITS: break; /* parsed by cli_limit_option */
  }
  SIM_ASSERT(!"cli_opt: a kind without a store");
  return -1;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts) {
  int npos = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const cli_opt *o = a[0] == '-' && a[1] ? find(opts, a) : NULL;
    if (o && o->kind == CLI_OPT_LIMITS) {
      if (cli_limit_option(argc, argv, &i) < 0)
        return -1;
      continue;
    }
    if (!o && a[0] == '-' && a[1])
      return cli_error("%s: unknown option '%s' (see: %s help %s)", cmd, a, cli_prog, cmd), -1;
    if (!o) { /* positional: kept, in order */
      argv[npos++] = argv[i];
      continue;
    }
    const char *v = NULL;
    if (o->kind != CLI_OPT_FLAG) {
      if (i + 1 >= argc)
        return cli_error("%s: %s needs a value", cmd, a), -1;
      v = argv[++i];
    }
    if (store(cmd, o, v) < 0)
      return -1;
  }
  SIM_ASSERT(npos <= argc);
  return npos;
}

int cli_parse_one(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **in) {
  int npos = cli_parse(cmd, argc, argv, opts);
  if (npos > 1)
    return cli_error("%s: more than one input", cmd), -1;
  *in = npos == 1 ? argv[0] : NULL;
  return npos < 0 ? -1 : 0;
}

int cli_parse_in_out(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **in,
                     const char *const *out, const char *what) {
  if (cli_parse_one(cmd, argc, argv, opts, in) < 0)
    return -1;
  if (!*in || !*out)
    return cli_error("%s: usage: %s %s %s -o OUT", cmd, cli_prog, cmd, what), -1;
  if (cli_same_file(*in, *out))
    return cli_error("%s: refusing to overwrite the input %s", cmd, *in), -1;
  return 0;
}

int cli_parse_none(const char *cmd, int argc, char **argv, const cli_opt *opts) {
  int npos = cli_parse(cmd, argc, argv, opts);
  if (npos > 0)
    return cli_error("%s: unknown argument '%s' (see: %s help %s)", cmd, argv[0], cli_prog, cmd),
           -1;
  return npos < 0 ? -1 : 0;
}

void cli_run_traced(const sf_scenario *s, sim_trace_fn fn, void *ctx, sf_result *r) {
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.trace = fn;
  o.trace_ctx = ctx;
  SIM_ASSERT(cli_target != NULL);
  sf_run(cli_target, s, &o, r);
}

const char *cli_help_line(const cli_command *c, size_t *usage_len, const char **desc,
                          size_t *desc_len) {
  const char *h = c->help, *nl = strchr(h, '\n'), *sep = strstr(h, " : ");
  if (!nl)
    nl = h + strlen(h);
  if (!sep || sep > nl)
    sep = nl;
  *usage_len = (size_t)(sep - h);
  *desc = sep == nl ? nl : sep + 3;
  *desc_len = (size_t)(nl - *desc);
  SIM_ASSERT(*usage_len <= strlen(h));
  return h;
}
