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
  sim_trace_format_payload(w, r, payload, len, e->text, sizeof e->text); /* output lines whole */
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

/* One Chrome trace event: its phase, track (tid) and time; the caller adds
 * the rest of its fields and closes it. */
static void chrome_event(cli_json *j, const char *ph, int tid, uint64_t ns) {
  cj_newline(j);
  cj_obj(j);
  cj_kstr(j, "ph", ph);
  cj_kint(j, "pid", 1);
  cj_kint(j, "tid", tid);
  cj_kmicros(j, "ts", ns);
}

/* A track's name (Chrome's thread_name metadata). */
static void chrome_track(cli_json *j, int tid, const char *name) {
  cj_newline(j);
  cj_obj(j);
  cj_kstr(j, "ph", "M");
  cj_kint(j, "pid", 1);
  cj_kint(j, "tid", tid);
  cj_kstr(j, "name", "thread_name");
  cj_kobj(j, "args");
  cj_kstr(j, "name", name);
  cj_end_obj(j);
  cj_end_obj(j);
}

/* A record as a Chrome event: an instant for a fault, a slice otherwise,
 * and the ends of a message's flow arrow (datagrams: a = id; streams: SEND
 * a = id, CONN_DATA b = id). */
static void chrome_record(cli_json *j, const ev *e, int nodes) {
  const sim_trace_rec *x = &e->r;
  int tid = x->node >= 0 && x->node < nodes ? x->node + 1 : nodes + 1;
  int fault = sim_ev_is_fault(x->kind);
  int msg = x->kind == SIM_EV_SEND || x->kind == SIM_EV_DELIVER || x->kind == SIM_EV_CONN_DATA;
  chrome_event(j, fault ? "i" : "X", tid, x->time);
  if (fault)
    cj_kstr(j, "s", x->kind == SIM_EV_FAIL || x->node < 0 ? "g" : "t");
  else
    cj_kint(j, "dur", 1);
  cj_kstr(j, "cat", fault ? "fault" : msg ? "message" : "event");
  cj_kstr(j, "name", sim_ev_name(x->kind));
  cj_kobj(j, "args");
  cj_kstr(j, "detail", detail(e));
  cj_end_obj(j);
  cj_end_obj(j);
  if (fault || !msg)
    return;
  chrome_event(j, x->kind == SIM_EV_SEND ? "s" : "f", tid, x->time);
  if (x->kind != SIM_EV_SEND)
    cj_kstr(j, "bp", "e");
  cj_key(j, "id");
  cj_uint(j, x->kind == SIM_EV_CONN_DATA ? x->b : x->a);
  cj_kstr(j, "cat", "message");
  cj_kstr(j, "name", "message");
  cj_end_obj(j);
}

