/* The explorer: checkpoint-and-branch exploration (`simfuzz explore`, the
 * default job's search; harness/cli/explore.c reads its options).
 *
 * Roots are the sweep's scenarios (sf_generate_seed). A root runs in a
 * worker process with the runner's novelty hook: when the run reaches a
 * feature bucket that is rare across the campaign (counted in memory
 * shared by every process of the campaign), the process fork()s. Each
 * child is a copy-on-write snapshot of the whole world, the system under
 * test's memory included; it injects a few random steps soon after the
 * current moment, half of them aimed at the node the state is about (the
 * node its assertion site names, else the node whose event reached it;
 * sf_branch_steps, sf_run_inject), and runs on; the parent
 * waits for it, then forks the next branch or goes on with its own run.
 * Rarer buckets get more branches (energy), a branch may branch again up
 * to the depth limit, and every root's tree has a budget of branch runs.
 *
 * Revisits: an assertion site's state that only a few runs of the
 * campaign reached is kept (the root seed, the steps injected on the way,
 * the event after which it was reached, the trace hash there). Between
 * roots, within a part of the branches' time, a worker re-runs the
 * scenario of a kept state (going round the assertion sites, and within a
 * site the state that has had the fewest futures for its rarity;
 * revisit.h), in a child, up to that event; checks that the trace hash matches
 * (a target that is not deterministic is caught there); and branches
 * again. A named state reached once, deep in a branch, so gets as many
 * futures as its rarity is worth, not only the few its own tree had room
 * for.
 *
 * A branch is an ordinary scenario (the root plus the injected steps, each
 * stamped with the event after which it was injected) whose replay
 * schedules exactly the events of the forked run. Every failure is re-run
 * from scratch before it is saved as a crash file; one that does not
 * replay is counted as diverged and kept apart. Runs that reach buckets no
 * run of the campaign reached before can be saved as a corpus for the
 * fuzzers.
 *
 * Branches by re-run (the default; SIMFUZZ_SEARCH=-rerun forks them as
 * above, the explorer's way until 2026-12-05): instead of forking, the
 * hook draws the branch's future at the rare state, as above, and queues
 * it; when the run ends, the worker runs each queued branch from scratch,
 * in its own process, as the ordinary scenario it is (the root, its
 * ancestors' steps and its future, each after its event), depth-first: a
 * branch's own branches before its next sibling. The prefix up to the
 * injection is the run that reached the state, event for event, so the
 * hook ignores it (x->quiet_until). A branch costs its re-run (about a
 * root) rather than a fork, whose page faults cost 3 to 24 roots with the
 * host and the target (docs/BENCHMARKS.md, "What a branch costs"); and a
 * branch's failure is its file's by construction. A revisit runs in the
 * worker too: up to its event, where it queues its futures. The scenario running now is kept in
 * shared memory (ex_cur), so that a crash that kills the worker is saved
 * with the branch's scenario, not its root's.
 *
 * Processes: the tool, one supervisor per job (each supervises a worker
 * with the isolation of the sweep: time and memory limits, crash
 * signatures, a fresh worker after a crash), and under each worker a chain
 * of at most depth waiting branches (one more for a revisit). Every
 * process below the tool dies with its parent (cli_fork_tied), so killing
 * the tool in any way leaves no process behind. Wall-clock time here only
 * bounds the campaign; no run reads it. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "explore.h"

#include "cli/cli.h"
#include "engine/mutate.h"
#include "revisit.h"
#include "run/features.h"
#include "run/hooks.h"
#include "share.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EX_MAX_JOBS SF_EXPLORE_MAX_JOBS
#define EX_SIGS 256         /* distinct failure signatures tracked */
#define EX_FILES_PER_SIG 3u /* crash files kept per signature */
/* Past those, a failure of the same kind is kept too when its run reached
 * a rare state that no earlier failing run of its kind reached (as AFL++
 * keeps a crash with a new path), up to this many files of a kind: two
 * bugs that fail one invariant at one call site are one kind, and the
 * first three files of a frequent one must not hide a rarer one. */
#define EX_FILES_PER_SIG_MAX 64u
/* A rare state there: a bucket that at most 1 in this many of the
 * campaign's roots reached so far (as energy_for's states worth half the
 * energy). Common buckets would make nearly every failing run of a
 * frequent kind new for a long time, and fill its files. */
#define EX_FAIL_RARITY 100u
/* With --all-crashes, every failure gets a file (as the sweep saves every
 * failing seed), up to this many of a kind: a bound on the files, not a
 * choice among them. */
#define EX_FILES_ALL_MAX 100000u
#define EX_KEPT SF_EXPLORE_KEPT /* rare states each job keeps for revisits */
#define EX_KEPT_STEPS 48        /* steps a kept state's scenario may add to its root */
/* A worker's heartbeat limit is the branches' time limit plus this: a
 * branch that hangs is ended by its own alarm (and saved with its own
 * scenario as a timeout) before its worker is taken for hung. */
#define EX_HANG_SLACK_MS 3000u

/* Campaign state shared by every process (one anonymous shared mapping). */
typedef struct {
  uint32_t bucket_runs[SF_FB_BUCKETS]; /* runs that reached each bucket */
  uint64_t seen[SF_FB_BUCKETS / 64];   /* union of the buckets reached */
#define EX_COUNT_(name, what) uint64_t name;
  SF_EXPLORE_COUNTS(EX_COUNT_) /* the summary's counters (explore.h) */
#undef EX_COUNT_
  uint64_t ns_all, ns_branch;       /* workers' time, and the part spent in branches */
  uint64_t ns_clean, clean;         /* roots that branched none: their time, their count */
  uint64_t tree[EX_MAX_JOBS];       /* branch runs of each job's current root */
  uint64_t ns_revisit;              /* ns spent on revisits, in ns_branch too */
  uint64_t ns_site;                 /* ns of new branches forked at sites' states, ditto */
  uint64_t runs_begun;              /* runs begun: roots, branches, revisits (--share runs) */
  uint32_t ended_well[EX_MAX_JOBS]; /* set by a branch or revisit that ends normally */
  uint32_t nkept[EX_MAX_JOBS];      /* states each job keeps (see ex_kept) */
  uint32_t site_visits[EX_MAX_JOBS][EX_SITE_SLOTS]; /* each job's revisits per site */
  uint8_t site_of[SF_FB_BUCKETS];        /* the site slot of each bucket of a site's state */
  uint8_t site_states[SF_FB_BUCKETS];    /* site states hashed to each bucket, up to 2 */
  uint32_t stop;                         /* 1: no new roots or branches */
  uint64_t forked_at_kind[SF_FT__COUNT]; /* branches forked at a state of each feature kind */
  uint64_t forked_at_kept;               /* branches forked in revisits of kept states */
  struct {
    uint64_t hash;
    uint32_t count;                    /* failures of this kind */
    uint32_t files;                    /* files of this kind claimed */
    uint64_t feat[SF_FB_BUCKETS / 64]; /* the buckets its failing runs reached */
  } sig[EX_SIGS];
} ex_shared;

/* Why a branch's steps were injected: the state its branch forked at. A
 * crash file's origin (--origins) is the list of them, one per fork. */
typedef struct {
  uint64_t at_us;  /* the state's moment (virtual us) */
  uint32_t bucket; /* its feature bucket */
  uint32_t runs;   /* runs of the campaign that had reached the bucket before */
  uint8_t kind;    /* the kind (SF_FT_*) of the feature that reached it in its run */
  int8_t node;     /* the node the state is about, -1: none */
  uint8_t revisit; /* 1: a revisit of the kept state forked the branch */
} ex_why;

/* A rare state kept for revisits: the scenario that reached it (a root
 * seed and the steps its branches injected, each with its after_event)
 * and the event after which it did. Each job keeps its own EX_KEPT of
 * them in shared memory; only one process of a job runs at a time (a
 * parent waits for its branch), so a job's entries need no lock. */
typedef struct {
  uint64_t seed, id, at_event, hash; /* hash: the trace hash at that moment */
  uint32_t bucket, level, visits, nadded;
  uint32_t ways; /* ways to its state kept so far (see EX_WORN_VISITS) */
  uint32_t site; /* its assertion site's slot (revisit.h) */
  int32_t node;
  uint64_t at_us, end_us; /* the state's moment and its run's end (us), for --stats */
  sf_step added[EX_KEPT_STEPS];
  ex_why why[EX_KEPT_STEPS]; /* why each step was added */
} ex_kept;

/* The run a worker runs now, in re-run mode: its root's seed and the
 * steps its scenario adds to it (n = 0: the root itself). Each job has one, in
 * shared memory: its supervisor saves a worker's crash with it. */
typedef struct {
  uint64_t seed;   /* its root's seed */
  uint32_t n, set; /* set: 1 once the worker ran anything in re-run mode */
  sf_step added[SF_MAX_STEPS];
  ex_why why[SF_MAX_STEPS];
} ex_cur;

/* A branch queued for a re-run: its future (each step after event
 * `events`), its id, and whether the branches' share applies to it (a
 * revisit's branches are timed with their revisit). */
#define EX_FUTURE 6u
typedef struct {
  uint64_t id, events;
  uint32_t nf, share, total;
  sf_step fut[EX_FUTURE];
  ex_why why; /* the state it forks at */
} ex_req;

/* The branches a run queued, in order (at most the tree's budget). */
typedef struct {
  ex_req *q;
  uint32_t n, cap;
} ex_list;

