/* simfuzz trace: Chrome trace-event JSON and a self-contained HTML
 * space-time diagram of one run. */
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPORT 50000 /* records kept (the last ones: the failure stays) */

typedef struct {
  sim_trace_rec r;
  char text[200]; /* the formatted timeline line */
} ev;

typedef struct {
  ev *v;
  size_t n, cap, dropped;
} evlist;

static void collect(void *ctx, const sim_world *w, const sim_trace_rec *r, const void *payload,
                    size_t len) {
  evlist *l = ctx;
  (void)payload;
  (void)len;
  if (l->n == l->cap) {
    if (l->cap >= MAX_EXPORT) { /* keep the latest: drop the oldest half */
      size_t half = l->n / 2;
      memmove(l->v, l->v + half, (l->n - half) * sizeof *l->v);
      l->n -= half;
      l->dropped += half;
    } else {
      size_t cap = l->cap ? l->cap * 2 : 4096;
      ev *nv = realloc(l->v, cap * sizeof *nv);
      if (!nv)
        return;
      l->v = nv;
      l->cap = cap;
    }
  }
  ev *e = &l->v[l->n++];
  e->r = *r;
  sim_trace_format(w, r, e->text, sizeof e->text);
}

/* The text after the fixed "time node kind" columns of a timeline line. */
static const char *detail(const ev *e) {
  const char *p = e->text;
  for (int field = 0; field < 3 && *p; field++) {
    while (*p == ' ')
      p++;
    while (*p && *p != ' ')
      p++;
  }
  while (*p == ' ')
    p++;
  return p;
}

static double us(uint64_t ns) {
  return (double)ns / 1000.0;
} /* export formatting only */

static int write_chrome(const char *path, const evlist *l, int nodes, const sf_result *r) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"target\":\"");
  cli_json_str(f, cli_target->name);
  fprintf(f, "\",\"trace_hash\":\"%016" PRIx64 "\"},\"traceEvents\":[\n", r->hash);
  fprintf(f,
          "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"simfuzz %s\"}}",
          cli_target->name);
  for (int i = 0; i < nodes; i++)
    fprintf(f,
            ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"n%"
            "d\"}}",
            i + 1, i);
  fprintf(f,
          ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":"
          "\"world\"}}",
          nodes + 1);
  for (size_t i = 0; i < l->n; i++) {
    const sim_trace_rec *x = &l->v[i].r;
    int tid = x->node >= 0 && x->node < nodes ? x->node + 1 : nodes + 1;
    const char *kind = sim_ev_name(x->kind);
    if (sim_ev_is_fault(x->kind)) {
      fprintf(f,
              ",\n{\"ph\":\"i\",\"s\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"cat\":\"fault\","
              "\"name\":\"",
              x->kind == SIM_EV_FAIL || x->node < 0 ? "g" : "t", tid, us(x->time));
      cli_json_str(f, kind);
      fprintf(f, "\",\"args\":{\"detail\":\"");
      cli_json_str(f, detail(&l->v[i]));
      fprintf(f, "\"}}");
      continue;
    }
    fprintf(
        f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":1,\"cat\":\"%s\",\"name\":\"",
        tid, us(x->time),
        x->kind == SIM_EV_SEND || x->kind == SIM_EV_DELIVER || x->kind == SIM_EV_CONN_DATA
            ? "message"
            : "event");
    cli_json_str(f, kind);
    fprintf(f, "\",\"args\":{\"detail\":\"");
    cli_json_str(f, detail(&l->v[i]));
    fprintf(f, "\"}}");
    /* flow arrows: send -> deliver (datagrams: a = id; streams: SEND a = id,
     * CONN_DATA b = id) */
    uint64_t id = x->kind == SIM_EV_CONN_DATA ? x->b : x->a;
    if (x->kind == SIM_EV_SEND)
      fprintf(f,
              ",\n{\"ph\":\"s\",\"id\":%" PRIu64
              ",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"cat\":\"message\",\"name\":\"message\"}",
              id, tid, us(x->time));
    else if (x->kind == SIM_EV_DELIVER || x->kind == SIM_EV_CONN_DATA)
      fprintf(f,
              ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
              ",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"cat\":\"message\",\"name\":\"message\"}",
              id, tid, us(x->time));
  }
  fprintf(f, "\n]}\n");
  return cli_commit(f, tmp, path);
}

extern const char sf_trace_html_head[], sf_trace_html_tail[];