static int write_chrome(const char *path, const evlist *l, int nodes, const sf_result *r) {
  char tmp[4300], hash[17], proc[300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  snprintf(hash, sizeof hash, "%016" PRIx64, r->hash);
  snprintf(proc, sizeof proc, "simfuzz %s", cli_target->name);
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
  cj_kstr(&j, "displayTimeUnit", "ms");
  cj_kobj(&j, "otherData");
  cj_kstr(&j, "target", cli_target->name);
  cj_kstr(&j, "trace_hash", hash);
  cj_end_obj(&j);
  cj_karr(&j, "traceEvents");
  cj_newline(&j);
  cj_obj(&j);
  cj_kstr(&j, "ph", "M");
  cj_kint(&j, "pid", 1);
  cj_kstr(&j, "name", "process_name");
  cj_kobj(&j, "args");
  cj_kstr(&j, "name", proc);
  cj_end_obj(&j);
  cj_end_obj(&j);
  for (int i = 0; i < nodes; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%d", i);
    chrome_track(&j, i + 1, name);
  }
  chrome_track(&j, nodes + 1, "world");
  for (size_t i = 0; i < l->n; i++)
    chrome_record(&j, &l->v[i], nodes);
  cj_newline(&j);
  cj_end_arr(&j);
  cj_end_obj(&j);
  fputc('\n', f);
  SIM_ASSERT(j.depth == 0);
  return cli_commit(f, tmp, path);
}

extern const char sf_trace_html_head[], sf_trace_html_tail[];

/* The page's facts about the run: target, input, nodes, hash, records
 * dropped, and the failure if any. */
static void html_header(cli_json *j, const char *input, int nodes, const evlist *l,
                        const sf_result *r) {
  char hash[17];
  snprintf(hash, sizeof hash, "%016" PRIx64, r->hash);
  cj_kstr(j, "target", cli_target->name);
  cj_kstr(j, "input", input);
  cj_kint(j, "nodes", nodes);
  cj_kstr(j, "hash", hash);
  cj_key(j, "dropped");
  cj_uint(j, l->dropped);
  cj_kint(j, "failed", r->failed);
  if (!r->failed)
    return;
  char fl[600];
  snprintf(fl, sizeof fl, "%s '%s' at t=%" PRIu64 ".%06us: %s",
           r->failure.is_liveness ? "liveness" : "invariant",
           r->failure.name ? r->failure.name : "?", r->failure.time / 1000000000u,
           (unsigned)(r->failure.time % 1000000000u / 1000u), r->failure.message);
  cj_kstr(j, "failure", fl);
  cj_kint(j, "failure_node", r->failure.node);
}

static int write_html(const char *path, const char *input, const evlist *l, int nodes,
                      const sf_scenario *s, const sf_result *r) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  fputs(sf_trace_html_head, f);
  fputs("<script>\nconst SIMFUZZ = ", f);
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
  html_header(&j, input, nodes, l, r);
  cj_karr(&j, "drawn"); /* the kinds the timeline draws (SIM_EV_KINDS) */
  for (unsigned k = 1; k < SIM_EV__COUNT; k++)
    if (sim_ev_drawn(k))
      cj_str(&j, sim_ev_name(k));
  cj_end_arr(&j);
  cj_karr(&j, "steps"); /* [time in us, description] */
  for (uint32_t i = 0; i < r->nexec; i++) {
    char d[256];
    sf_step_describe(&s->steps[r->exec_step[i]], nodes, d, sizeof d);
    cj_arr(&j);
    cj_micros(&j, r->exec_time[i]);
    cj_str(&j, d);
    cj_end_arr(&j);
  }
  cj_end_arr(&j);
  cj_newline(&j);
  cj_karr(&j, "events"); /* [time in us, kind, node, peer, a, b, reason, detail] */
  for (size_t i = 0; i < l->n; i++) {
    const sim_trace_rec *x = &l->v[i].r;
    cj_newline(&j);
    cj_arr(&j);
    cj_micros(&j, x->time);
    cj_str(&j, sim_ev_name(x->kind));
    cj_int(&j, x->node);
    cj_int(&j, x->peer);
    cj_uint(&j, x->a);
    cj_uint(&j, x->b);
    cj_int(&j, x->reason);
    cj_str(&j, detail(&l->v[i]));
    cj_end_arr(&j);
  }
  cj_end_arr(&j);
  cj_end_obj(&j);
  SIM_ASSERT(j.depth == 0);
  fputs(";\n</script>\n", f);
  fputs(sf_trace_html_tail, f);
  return cli_commit(f, tmp, path);
}

#define HELP_TRACE                                                                                 \
  "trace FILE : export a run as a Chrome trace or a space-time diagram\n\n"                        \
  "SYNOPSIS\n"                                                                                     \
  "  trace FILE [--chrome OUT.json] [--html OUT.html]\n\n"                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Runs FILE and writes:\n"                                                                      \
  "  --chrome OUT.json  Chrome trace-event JSON (open it in Perfetto or chrome://tracing):\n"      \
  "                     a track per node, flow arrows from each send to its delivery,\n"           \
  "                     instant events for faults and the failure\n"                               \
  "  --html OUT.html    one self-contained page with a space-time diagram: a line per node,\n"     \
  "                     an arrow per message, drops, duplicates, resets, partitions, crashes\n"    \
  "                     and restarts marked, the failure highlighted; hover for details\n\n"       \
  "EXIT STATUS\n"                                                                                  \
  "  0 written (the run may fail; the export shows it), 2 bad input or usage\n"

static int cmd_trace(int argc, char **argv) {
  const char *chrome = NULL, *html = NULL;
  const cli_opt opts[] = {CLI_STR("--chrome", NULL, &chrome), CLI_STR("--html", NULL, &html),
                          CLI_END};
  const char *in;
  if (cli_parse_one("trace", argc, argv, opts, &in) < 0)
    return EXIT_USAGE;
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
  sf_result r;
  cli_run_traced(s, collect, &l, &r);
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

const cli_command cli_cmd_trace = {"trace", cmd_trace, 1, HELP_TRACE};