typedef struct {
  sf_explore_opts o; /* the campaign's options, as given */
  uint64_t start;    /* the worker's first root */
  uint32_t job;
  ex_shared *sh;
  /* this process */
  const cli_child_io *io;
  sf_scenario *s;  /* the root scenario the worker runs */
  sf_step *added;  /* the steps this branch and its ancestors injected */
  uint32_t nadded; /* (each with its after_event) */
  ex_why *why;     /* why each of those was injected */
  ex_why next;     /* why the branches about to fork are forked */
  uint64_t root_seed, branch_id;
  uint32_t level;     /* 0 in the worker, d in a branch of depth d */
  uint64_t forked_at; /* the event a branch was forked after (one per event) */
  uint64_t feat[SF_FB_BUCKETS / 64];
  uint32_t forks; /* branches this root's run forked or queued (in the worker) */
  ex_kept *kept;  /* every job's kept states (EX_KEPT each, shared memory) */
  ex_kept *visit; /* in a revisit: the state, until its event comes up */
  int in_revisit; /* this process re-runs a kept state (or is a branch of one) */
  /* re-run mode (SF_SEARCH_RERUN) */
  int rerun;             /* branches are re-runs, not forks */
  int damaged;           /* a run crashed: the worker must start afresh */
  uint64_t quiet_until;  /* the hook ignores events up to this one */
  uint32_t share, total; /* the share of the branches queued now (ex_req) */
  int yield;             /* shares weighed by yield (SF_SEARCH_YIELD) */
  ex_list *queue;        /* where the running run's branches go */
  ex_cur *cur;           /* every job's running scenario (shared memory) */
} explorer;