static int write_html(const char *path, const char *input, const evlist *l, int nodes,
                      const sf_scenario *s, const sf_result *r) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  fputs(sf_trace_html_head, f);
  fprintf(f, "<script>\nconst SIMFUZZ = {\"target\":\"");
  cli_json_str(f, cli_target->name);
  fprintf(f, "\",\"input\":\"");
  cli_json_str(f, input);
  fprintf(f, "\",\"nodes\":%d,\"hash\":\"%016" PRIx64 "\",\"dropped\":%zu,\"failed\":%d,", nodes,
          r->hash, l->dropped, r->failed);
  if (r->failed) {
    char fl[600];
    snprintf(fl, sizeof fl, "%s '%s'%s at t=%.6fs: %s",
             r->failure.is_liveness ? "liveness" : "invariant",
             r->failure.name ? r->failure.name : "?", "", (double)r->failure.time / 1e9,
             r->failure.message);
    fprintf(f, "\"failure\":\"");
    cli_json_str(f, fl);
    fprintf(f, "\",\"failure_node\":%d,", r->failure.node);
  }
  fprintf(f, "\"drawn\":["); /* the kinds the timeline draws (SIM_EV_KINDS) */
  for (unsigned k = 1, first = 1; k < SIM_EV__COUNT; k++)
    if (sim_ev_drawn(k)) {
      fprintf(f, "%s\"%s\"", first ? "" : ",", sim_ev_name(k));
      first = 0;
    }
  fprintf(f, "],\"steps\":[");
  for (uint32_t i = 0; i < r->nexec; i++) {
    char d[256];
    sf_step_describe(&s->steps[r->exec_step[i]], nodes, d, sizeof d);
    fprintf(f, "%s[%.3f,\"", i ? "," : "", us(r->exec_time[i]));
    cli_json_str(f, d);
    fprintf(f, "\"]");
  }
  fprintf(f, "],\n\"events\":[\n");
  for (size_t i = 0; i < l->n; i++) {
    const sim_trace_rec *x = &l->v[i].r;
    fprintf(f, "%s[%.3f,\"%s\",%d,%d,%" PRIu64 ",%" PRIu64 ",%u,\"", i ? ",\n" : "", us(x->time),
            sim_ev_name(x->kind), x->node, x->peer, x->a, x->b, (unsigned)x->reason);
    cli_json_str(f, detail(&l->v[i]));
    fprintf(f, "\"]");
  }
  fprintf(f, "]};\n</script>\n");
  fputs(sf_trace_html_tail, f);
  return cli_commit(f, tmp, path);
}

int cmd_trace(int argc, char **argv) {
  const char *in = NULL, *chrome = NULL, *html = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--chrome") && i + 1 < argc)
      chrome = argv[++i];
    else if (!strcmp(argv[i], "--html") && i + 1 < argc)
      html = argv[++i];
    else if (argv[i][0] == '-' && argv[i][1])
      return cli_error("trace: unknown option '%s' (see: %s help trace)", argv[i], cli_prog);
    else if (!in)
      in = argv[i];
    else
      return cli_error("trace: more than one input");
  }
  if (!in || (!chrome && !html))
    return cli_error("trace: usage: %s trace FILE [--chrome OUT.json] [--html OUT.html]", cli_prog);
  if ((chrome && cli_same_file(in, chrome)) || (html && cli_same_file(in, html)))
    return cli_error("trace: refusing to overwrite the input %s", in);
  sf_scenario *s = cli_new_scenario();
  cli_input_kind k;
  if (cli_load(in, s, &k, NULL) < 0) {
    free(s);
    return EXIT_USAGE;
  }
  evlist l = {0};
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.trace = collect;
  o.trace_ctx = &l;
  sf_result r;
  sf_run(cli_target, s, &o, &r);
  int rc = EXIT_OK;
  if (chrome && write_chrome(chrome, &l, r.nodes, &r) != 0)
    rc = EXIT_USAGE;
  if (html && write_html(html, in, &l, r.nodes, s, &r) != 0)
    rc = EXIT_USAGE;
  if (rc == EXIT_OK)
    printf("trace: %zu events%s%s%s%s%s\n", l.n, chrome ? " -> " : "", chrome ? chrome : "",
           html ? " -> " : "", html ? html : "", r.failed ? " (the run fails)" : "");
  free(l.v);
  free(s);
  return rc;
}
