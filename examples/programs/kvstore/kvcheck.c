/* kvcheck: end checks of the kvstore targets (simfuzz_add_program's
 * CHECKS), on the files the nodes leave. The primary's state on disk has
 * no hole: the snapshot's next sequence number ("S seq") and the log's
 * records after it follow on, one by one, as compaction and restarts keep
 * them (records the snapshot already holds may precede them: a crash
 * after the compaction's rename, before the log's truncation was
 * durable). A compaction whose rename was lost at a crash (KV_BUG_DIRSYNC)
 * leaves an old snapshot before a log that goes on from a newer one. */
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_program.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define FILE_MAX (256 * 1024)

static char text[FILE_MAX + 1];

/* The "S seq" line of the primary's snapshot (0: none). */
static unsigned long snap_seq(void *ctx, const sim_world *w) {
  int64_t n = sf_program_read_file(ctx, w, 0, "snap", text, FILE_MAX);
  unsigned long s = 0;
  text[n > 0 ? n : 0] = 0;
  for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (sscanf(l, "S %lu", &s) == 1)
      break;
  return s;
}

/* kvstore.c's record sum: a record that fails it is a damaged tail, which
 * the next boot cuts. */
static unsigned long record_sum(unsigned long seq, unsigned k, unsigned long v) {
  unsigned long h = 14695981039346656037ul, x[3] = {seq, k, v};
  for (int i = 0; i < 3; i++)
    h = (h ^ x[i]) * 1099511628211ul;
  return h & 0xfffffffful;
}

SF_ORACLE static void check_primary_log(void *ctx, sim_world *w) {
  unsigned long first = snap_seq(ctx, w) + 1, expect = first, seq, v, sum;
  unsigned k;
  int64_t n = sf_program_read_file(ctx, w, 0, "wal", text, FILE_MAX);
  text[n > 0 ? n : 0] = 0;
  for (char *l = text; l && *l && strchr(l, '\n'); l = strchr(l, '\n') + 1) {
    if (sscanf(l, "%lu %u %lu %lx", &seq, &k, &v, &sum) != 4 || sum != record_sum(seq, k, v))
      break; /* a torn tail, which the next boot cuts */
    if (seq < expect && expect == first)
      continue; /* the log's truncation after a compaction was lost: records the
                   snapshot holds, replayed in order at boot to the same state */
    SIM_INVARIANT(w, 0, seq == expect, "primary_log_has_no_hole",
                  "the primary's log holds write %lu where %lu comes next (after its snapshot)",
                  seq, expect);
    expect = seq + 1;
  }
}

const sf_check sf_program_checks[] = {{"primary_log_has_no_hole", check_primary_log}, {NULL, NULL}};