static uint64_t add64(uint64_t *p, uint64_t v) {
  return __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static void beat(explorer *x) {
  add64((uint64_t *)&x->io->beat[CLI_BEAT_RUNS], 1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* simfuzz-allow-nondeterminism: the time share */
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock of the shares below: wall-clock ns, or (--share runs) the
 * campaign's runs begun so far, each a millisecond's worth: every root,
 * branch and revisit costs the same, and a campaign bounded by roots
 * spends the same runs on branches on a loaded machine as on an idle one. */
static uint64_t cost_now(const explorer *x) {
  if (!x->o.share_runs)
    return now_ns();
  return __atomic_load_n(&x->sh->runs_begun, __ATOMIC_RELAXED) * 1000000u;
}

/* A run begins (see cost_now). */
static void run_begins(explorer *x) {
  add64(&x->sh->runs_begun, 1);
}

/* Branches may take at most this share (percent) of the workers' time, so
 * that the roots (the sweep's own scenarios) keep at least the rest: an
 * easy bug the sweep finds costs at most about 100 / (100 - share) times
 * its time. Assertion sites may use a larger share. Branches cost a root
 * more than their own runs: a forked branch (-rerun) its fork and the page
 * faults of its parent, which touches its copy-on-write heap again when it
 * goes on; a re-run branch the hook's work of drawing and queueing it. So
 * the roots' share is judged by what they would have cost without branches
 * (the mean time of the roots that branched none), against all the
 * workers' time. */
#define EX_SHARE 33u
#define EX_SHARE_SITE 35u

/* Revisits of kept states (their re-runs and branches) take this part of
 * the branches' share of the workers' time, once there are kept states;
 * branches at new rare states keep the rest of it. */
#define EX_SHARE_REVISIT 12u

/* With +split (SF_SEARCH_SPLIT), the new branches forked at assertion
 * sites' states may take at most this percentage of the new branches'
 * share; the states of other kinds have the rest to themselves. */
#define EX_SPLIT_SITE 67u

/* An assertion site's state (a SOMETIMES first hit, a new best value of a
 * MAXIMIZE) is kept for revisits when fewer than this many runs of the
 * campaign reached its bucket before. Only named states: kept rare
 * feature buckets of any kind took the revisits' time from branches that
 * found the deep bugs 2-8x sooner (docs/bench-history.md, v12). */
#define EX_KEEP_BELOW 8u

/* A job keeps one way (a scenario) to each state. Once that way has had
 * this many revisits, the next run that reaches the state again with
 * energy to branch there (however many runs did before) replaces it: the
 * futures of one way may never lead on, and without a new way the state
 * kept the first one for the whole campaign. On early_change, where rung
 * 3 of the ladder is reached thousands of times and rung 4 rarely, this
 * found the bug sooner (docs/bench-history.md, v18). */
#define EX_WORN_VISITS 16u

/* No branch before the campaign has run this many roots: until then no
 * state can be called rare (the top energy needs 1 in 1,000), and a bug
 * the sweep finds within its first thousand seeds costs what it costs the
 * sweep, not twice that. */
#define EX_WARMUP 1000u

/* A state's rarity: about how many of the campaign's `roots` root runs
 * there are for each of the c runs that reached it. */
static uint64_t rarity_of(uint64_t c, uint64_t roots) {
  return (roots + 1) / (c + 1);
}

/* How many branches a state is worth, by its rarity: of `roots` root runs
 * so far, c earlier runs reached it. Assertion sites (states the target's
 * author named) get twice the energy; other buckets branch only once the
 * campaign has seen enough roots to call them rare. With +even
 * (SF_SEARCH_EVEN) sites get what other buckets get; with +split
 * (SF_SEARCH_SPLIT) other buckets branch once from 1 run in 10, within
 * their own part of the share (branch_over_share). */
static uint32_t energy_for(uint32_t c, uint64_t roots, uint32_t k, int site) {
  if (!k)
    return 0; /* --energy 0: no branches */
  uint64_t rarity = rarity_of(c, roots);
  /* a site's state gets more, unless +even (SF_SEARCH_EVEN) makes it any state */
  if (site && (sf_search_off() & SF_SEARCH_EVEN))
    return rarity >= 100 ? 2 * k : rarity >= 10 ? k : rarity >= 3 ? 1 : 0;
  if (rarity >= 1000)
    return k;
  if (rarity >= 100)
    return k / 2 ? k / 2 : 1;
  if (rarity >= 30 || (rarity >= 10 && !(sf_search_off() & SF_SEARCH_SPLIT)))
    return 1;
  return 0;
}

/* 1 if the failing run's buckets feat (NULL: unknown) hold a rare one
 * (EX_FAIL_RARITY) that no failing run of its kind (slot k of the table)
 * reached before; adds them all to the kind's. */
static int sig_novel(ex_shared *sh, uint32_t k, const uint64_t *feat) {
  uint64_t roots = __atomic_load_n(&sh->roots, __ATOMIC_RELAXED);
  int novel = 0;
  for (uint32_t i = 0; feat && i < SF_FB_BUCKETS / 64; i++) {
    uint64_t fresh = feat[i] & ~__atomic_fetch_or(&sh->sig[k].feat[i], feat[i], __ATOMIC_RELAXED);
    for (; fresh && !novel; fresh &= fresh - 1) {
      uint32_t b = i * 64 + (uint32_t)__builtin_ctzll(fresh);
      novel = rarity_of(__atomic_load_n(&sh->bucket_runs[b], __ATOMIC_RELAXED), roots) >=
              EX_FAIL_RARITY;
    }
  }
  return novel;
}

/* Claim the right to save one more crash file of signature hash h (shared
 * open-addressing table), whose run reached the buckets feat (NULL: not
 * known); 1 if this process should save it (one of the first
 * EX_FILES_PER_SIG of its kind, or a new way to it: EX_FILES_PER_SIG_MAX;
 * all: every one, EX_FILES_ALL_MAX), whether it is the first of its
 * signature, and whether it is news: one of the first EX_FILES_PER_SIG of
 * its kind or a new way to it, a file it would get without all. */
static int claim_sig(ex_shared *sh, uint64_t h, const uint64_t *feat, int all, int *first,
                     int *news) {
  h |= 1;
  for (uint32_t i = 0; i < EX_SIGS; i++) {
    uint32_t k = (uint32_t)((h + i) % EX_SIGS);
    uint64_t expect = 0;
    if (__atomic_load_n(&sh->sig[k].hash, __ATOMIC_ACQUIRE) == h ||
        __atomic_compare_exchange_n(&sh->sig[k].hash, &expect, h, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE) ||
        expect == h) {
      uint32_t n = __atomic_fetch_add(&sh->sig[k].count, 1, __ATOMIC_RELAXED);
      *first = n == 0;
      int novel = sig_novel(sh, k, feat);
      *news = n < EX_FILES_PER_SIG || novel;
      if (n >= EX_FILES_PER_SIG && !novel && !all)
        return 0;
      return __atomic_fetch_add(&sh->sig[k].files, 1, __ATOMIC_RELAXED) <
             (all ? EX_FILES_ALL_MAX : EX_FILES_PER_SIG_MAX);
    }
  }
  *first = *news = 0;
  return 0; /* the table is full: count it, keep no file */
}

static uint64_t str_hash(const char *s) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (; *s; s++)
    h = sim_mix64(h ^ (uint8_t)*s);
  return h;
}

/* Send a finding to the supervisor: rec.o.message is the saved file. */
static void report(explorer *x, const cli_outcome *o, const char *path, int first) {
  cli_record rec;
  memset(&rec, 0, sizeof rec);
  rec.kind = CLI_REC_FOUND;
  rec.seed = x->root_seed;
  rec.o = *o;
  rec.o.nondet = first; /* reused: 1 for the first file of its signature */
  snprintf(rec.o.message, sizeof rec.o.message, "%s", path ? path : "");
  cli_record_send(x->io, &rec);
}

/* Save s as DIR/<prefix><sha1>; 0, or -1 (path "") when it could not be
 * written (a full or read-only disk), which the caller counts. */
static int save_file(const char *dir, const char *prefix, const sf_scenario *s, char *path,
                     size_t cap, int durable) {
  static uint8_t buf[SF_MAX_INPUT];
  path[0] = 0;
  size_t n = sf_encode(s, buf, sizeof buf);
  if (n == 0 || n > sizeof buf)
    return -1;
  char hex[41];
  cli_sha1_hex(buf, n, hex);
  if (snprintf(path, cap, "%s/%s%s", dir, prefix, hex) >= (int)cap ||
      (durable ? cli_write_file(path, buf, n) : cli_write_corpus_file(path, buf, n)) != 0) {
    path[0] = 0;
    return -1;
  }
  return 0;
}

/* Save a failure's crash file (x's DIR/<prefix><sha1>) if claim_sig lets
 * it (its kind, hash h; its run's buckets feat, or NULL; every one if
 * all); *first: it is the first of its kind. Counts the files written, the
 * failures that could not be, those kept as a count only, and (branch 0:
 * a root's, 1: a branch's or a revisit's; -1: neither, not counted) the
 * failures that were news (claim_sig). */
static void save_failure(explorer *x, const char *prefix, uint64_t h, const uint64_t *feat, int all,
                         int branch, const sf_scenario *s, char *path, size_t cap, int *first) {
  ex_shared *sh = x->sh;
  const char *dir = x->o.out;
  path[0] = 0;
  int news;
  int claimed = claim_sig(sh, h, feat, all, first, &news);
  if (news && branch >= 0)
    add64(branch ? &sh->news_in_branches : &sh->news_in_roots, 1);
  if (!claimed) {
    add64(&sh->unkept, 1);
    return;
  }
  if (save_file(dir, prefix, s, path, cap, 1) == 0)
    add64(&sh->saved, 1);
  else
    add64(&sh->unsaved, 1);
}

static void write_origin(const explorer *x, const char *path, uint64_t seed, const sf_step *added,
                         const ex_why *why, uint32_t n);

/* A run of s failed (outcome o): replay it from its encoding in a fresh
 * world; if it fails the same way, save it as a crash file. */
static void found(explorer *x, const sf_scenario *s, const cli_outcome *o, int replayable) {
  int branch = s != x->s; /* full_scenario: steps injected, a branch's or a revisit's */
  add64(&x->sh->failures, 1);
  if (branch)
    add64(&x->sh->failures_in_branches, 1);
  char path[4096] = "";
  if (replayable) {
    static uint8_t buf[SF_MAX_INPUT];
    size_t n = sf_encode(s, buf, sizeof buf);
    sf_result again;
    int same = 0;
    if (n && n <= sizeof buf) {
      sf_run_input(cli_target, buf, n, NULL, &again);
      cli_outcome o2;
      cli_record rec;
      cli_record_fill(&rec, 0, &again);
      o2 = rec.o;
      same = again.failed && !strcmp(o2.sig, o->sig) && o2.hash == o->hash;
    }
    if (!same) { /* kept as its own kind, with the same cap per kind */
      add64(&x->sh->diverged, 1);
      int first;
      /* a determinism failure: a few of its kind show it, --all-crashes or not */
      save_failure(x, "diverged-", sim_mix64(str_hash(o->sig) ^ 0xd1e), NULL, 0, -1, s, path,
                   sizeof path, &first);
      write_origin(x, path, x->root_seed, x->added, x->why, x->nadded);
      if (x->o.stop_on_first) /* a determinism failure is a failure */
        __atomic_store_n(&x->sh->stop, 1, __ATOMIC_RELAXED);
      return;
    }
  }
  int first;
  /* a run that ended (replayable) reached x->feat; a forked branch that
   * died reached buckets its parent does not know */
  save_failure(x, "crash-", str_hash(o->sig), replayable ? x->feat : NULL, x->o.all_crashes, branch,
               s, path, sizeof path, &first);
  write_origin(x, path, x->root_seed, x->added, x->why, x->nadded);
  report(x, o, path, first);
  if (x->o.stop_on_first)
    __atomic_store_n(&x->sh->stop, 1, __ATOMIC_RELAXED);
}

/* The scenario this process runs: the root, plus the steps injected in
 * this branch and its ancestors. x->s itself when nothing was injected;
 * otherwise a copy the caller frees. */
static sf_scenario *full_scenario(const explorer *x, const sf_step *more, uint32_t nmore) {
  if (!x->nadded && !nmore)
    return x->s;
  sf_scenario *b = cli_new_scenario();
  *b = *x->s;
  SIM_ASSERT(b->nsteps + x->nadded + nmore <= SF_MAX_STEPS); /* sf_run_inject's bound */
  memcpy(&b->steps[b->nsteps], x->added, x->nadded * sizeof *x->added);
  b->nsteps += x->nadded;
  if (nmore)
    memcpy(&b->steps[b->nsteps], more, nmore * sizeof *more);
  b->nsteps += nmore;
  sf_normalize(b);
  return b;
}

/* After a run: failures, and new buckets for the corpus. */
static void finish_run(explorer *x, const sf_result *r) {
  int fresh = 0;
  for (uint32_t i = 0; i < SF_FB_BUCKETS / 64; i++) {
    if (!x->feat[i]) /* (most words of a wide map) */
      continue;
    uint64_t old = __atomic_fetch_or(&x->sh->seen[i], x->feat[i], __ATOMIC_RELAXED);
    if (x->feat[i] & ~old)
      fresh = 1;
  }
  int keep = fresh && x->o.corpus && !r->failed;
  if (!r->failed && !keep)
    return;
  sf_scenario *s = full_scenario(x, NULL, 0);
  if (r->failed) {
    cli_record rec;
    cli_record_fill(&rec, 0, r);
    found(x, s, &rec.o, !r->crashed);
  }
  if (keep) {
    char path[4096];
    if (save_file(x->o.corpus, "", s, path, sizeof path, 0) == 0)
      add64(&x->sh->corpus, 1);
    else
      add64(&x->sh->corpus_unsaved, 1);
  }
  if (s != x->s)
    free(s);
}

/* A branch that did not end normally: rebuild its scenario in the parent
 * (the same future, injected after the same event) and keep it as a
 * failure, with the signature a root's crash of the same kind gets
 * (cli_crash_outcome: the signal and top frame, the assertion, timeout,
 * out-of-memory, exit N). */
static void branch_crashed(explorer *x, sf_step *fut, uint32_t nf, uint64_t events,
                           const cli_child *c, int ended) {
  SIM_ASSERT(nf >= 1 && x->nadded + nf <= SF_MAX_STEPS);
  for (uint32_t i = 0; i < nf; i++) { /* the child's steps, for a while */
    fut[i].after_event = (uint32_t)events;
    x->added[x->nadded + i] = fut[i];
    x->why[x->nadded + i] = x->next;
  }
  x->nadded += nf;
  sf_scenario *b = full_scenario(x, NULL, 0);
  cli_outcome o;
  cli_crash_outcome(c, ended, &o);
  found(x, b, &o, 0);
  free(b);
  x->nadded -= nf;
}

/* Fork a branch or a revisit: a supervised child (cli_child_fork: its own
 * process group, its output drained by this process) that keeps to the
 * branches' time limit (its alarm ends it: a "timeout"). In the parent its
 * pid, *out its handle to wait on; 0 in the child, -1 if the fork failed
 * (*out is then NULL). */
static pid_t fork_child(const explorer *x, cli_child **out) {
  cli_child *c = malloc(sizeof *c);
  if (!c)
    sf_out_of_memory("explore");
  __atomic_store_n(&x->sh->ended_well[x->job], 0, __ATOMIC_RELAXED);
  pid_t pid = cli_child_fork(c, NULL);
  if (pid == 0 && x->o.branch_timeout_s)
    alarm(x->o.branch_timeout_s);
  if (pid <= 0) { /* the child needs no handle; a failed fork has none */
    free(c);
    c = NULL;
  }
  *out = c;
  return pid;
}

/* A branch or revisit ends normally (end_child): the parent can tell this
 * from a system under test that calls exit(0), which is a failure. */
static void end_child(const explorer *x) {
  fflush(stdout);
  fflush(stderr);
  __atomic_store_n(&x->sh->ended_well[x->job], 1, __ATOMIC_RELAXED);
  _exit(0);
}

/* Wait for the child of fork_child, held to the memory limit (this
 * process's own time limit waits meanwhile): CLI_END_*. */
static int wait_child(const explorer *x, cli_child *c) {
  unsigned left = alarm(0); /* a branch's time limit covers its own run only */
  cli_limits lim = {0, cli_run_limits.rss_mb};
  int ended = cli_child_wait(c, &lim, NULL, NULL);
  if (left)
    alarm(left);
  uint32_t well = __atomic_exchange_n(&x->sh->ended_well[x->job], 0, __ATOMIC_RELAXED);
  return ended == CLI_END_OK && !well ? CLI_END_CRASH : ended;
}

/* List in at the links with datagrams pending now, the focus node's
 * first (as many as fit). */
static void fork_links(sim_world *w, int n, sf_fork *at) {
  for (int mine = 1; mine >= 0; mine--)
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) {
        if ((a == at->focus || b == at->focus) != mine || at->nlinks == SF_FORK_LINKS)
          continue;
        uint32_t p = sim_link_pending(w, a, b);
        if (!p)
          continue;
        at->link[at->nlinks].from = (uint8_t)a;
        at->link[at->nlinks].to = (uint8_t)b;
        at->link[at->nlinks].pending = (uint16_t)(p < UINT16_MAX ? p : UINT16_MAX);
        at->nlinks++;
      }
}

/* A branch (forked or re-run) begins at x->level: count it, raise the
 * campaign's deepest level, and beat. */
static void branch_begins(explorer *x) {
  add64(&x->sh->branches, 1);
  SIM_ASSERT(x->nadded >= 1);
  const ex_why *y = &x->why[x->nadded - 1]; /* its own future's */
  SIM_ASSERT(y->kind > SF_FT__NONE && y->kind < SF_FT__COUNT);
  add64(y->revisit ? &x->sh->forked_at_kept : &x->sh->forked_at_kind[y->kind], 1);
  uint64_t d = __atomic_load_n(&x->sh->deepest, __ATOMIC_RELAXED);
  while (x->level > d && !__atomic_compare_exchange_n(&x->sh->deepest, &d, x->level, 1,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  beat(x);
}

/* Re-run mode: queue a branch whose future fut[0..nf) is injected after
 * event `events` (a list holds at most the tree's budget: no more could
 * run). */
static void queue_branch(explorer *x, uint64_t id, uint64_t events, sf_step *fut, uint32_t nf) {
  ex_list *l = x->queue;
  SIM_ASSERT(l && nf >= 1 && nf <= EX_FUTURE && events <= UINT32_MAX);
  if (l->n >= x->o.budget)
    return;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 16;
    ex_req *q = realloc(l->q, cap * sizeof *q);
    if (!q)
      sf_out_of_memory("explore");
    l->q = q;
    l->cap = cap;
  }
  ex_req *r = &l->q[l->n++];
  r->id = id;
  r->events = events;
  r->nf = nf;
  r->share = x->share;
  r->total = x->total;
  r->why = x->next;
  for (uint32_t i = 0; i < nf; i++) {
    r->fut[i] = fut[i];
    r->fut[i].after_event = (uint32_t)events;
  }
  x->forks++;
}

/* Count the time dt of a new branch (or a revisit's, when it is timed as
 * one) forked for reason y. */
static void count_branch_time(ex_shared *sh, const ex_why *y, uint64_t dt) {
  add64(&sh->ns_branch, dt);
  if (!y->revisit && y->kind == SF_FT_SITE)
    add64(&sh->ns_site, dt);
}

/* Fork one branch at this moment (in re-run mode, queue it). Returns in
 * the child (which then runs the new future) and, after the child ended,
 * in the parent. */
static void branch(explorer *x, sim_world *w, uint64_t id, int focus) {
  uint64_t now_us = (sim_now(w) + 999) / 1000;
  uint64_t events = sim_get_stats(w)->events;
  uint32_t room = SF_MAX_STEPS - x->s->nsteps - x->nadded; /* as sf_run_inject counts */
  sf_step fut[EX_FUTURE];
  sf_fork at;
  memset(&at, 0, sizeof at);
  at.focus = focus;
  at.anchor = !(sf_search_off() & SF_SEARCH_ANCHOR);
  at.one_shot = !(sf_search_off() & SF_SEARCH_ONESHOT);
  int n = sf_nodes_for(cli_target, x->s); /* the target's nodes: a fault never names a client */
  for (int i = 0; i < n && i < 64; i++) {
    at.down |= (uint64_t)!sim_node_up(w, i) << i;
    at.paused |= (uint64_t)(sim_node_up(w, i) && sim_node_paused(w, i)) << i;
  }
  if (!(sf_search_off() & SF_SEARCH_INFLIGHT))
    fork_links(w, n, &at);
  uint32_t nf = events <= UINT32_MAX ? sf_branch_steps(x->s, now_us, id, &at, fut,
                                                       room < EX_FUTURE ? room : EX_FUTURE)
                                     : 0;
  if (!nf)
    return;
  if (x->rerun) {
    queue_branch(x, id, events, fut, nf);
    return;
  }
  /* the branch's cost to the roots: the fork (page tables of the whole
   * heap) as well as the child's run */
  int top = x->level == 0 && !x->in_revisit; /* a revisit is timed as a whole */
  uint64_t t0 = top ? cost_now(x) : 0;
  cli_child *c;
  pid_t pid = fork_child(x, &c);
  if (pid < 0)
    return;
  if (pid == 0) {
    run_begins(x);
    x->level++;
    x->branch_id = id;
    x->forked_at = events;
    for (uint32_t i = 0; i < nf; i++) {
      fut[i].after_event = sf_run_inject(w, &fut[i]);
      if (fut[i].after_event != events) /* the world's event budget is spent */
        end_child(x);
      x->why[x->nadded] = x->next;
      x->added[x->nadded++] = fut[i];
    }
    branch_begins(x);
    return;
  }
  x->forks++;
  int ended = wait_child(x, c);
  if (top) /* nested branches are inside their top branch's time */
    count_branch_time(x->sh, &x->next, cost_now(x) - t0);
  if (ended != CLI_END_OK)
    branch_crashed(x, fut, nf, events, c, ended);
  free(c);
}

/* This job's kept states (EX_KEPT entries). */
static ex_kept *job_kept(const explorer *x) {
  return x->kept + (size_t)x->job * EX_KEPT;
}

/* A kept state as revisit.h's rule sees it. */
static ex_cand kept_cand(const ex_shared *sh, const ex_kept *e) {
  ex_cand c = {sh->bucket_runs[e->bucket], e->visits, e->site};
  return c;
}

/* The first of the n kept states with the highest score (revisit.h), the
 * one that has had most for its worth, and that score in *score. */
static uint32_t kept_most(const ex_shared *sh, const ex_kept *kept, uint32_t n, uint64_t *score) {
  uint32_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    ex_cand c = kept_cand(sh, &kept[i]);
    uint64_t v = ex_cand_score(&c);
    if (i == 0 || v > *score) {
      *score = v;
      at = i;
    }
  }
  return at;
}

/* Keep the state this run reached after its current event for revisits
 * (c earlier runs of the campaign reached its bucket): one way to each
 * state. A state is kept while fewer than EX_KEEP_BELOW runs reached it;
 * after that, only to replace its way once that one is worn (x->o.worn
 * revisits, by default EX_WORN_VISITS). When the job's entries are full,
 * a new state replaces the one most revisited for its bucket's rarity, if
 * that one is less worth it. */
static void keep_state(explorer *x, sim_world *w, uint32_t bucket, uint32_t c, int node) {
  if (x->nadded > EX_KEPT_STEPS || !x->o.keep)
    return;
  ex_kept *kept = job_kept(x);
  uint32_t *n = &x->sh->nkept[x->job], slot = *n, ways = 1;
  for (uint32_t i = 0; i < *n; i++)
    if (kept[i].bucket == bucket) {
      slot = i; /* a state has at most one entry */
      break;
    }
  if (slot < *n) { /* one way to the state is enough, until it is worn */
    if (!x->o.worn || kept[slot].visits < x->o.worn)
      return;
    ways = kept[slot].ways + 1;
  } else if (c >= EX_KEEP_BELOW) {
    return;
  } else if (slot == x->o.keep) {
    uint64_t worst = 0;
    slot = kept_most(x->sh, kept, x->o.keep, &worst);
    if (worst <= (uint64_t)c + 1)
      return;
  } else {
    (*n)++;
  }
  ex_kept *e = &kept[slot];
  e->seed = x->root_seed;
  e->id = sim_mix64(x->branch_id ^ sim_mix64((uint64_t)bucket << 32 | c));
  e->at_event = sim_get_stats(w)->events;
  e->hash = sim_trace_hash(w);
  e->bucket = bucket;
  e->level = x->level;
  e->visits = 0;
  e->ways = ways;
  e->site = x->sh->site_of[bucket];
  e->node = node;
  e->at_us = sim_now(w) / 1000;
  e->end_us = sf_run_end_us(x->s);
  e->nadded = x->nadded;
  memcpy(e->added, x->added, x->nadded * sizeof *x->added);
  memcpy(e->why, x->why, x->nadded * sizeof *x->why);
}

/* The branches' weight by yield (explore/share.h): the failures that were
 * news (claim_sig) per unit of cost, the branches' and revisits' against
 * the roots'. */
static uint32_t yield_pm(const ex_shared *sh) {
  uint64_t all = __atomic_load_n(&sh->ns_all, __ATOMIC_RELAXED);
  uint64_t cb = __atomic_load_n(&sh->ns_branch, __ATOMIC_RELAXED);
  cb = cb < all ? cb : all;
  return ex_yield_pm(__atomic_load_n(&sh->news_in_roots, __ATOMIC_RELAXED), all - cb,
                     __atomic_load_n(&sh->news_in_branches, __ATOMIC_RELAXED), cb);
}

/* The weight (per mille) of the branches' shares: by yield with
 * SF_SEARCH_YIELD, else 1000 (the shares as they are). */
static uint64_t share_pm(const explorer *x) {
  return x->yield ? yield_pm(x->sh) : 1000;
}

/* 1 if the branches of one kind (new ones, or revisits) have used up
 * their share (percent) of the workers' time, spent ns of it, or the roots
 * have fallen behind theirs (100 - total, for all branches). */
static int over_share(ex_shared *sh, uint64_t roots, uint64_t ns, uint64_t share, uint64_t total) {
  uint64_t all = __atomic_load_n(&sh->ns_all, __ATOMIC_RELAXED);
  if (ns * 100 > share * (all + 1))
    return 1;
  uint64_t clean = __atomic_load_n(&sh->clean, __ATOMIC_RELAXED);
  return clean >= 16 && roots * (__atomic_load_n(&sh->ns_clean, __ATOMIC_RELAXED) / clean) * 100 <
                            (100 - total) * all;
}

/* 1 if new branches (not revisits) have used up their share (see
 * over_share); with +split, those of the kind of state `kind` their part
 * of it (EX_SPLIT_SITE). */
static int branch_over_share(explorer *x, int kind, uint64_t share, uint64_t total) {
  ex_shared *sh = x->sh;
  uint64_t ns = __atomic_load_n(&sh->ns_branch, __ATOMIC_RELAXED) -
                __atomic_load_n(&sh->ns_revisit, __ATOMIC_RELAXED);
  if (!(sf_search_off() & SF_SEARCH_SPLIT)) {
    uint64_t site = __atomic_load_n(&sh->ns_site, __ATOMIC_RELAXED);
    site = site < ns ? site : ns; /* (other workers add to both between the loads) */
    int at_site = kind == SF_FT_SITE;
    ns = at_site ? site : ns - site;
    share = share * (at_site ? EX_SPLIT_SITE : 100 - EX_SPLIT_SITE) / 100;
  }
  return over_share(sh, __atomic_load_n(&sh->roots, __ATOMIC_RELAXED), ns, share, total);
}

static void on_novel(void *ctx, sim_world *w, uint32_t bucket, int kind, int node) {
  explorer *x = ctx;
  int site = kind == SF_FT_SITE;
  ex_shared *sh = x->sh;
  if (x->visit)
    return; /* re-running a kept state's scenario: nothing there is new */
  if (x->quiet_until && sim_get_stats(w)->events <= x->quiet_until)
    return; /* a re-run branch's prefix: the run that queued it reached it */
  uint32_t c = __atomic_fetch_add(&sh->bucket_runs[bucket % SF_FB_BUCKETS], 1, __ATOMIC_RELAXED);
  if (!c) /* the campaign's first run there: whose find it is */
    add64(x->level || x->in_revisit ? &sh->new_in_branches : &sh->new_in_roots, 1);
  if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
    return;
  if (x->level > 0 && sim_get_stats(w)->events == x->forked_at)
    return; /* this branch's own future was injected after this event */
  uint64_t roots = __atomic_load_n(&sh->roots, __ATOMIC_RELAXED);
  if (roots <= x->o.warmup)
    return; /* roots 1 to warmup (roots counts the running one) branch none */
  uint32_t k = energy_for(c, roots, x->o.energy, site);
  /* Named states only (see EX_KEEP_BELOW), at every level down to the
   * deepest: a branch there cannot branch, yet rare states are reached
   * there most (each level of futures brings a run closer), so revisits
   * are where those get futures at all. A revisit's branches, one level
   * past the state they start from, keep too: a state reached only there
   * gets its own revisits, so a ladder of rare states is climbed one
   * kept state after another. EX_KEPT_STEPS bounds how far. A worn way
   * (EX_WORN_VISITS) gives way to this run's, however common the state
   * (keep_state). */
  if (k && site && x->o.depth)
    keep_state(x, w, bucket % SF_FB_BUCKETS, c, node);
  if (x->level >= x->o.depth)
    return;
  uint64_t base = site ? EX_SHARE_SITE : EX_SHARE, pm = share_pm(x);
  /* once states are kept, their revisits have a part of the share */
  uint64_t share = (base - (sh->nkept[x->job] ? EX_SHARE_REVISIT : 0)) * pm / 1000;
  uint64_t total = base * pm / 1000;
  x->share = (uint32_t)share;
  x->total = (uint32_t)total;
  SIM_ASSERT(node >= -1 && node < SIM_MAX_NODES && kind > SF_FT__NONE && kind < SF_FT__COUNT);
  x->next = (ex_why){sim_now(w) / 1000, bucket % SF_FB_BUCKETS, c, (uint8_t)kind, (int8_t)node, 0};
  for (uint32_t i = 0; i < k; i++) {
    if (branch_over_share(x, kind, share, total))
      return;
    /* a re-run's budget is counted when it runs (run_queued) */
    if ((!x->rerun && add64(&sh->tree[x->job], 1) > x->o.budget) ||
        __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
      return;
    uint64_t id = sim_mix64(x->branch_id ^ sim_mix64(x->root_seed * 0x100000001b3ull + bucket) ^
                            (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull);
    uint32_t level = x->level;
    branch(x, w, id, node);
    if (x->level != level)
      return; /* the child (one level deeper): run on with the new future */
  }
}

/* In a revisit, after the kept state's event: fork its branches. The
 * revisit's own process ends here; its branches run on. In re-run mode,
 * queue them instead; the rest of the run is the one that kept the state,
 * and the hook ignores it. */
static void on_revisit(void *ctx, sim_world *w) {
  explorer *x = ctx;
  int node = x->visit->node; /* (a branch may replace the entry) */
  uint64_t hash = x->visit->hash;
  uint32_t bucket = x->visit->bucket;
  x->next = (ex_why){sim_now(w) / 1000,
                     bucket,
                     __atomic_load_n(&x->sh->bucket_runs[bucket], __ATOMIC_RELAXED),
                     SF_FT_SITE,
                     (int8_t)node,
                     1};
  x->visit = NULL;
  if (sim_trace_hash(w) != hash) { /* the target is not deterministic */
    add64(&x->sh->revisits_diverged, 1);
    if (x->rerun) {
      x->quiet_until = UINT64_MAX;
      return;
    }
    end_child(x);
  }
  x->share = x->total = 0; /* timed with the revisit */
  for (uint32_t i = 0; i < x->o.energy && !__atomic_load_n(&x->sh->stop, __ATOMIC_RELAXED); i++) {
    uint64_t id = sim_mix64(x->branch_id ^ (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull);
    uint32_t level = x->level;
    branch(x, w, id, node);
    if (x->level != level)
      return; /* the child: run on with the new future */
  }
  if (x->rerun) {
    x->quiet_until = UINT64_MAX;
    return;
  }
  end_child(x);
}

/* Re-run mode: the scenario about to run (x->added on its root) is the
 * one a crash of this worker is saved with. */
static void set_current(explorer *x) {
  ex_cur *c = &x->cur[x->job];
  SIM_ASSERT(x->nadded <= SF_MAX_STEPS);
  c->seed = x->root_seed;
  memcpy(c->added, x->added, x->nadded * sizeof *x->added);
  memcpy(c->why, x->why, x->nadded * sizeof *x->why);
  c->n = x->nadded;
  __atomic_store_n(&c->set, 1, __ATOMIC_RELEASE);
}

/* Re-run mode: run the branches queued in l, one after another, each from
 * scratch with its future after its event; each one's own branches run
 * right after it (depth-first, as forks would). Stops early when the
 * tree's budget or the branches' share is spent, the campaign stops, or a
 * run crashed (x->damaged). */
static void run_queued(explorer *x, const sf_run_opts *o, ex_list *l) {
  ex_shared *sh = x->sh;
  uint32_t n0 = x->nadded, level = x->level;
  uint64_t id0 = x->branch_id;
  ex_list sub = {NULL, 0, 0};
  for (uint32_t i = 0; i < l->n && !x->damaged; i++) {
    const ex_req *q = &l->q[i];
    if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
        (q->total && branch_over_share(x, q->why.kind, q->share, q->total)) ||
        add64(&sh->tree[x->job], 1) > x->o.budget)
      break;
    SIM_ASSERT(n0 + q->nf <= SF_MAX_STEPS);
    memcpy(x->added + n0, q->fut, q->nf * sizeof *q->fut);
    for (uint32_t j = 0; j < q->nf; j++)
      x->why[n0 + j] = q->why;
    x->nadded = n0 + q->nf;
    x->level = level + 1;
    x->branch_id = q->id;
    x->quiet_until = q->events;
    sub.n = 0;
    x->queue = &sub;
    run_begins(x);
    branch_begins(x);
    int top = level == 0 && !x->in_revisit; /* a revisit is timed as a whole */
    uint64_t t0 = top ? cost_now(x) : 0;
    set_current(x);
    memset(x->feat, 0, sizeof x->feat);
    sf_scenario *s = full_scenario(x, NULL, 0);
    sf_result r;
    sf_run(cli_target, s, o, &r);
    if (s != x->s)
      free(s);
    x->quiet_until = 0;
    x->queue = NULL;
    finish_run(x, &r);
    if (r.crashed)
      x->damaged = 1; /* its state was abandoned: no more runs here */
    else
      run_queued(x, o, &sub);
    if (top) /* the branch and its own branches */
      count_branch_time(sh, &q->why, cost_now(x) - t0);
  }
  free(sub.q);
  l->n = 0;
  x->nadded = n0;
  x->level = level;
  x->branch_id = id0;
}

static void make_root(explorer *x, uint64_t seed);

/* Set this process up to re-run kept state e's scenario up to its event,
 * where on_revisit is called: the explorer's state, and *ro and *rh, the
 * run's options and hooks (o's, with on_revisit). */
static void begin_visit(explorer *x, const sf_run_opts *o, ex_kept *e, sf_run_opts *ro,
                        sf_run_hooks *rh) {
  run_begins(x);
  make_root(x, e->seed);
  memcpy(x->added, e->added, e->nadded * sizeof *x->added);
  memcpy(x->why, e->why, e->nadded * sizeof *x->why);
  x->nadded = e->nadded;
  x->level = e->level;
  x->branch_id = sim_mix64(e->id ^ e->visits);
  x->in_revisit = 1;
  x->visit = e;
  *ro = *o;
  *rh = *o->hooks;
  rh->at_event = e->at_event;
  rh->on_event = on_revisit;
  ro->hooks = rh;
  memset(x->feat, 0, sizeof x->feat);
}

/* Re-run mode: revisit kept state e in this process. Its scenario runs up
 * to the state's event and no further (the event budget), where on_revisit
 * queues its futures; then they run (run_queued). The prefix ran before
 * without failing: a failure now is a divergence, and a crash ends the
 * worker's use (x->damaged). */
static void revisit_here(explorer *x, const sf_run_opts *o, ex_kept *e) {
  sf_run_opts ro;
  sf_run_hooks rh;
  begin_visit(x, o, e, &ro, &rh);
  ro.max_events = e->at_event;
  ex_list l = {NULL, 0, 0};
  x->queue = &l;
  beat(x);
  set_current(x);
  sf_scenario *s = full_scenario(x, NULL, 0);
  sf_result r;
  sf_run(cli_target, s, &ro, &r);
  if (s != x->s)
    free(s);
  x->queue = NULL;
  x->quiet_until = 0;
  if (x->visit || r.failed) { /* not the run that kept it */
    x->visit = NULL;
    add64(&x->sh->revisits_diverged, 1);
    l.n = 0;
  }
  if (r.crashed)
    x->damaged = 1;
  else
    run_queued(x, o, &l);
  free(l.q);
  x->in_revisit = 0;
}

/* Between roots, within the revisits' share of the time: re-run the kept
 * state revisited least for its rarity, in a child, up to its event, and
 * branch there again with new futures. A state reached once deep in a
 * branch tree gets more futures than its own tree had room for. */
static void revisit(explorer *x, const sf_run_opts *o) {
  ex_shared *sh = x->sh;
  uint32_t n = sh->nkept[x->job];
  if (!n || __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
    return;
  uint64_t pm = share_pm(x);
  if (over_share(sh, __atomic_load_n(&sh->roots, __ATOMIC_RELAXED),
                 __atomic_load_n(&sh->ns_revisit, __ATOMIC_RELAXED), EX_SHARE_REVISIT * pm / 1000,
                 EX_SHARE * pm / 1000))
    return;
  ex_cand cand[EX_KEPT];
  ex_kept *kept = job_kept(x);
  for (uint32_t i = 0; i < n; i++)
    cand[i] = kept_cand(sh, &kept[i]);
  ex_kept *e = &kept[ex_revisit_pick(cand, n, sh->site_visits[x->job])];
  e->visits++;
  sh->site_visits[x->job][e->site]++;
  add64(&sh->revisits, 1);
  uint64_t t0 = cost_now(x);
  if (x->rerun) {
    revisit_here(x, o, e);
    uint64_t dt = cost_now(x) - t0;
    add64(&sh->ns_all, dt);
    add64(&sh->ns_branch, dt);
    add64(&sh->ns_revisit, dt);
    return;
  }
  cli_child *c;
  pid_t pid = fork_child(x, &c);
  if (pid < 0)
    return;
  if (pid == 0) {
    sf_run_opts ro;
    sf_run_hooks rh;
    begin_visit(x, o, e, &ro, &rh);
    sf_scenario *s = full_scenario(x, NULL, 0);
    sf_result r;
    sf_run(cli_target, s, &ro, &r);
    if (!x->visit) /* a branch of the revisit: its run is over */
      finish_run(x, &r);
    end_child(x);
  }
  /* The revisit's own process re-runs a prefix that ran before without
   * failing: if it fails now, the target is not deterministic. */
  if (wait_child(x, c) != CLI_END_OK)
    add64(&sh->revisits_diverged, 1);
  free(c);
  uint64_t dt = cost_now(x) - t0;
  add64(&sh->ns_all, dt);
  add64(&sh->ns_branch, dt);
  add64(&sh->ns_revisit, dt);
}

/* Build root number k of this job. */
static void make_root(explorer *x, uint64_t seed) {
  sf_target_seed_scenario(cli_target, seed, x->s);
  x->nadded = 0;
  x->root_seed = seed;
  x->branch_id = seed;
  x->level = 0;
  x->forked_at = 0;
}

/* Run root seed (the campaign's root number `root`) and, in re-run mode,
 * the branches it queued. Returns 1 if the process must give way to a
 * fresh worker (a run ended in a failed assert()). */
static int run_root(explorer *x, const sf_run_opts *o, uint64_t seed, uint64_t root) {
  make_root(x, seed);
  beat(x);
  memset(x->feat, 0, sizeof x->feat);
  sf_result r;
  uint64_t t0 = cost_now(x);
  run_begins(x);
  x->forks = 0;
  ex_list l = {NULL, 0, 0};
  x->queue = x->rerun ? &l : NULL;
  if (x->rerun)
    set_current(x);
  sf_run(cli_target, x->s, o, &r);
  x->queue = NULL;
  finish_run(x, &r);
  if (x->rerun && !r.crashed)
    run_queued(x, o, &l);
  free(l.q);
  if (x->level == 0 && root > x->o.warmup) { /* the warm-up is no credit to spend */
    uint64_t dt = cost_now(x) - t0;
    add64(&x->sh->ns_all, dt);
    if (!x->forks) {
      add64(&x->sh->ns_clean, dt);
      add64(&x->sh->clean, 1);
    }
  }
  if (x->level > 0) /* a forked branch: its run is over */
    end_child(x);
  return r.crashed || x->damaged;
}

/* Send the supervisor a record: the worker is done (CLI_REC_DONE: the
 * campaign is over for it, at root k), must give way to a fresh worker
 * that starts at root k (CLI_REC_RESUME), or a progress tick
 * (CLI_REC_PROGRESS). */
static void send_record(const cli_child_io *io, int kind, uint64_t k) {
  cli_record rec;
  memset(&rec, 0, sizeof rec);
  rec.kind = kind;
  rec.seed = k;
  cli_record_send(io, &rec);
}

/* The worker: roots one after another until told to stop. After a run
 * that damaged the target's state (a failed assert()), a fresh worker goes
 * on with the next root. */
static void worker(void *arg, const cli_child_io *io) {
  explorer *x = arg;
  x->io = io;
  x->s = cli_new_scenario();
  x->added = malloc(SF_MAX_STEPS * sizeof *x->added);
  x->why = malloc(SF_MAX_STEPS * sizeof *x->why);
  if (!x->added || !x->why)
    sf_out_of_memory("explore");
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  const sf_run_hooks hooks = {.on_novel = on_novel, .ctx = x};
  o.hooks = &hooks;
  o.feature_bits = x->feat;
  uint64_t k = x->start, nroots = 0;
  int fresh = 0; /* 1: a fresh worker goes on at root k */
  cli_baseline base;
  cli_baseline_take(&base);
  for (; !fresh; k++) {
    if (__atomic_load_n(&x->sh->stop, __ATOMIC_RELAXED) || (x->o.max_roots && k >= x->o.max_roots))
      break;
    uint64_t seed = x->o.seed_base + k * x->o.jobs + x->job;
    __atomic_store_n(&io->beat[CLI_BEAT_SEED], k, __ATOMIC_RELAXED);
    __atomic_store_n(&x->sh->tree[x->job], 0, __ATOMIC_RELAXED);
    revisit(x, &o); /* its branches have a tree budget of their own */
    __atomic_store_n(&x->sh->tree[x->job], 0, __ATOMIC_RELAXED);
    if (x->damaged) { /* a revisit crashed: past this root */
      fresh = 1;
      continue;
    }
    uint64_t root = add64(&x->sh->roots, 1);
    if (root % 256 == 0 && !x->o.quiet)
      send_record(io, CLI_REC_PROGRESS, 0);
    fresh = run_root(x, &o, seed, root);
    int worn = !fresh && ++nroots % 16 == 0 ? cli_worn(&base) : 0;
    if (worn & CLI_WORN_FDS)
      add64(&x->sh->fd_restarts, 1);
    if (worn & CLI_WORN_MEMORY)
      add64(&x->sh->memory_restarts, 1);
    fresh |= worn != 0;
  }
  send_record(io, fresh ? CLI_REC_RESUME : CLI_REC_DONE, k);
  free(x->s);
  free(x->added);
  free(x->why);
}

/* ---- the supervisors and the tool ------------------------------------------ */

typedef struct {
  explorer *x;
  int done, resume;
  uint64_t next;
  uint64_t unique, files;
} supervisor;

static double now_s(void);
static double started, shown;

/* At most every 5 s: one line of the campaign's counters (stderr). */
static void progress(const ex_shared *sh) {
  double t = now_s();
  if (t - shown < 5)
    return;
  shown = t;
  fprintf(stderr,
          "explore: %.0f s, %" PRIu64 " roots, %" PRIu64 " branches, %.0f runs/s, %" PRIu64
          " failures\n",
          t - started, sh->roots, sh->branches,
          t > started ? (double)(sh->roots + sh->branches) / (t - started) : 0.0, sh->failures);
}

static void on_record(void *ctx, const cli_record *rec) {
  supervisor *sv = ctx;
  if (rec->kind == CLI_REC_DONE) {
    sv->done = 1;
    return;
  }
  if (rec->kind == CLI_REC_RESUME) {
    sv->resume = 1;
    sv->next = rec->seed;
    return;
  }
  if (rec->kind == CLI_REC_PROGRESS && sv->x->job == 0)
    progress(sv->x->sh);
  if (rec->kind != CLI_REC_FOUND)
    return;
  if (rec->o.message[0])
    sv->files++;
  if (!rec->o.nondet) /* not the first of its signature */
    return;
  sv->unique++;
  printf("explore: FAILED %s (root seed %" PRIu64 ")%s%s\n", rec->o.sig, rec->seed,
         rec->o.message[0] ? " -> " : "", rec->o.message);
  fflush(stdout);
}

static ex_shared *volatile deadline_sh; /* the running campaign's, else NULL */
static int deadline_stage;
static volatile sig_atomic_t stop_asked; /* sf_explore_stop */

void sf_explore_stop(void) {
  stop_asked = 1;
  ex_shared *sh = deadline_sh;
  if (sh)
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
}

/* The campaign's time is up: stop starting roots and branches; if the
 * branches in flight do not end within the grace period, kill them. */
static void on_deadline(int sig) {
  (void)sig;
  if (deadline_stage++ == 0)
    __atomic_store_n(&deadline_sh->stop, 1, __ATOMIC_RELAXED);
  else
    cli_interrupted = 1;
}

/* One job: a worker at a time, a fresh one after a crash. */
static void supervise(explorer *x, uint64_t *unique, uint64_t *files) {
  cli_child *c = malloc(sizeof *c);
  if (!c)
    sf_out_of_memory("explore");
  supervisor sv = {x, 0, 0, 0, 0, 0};
  while (!cli_interrupted && !__atomic_load_n(&x->sh->stop, __ATOMIC_RELAXED)) {
    sv.done = sv.resume = 0;
    x->start = sv.next;
    if (cli_child_spawn(c, worker, x) != 0) {
      cli_error("explore: cannot start a worker process: %s", strerror(errno));
      break;
    }
    cli_limits lim = cli_run_limits;
    if (lim.time_ms)
      lim.time_ms += EX_HANG_SLACK_MS;
    int ended = cli_child_wait(c, &lim, on_record, &sv);
    if (sv.done || ended == CLI_END_INTERRUPTED)
      break;
    if (sv.resume && ended == CLI_END_OK)
      continue;
    /* the worker died in a root's own run (a forked branch's crash is
     * caught by its parent): that root is the failure, or in re-run mode
     * the branch or revisit it ran (ex_cur) */
    uint64_t k = c->last_seed;
    cli_outcome o;
    cli_crash_outcome(c, ended == CLI_END_OK ? CLI_END_CRASH : ended, &o);
    x->s = cli_new_scenario();
    uint64_t seed = x->o.seed_base + k * x->o.jobs + x->job;
    const ex_cur *cur = &x->cur[x->job];
    int in_cur = x->rerun && __atomic_load_n(&cur->set, __ATOMIC_ACQUIRE);
    make_root(x, in_cur ? cur->seed : seed);
    uint32_t ncur = in_cur && cur->n <= SF_MAX_STEPS - x->s->nsteps ? cur->n : 0;
    if (ncur) {
      memcpy(&x->s->steps[x->s->nsteps], cur->added, ncur * sizeof *cur->added);
      x->s->nsteps += ncur;
      sf_normalize(x->s);
    }
    static cli_child_io none = {-1, 0, 0, NULL};
    x->io = &none;
    int first;
    char path[4096] = "";
    int branch = in_cur && cur->n; /* the worker ran a branch's or a revisit's steps */
    add64(&x->sh->failures, 1);
    if (branch)
      add64(&x->sh->failures_in_branches, 1);
    save_failure(x, "crash-", str_hash(o.sig), NULL, x->o.all_crashes, branch, x->s, path,
                 sizeof path, &first);
    write_origin(x, path, x->root_seed, cur->added, cur->why, ncur);
    cli_record rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = CLI_REC_FOUND;
    rec.seed = x->root_seed;
    rec.o = o;
    rec.o.nondet = first;
    snprintf(rec.o.message, sizeof rec.o.message, "%s", path);
    on_record(&sv, &rec);
    free(x->s);
    x->s = NULL;
    if (x->o.stop_on_first)
      __atomic_store_n(&x->sh->stop, 1, __ATOMIC_RELAXED);
    sv.next = k + 1; /* (after a revisit's crash, root k is skipped) */
    if (x->rerun)    /* the fresh worker's runs set it again */
      __atomic_store_n(&x->cur[x->job].set, 0, __ATOMIC_RELEASE);
  }
  free(c);
  *unique = sv.unique;
  *files = sv.files;
}

/* Assertion-site states, for --stats: site i's state k (k < classes(), a
 * MAXIMIZE site's value class) is value *v in bucket *b; 0 if the class
 * holds no value. */
static uint32_t classes(const sf_site *site) {
  return site->kind == SF_SITE_MAXIMIZE ? SF_VALUE_CLASSES : 1u;
}
static int site_state(size_t i, uint32_t k, uint64_t *v, uint32_t *b) {
  *v = sf_features_class_value(k);
  *b = *v == UINT64_MAX ? 0 : sf_features_site_bucket((uint32_t)i, *v);
  return *v != UINT64_MAX;
}

/* Map every assertion-site state's bucket: to its site's slot (of two
 * sites in one bucket, the first in catalog order), and count the states
 * there, up to 2 (--stats marks shared counts). */
static void map_site_states(ex_shared *sh) {
  size_t n = 0;
  sf_site *sites = sf_sites(&n);
  uint64_t v;
  uint32_t b;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < classes(&sites[i]); k++) {
      if (!site_state(i, k, &v, &b) || sh->site_states[b] == 2)
        continue;
      if (sh->site_states[b]++ == 0)
        sh->site_of[b] = (uint8_t)(i < EX_SITE_SLOTS ? i : EX_SITE_SLOTS - 1);
    }
}

/* One state's name: the site's, and for a MAXIMIZE site its value class. */
static void state_name(const sf_site *site, uint32_t k, uint64_t v, char *buf, size_t cap) {
  if (site->kind == SF_SITE_MAXIMIZE)
    snprintf(buf, cap, "%s = %s%" PRIu64, site->name, k < 32 ? "" : ">= ", v);
  else
    snprintf(buf, cap, "%s", site->name);
}

/* The name of the assertion-site state whose bucket is `bucket` (the
 * first in catalog and class order) into buf; 0 if it is no site's. */
static int site_bucket_name(const ex_shared *sh, uint32_t bucket, char *buf, size_t cap) {
  size_t n = 0;
  sf_site *sites = sh->site_states[bucket] ? sf_sites(&n) : NULL;
  uint64_t v;
  uint32_t b;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < classes(&sites[i]); k++)
      if (site_state(i, k, &v, &b) && b == bucket) {
        state_name(&sites[i], k, v, buf, cap);
        return 1;
      }
  return 0;
}

/* The name of the state a branch forked at: an assertion site's state
 * (the first in catalog and class order whose bucket it is), else the kind
 * of the feature that reached its bucket. */
static void why_name(const ex_shared *sh, const ex_why *y, char *buf, size_t cap) {
  if (y->kind != SF_FT_SITE || !site_bucket_name(sh, y->bucket, buf, cap))
    snprintf(buf, cap, "a %s feature", sf_feature_kind_name(y->kind));
}

/* 1 if step i of a branch's steps (added, why) begins a fork of its own:
 * the first, or injected after another event or at another state than the
 * one before. */
static int fork_begins(const sf_step *added, const ex_why *why, uint32_t i) {
  return i == 0 || added[i].after_event != added[i - 1].after_event ||
         why[i].bucket != why[i - 1].bucket || why[i].at_us != why[i - 1].at_us ||
         why[i].revisit != why[i - 1].revisit;
}

/* Append what fmt says to line (len of it used, cap its size); the new
 * length, at most cap - 1 (a line too long is cut). */
static size_t line_add(char *line, size_t len, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t line_add(char *line, size_t len, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line + len, cap - len, fmt, ap);
  va_end(ap);
  return k < 0 ? len : len + (size_t)k < cap ? len + (size_t)k : cap - 1;
}

/* --origins: append crash file path's line, how the explorer came to run
 * it: its root's seed, and each fork on the way (the steps added to the
 * root, n of them, and why each was): after which event, at what virtual
 * time, at which state (its kind, bucket, the campaign's runs that had
 * reached it before, the node it is about, whether a revisit forked it),
 * and how many steps it injected. One write() of the whole line to a file
 * opened for appending, so that workers' lines do not interleave. */
static void write_origin(const explorer *x, const char *path, uint64_t seed, const sf_step *added,
                         const ex_why *why, uint32_t n) {
  if (!x->o.origins || !path[0])
    return;
  static char line[8192];
  const size_t cap = sizeof line - 1; /* room for the newline */
  const char *base = strrchr(path, '/');
  uint32_t forks = 0;
  for (uint32_t i = 0; i < n; i++)
    forks += (uint32_t)fork_begins(added, why, i);
  size_t len = line_add(line, 0, cap, "%s root=%" PRIu64 " forks=%" PRIu32, base ? base + 1 : path,
                        seed, forks);
  for (uint32_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && !fork_begins(added, why, j);)
      j++;
    char name[512];
    why_name(x->sh, &why[i], name, sizeof name);
    len = line_add(line, len, cap,
                   " | event=%" PRIu32 " t=%" PRIu64 ".%06" PRIu64 "s %s bucket=%" PRIu32
                   " runs=%" PRIu32 " node=%d steps=%" PRIu32 "%s \"%s\"",
                   added[i].after_event, why[i].at_us / 1000000, why[i].at_us % 1000000,
                   sf_feature_kind_name(why[i].kind), why[i].bucket, why[i].runs, why[i].node,
                   j - i, why[i].revisit ? " revisit" : "", name);
  }
  line[len++] = '\n';
  int fd = open(x->o.origins, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, line, len) != (ssize_t)len)
    add64(&x->sh->origins_unsaved, 1);
  if (fd >= 0)
    close(fd);
}

/* --stats: how many runs reached each assertion site's states, and the
 * states job 0 keeps for revisits (named by the first state in catalog
 * and class order whose bucket theirs is). */
static void print_stats(const explorer *x) {
  const ex_shared *sh = x->sh;
  size_t n = 0;
  sf_site *sites = sf_sites(&n);
  char name[512];
  uint64_t v;
  uint32_t b;
  printf("explore: runs (roots and branches) that reached each assertion-site state; * a "
         "count shared with another state, whose bucket is the same:\n");
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < classes(&sites[i]); k++) {
      if (!site_state(i, k, &v, &b) || (sites[i].kind == SF_SITE_MAXIMIZE && !sh->bucket_runs[b]))
        continue; /* a MAXIMIZE site's classes: those reached */
      state_name(&sites[i], k, v, name, sizeof name);
      printf("  %10" PRIu32 "%s %s\n", sh->bucket_runs[b], sh->site_states[b] > 1 ? "*" : " ",
             name);
    }
  /* (a campaign that ended within its warm-up has no share to tell: the
   * warm-up's branches count, its roots do not) */
  uint64_t all = sh->ns_all > sh->ns_branch ? sh->ns_all : 0;
  printf("explore: feature buckets first reached by roots %" PRIu64
         ", by branches and revisits %" PRIu64
         "; branches took %.1f %% of the time after the warm-up (revisits %.1f %%, new "
         "branches at site states %.1f %%)\n",
         sh->new_in_roots, sh->new_in_branches,
         all ? 100.0 * (double)sh->ns_branch / (double)all : 0.0,
         all ? 100.0 * (double)sh->ns_revisit / (double)all : 0.0,
         all ? 100.0 * (double)sh->ns_site / (double)all : 0.0);
  const ex_kept *kept = x->kept;
  printf("explore: failures found by roots %" PRIu64 ", by branches and revisits %" PRIu64
         "; news (a new kind, or a new way to one) %" PRIu64 " and %" PRIu64
         ", which weigh the branches' share at %.1f %% (%s)\n",
         sh->failures - sh->failures_in_branches, sh->failures_in_branches, sh->news_in_roots,
         sh->news_in_branches, yield_pm(sh) / 10.0, x->yield ? "on" : "off, -yield");
  printf("explore: branches by the state they forked at: %" PRIu64 " in revisits of kept states",
         sh->forked_at_kept);
  for (unsigned t = SF_FT__NONE + 1; t < SF_FT__COUNT; t++)
    if (sh->forked_at_kind[t])
      printf(", %" PRIu64 " at %s states", sh->forked_at_kind[t], sf_feature_kind_name(t));
  printf("\n");
  printf("explore: job 0 keeps %" PRIu32 " states\n", sh->nkept[0]);
  for (uint32_t e = 0; e < sh->nkept[0]; e++) {
    if (!site_bucket_name(sh, kept[e].bucket, name, sizeof name))
      snprintf(name, sizeof name, "(bucket %" PRIu32 ")", kept[e].bucket);
    printf("explore: kept %s at level %" PRIu32 ", %" PRIu32 " revisits, way %" PRIu32
           ", at %.3f s of a run to %.3f s\n",
           name, kept[e].level, kept[e].visits, kept[e].ways, (double)kept[e].at_us / 1e6,
           (double)kept[e].end_us / 1e6);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* simfuzz-allow-nondeterminism: the campaign's budget */
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sf_explore_defaults(sf_explore_opts *o) {
  *o = (sf_explore_opts){.jobs = 1,
                         .depth = 3,
                         .energy = 8,
                         .budget = 256,
                         .warmup = EX_WARMUP,
                         .keep = EX_KEPT,
                         .worn = EX_WORN_VISITS,
                         .branch_timeout_s = (uint32_t)(CLI_DEFAULT_TIMEOUT_MS / 1000),
                         .seconds = 60};
}

/* The tool's process: supervise job 0 here and the other jobs in forked
 * supervisors until the deadline (SIGALRM) or a stop; the campaign's
 * counters are in sh when it returns. */
static void run_jobs(explorer *x) {
  double seconds = x->o.seconds;
  struct sigaction sa, old_stop[2], old_alrm;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask); /* no SA_RESTART: the wait loops wake up */
  cli_catch_stop(old_stop);
  pid_t sup[EX_MAX_JOBS];
  uint32_t nsup = 0;
  for (uint32_t j = 1; j < x->o.jobs; j++) {
    pid_t p = cli_fork_tied();
    if (p == 0) {
      x->job = j;
      sa.sa_handler = on_deadline;
      sigaction(SIGALRM, &sa, NULL);
      cli_signals_changed(); /* its workers must not inherit on_deadline */
      uint64_t u, f;
      supervise(x, &u, &f);
      fflush(stdout);
      _exit(u ? 1 : 0);
    }
    if (p > 0)
      sup[nsup++] = p;
  }
  sa.sa_handler = on_deadline;
  sigaction(SIGALRM, &sa, &old_alrm);
  cli_signals_changed();
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t)seconds;
  it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
  if (!it.it_value.tv_sec && !it.it_value.tv_usec)
    it.it_value.tv_usec = 1; /* a zero timer is a disarmed one */
  it.it_interval.tv_sec = 5; /* then the grace period for branches in flight */
  setitimer(ITIMER_REAL, &it, NULL);
  uint64_t unique = 0, files = 0;
  supervise(x, &unique, &files);
  __atomic_store_n(&x->sh->stop, 1, __ATOMIC_RELAXED);
  for (uint32_t j = 0; j < nsup; j++) {
    int st;
    if (cli_interrupted)
      kill(sup[j], SIGTERM);
    while (waitpid(sup[j], &st, 0) < 0 && errno == EINTR)
      if (cli_interrupted)
        kill(sup[j], SIGTERM);
  }
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_REAL, &it, NULL);
  cli_restore_stop(old_stop);
  sigaction(SIGALRM, &old_alrm, NULL);
}

static void summarize(const ex_shared *sh, double seconds, sf_explore_summary *sum) {
  memset(sum, 0, sizeof *sum);
  for (uint32_t i = 0; i < EX_SIGS; i++)
    sum->kinds += sh->sig[i].hash != 0;
#define COPY_(name, what) sum->name = sh->name;
  SF_EXPLORE_COUNTS(COPY_)
#undef COPY_
  sum->seconds = seconds;
  sum->files_per_kind = EX_FILES_PER_SIG;
}

int sf_explore(const sf_explore_opts *o, sf_explore_summary *sum) {
  SIM_ASSERT(o->out && o->jobs >= 1 && o->jobs <= EX_MAX_JOBS && o->keep <= EX_KEPT);
  explorer x;
  memset(&x, 0, sizeof x);
  x.o = *o;
  ex_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED)
    return cli_error("explore: cannot map shared memory: %s", strerror(errno)), -1;
  memset(sh, 0, sizeof *sh);
  x.sh = sh;
  map_site_states(sh);
  deadline_sh = sh;
  if (stop_asked) /* asked before it started: it stops at once */
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
  size_t kept_size = (size_t)x.o.jobs * EX_KEPT * sizeof(ex_kept);
  size_t cur_size = (size_t)x.o.jobs * sizeof(ex_cur);
  x.kept = mmap(NULL, kept_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  x.cur = mmap(NULL, cur_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (x.kept == MAP_FAILED || x.cur == MAP_FAILED) {
    munmap(sh, sizeof *sh);
    if (x.kept != MAP_FAILED)
      munmap(x.kept, kept_size);
    if (x.cur != MAP_FAILED)
      munmap(x.cur, cur_size);
    return cli_error("explore: cannot map shared memory: %s", strerror(errno)), -1;
  }
  x.rerun = !(sf_search_off() & SF_SEARCH_RERUN);
  x.yield = !(sf_search_off() & SF_SEARCH_YIELD);
  double t0 = now_s();
  started = shown = t0;
  run_jobs(&x);
  summarize(sh, now_s() - t0, sum);
  if (o->on_summary)
    o->on_summary(o->summary_ctx, sum);
  if (x.o.stats)
    print_stats(&x);
  deadline_sh = NULL; /* before the unmap: a late sf_explore_stop must not write there */
  munmap(sh, sizeof *sh);
  munmap(x.kept, kept_size);
  munmap(x.cur, cur_size);
  return 0;
}
