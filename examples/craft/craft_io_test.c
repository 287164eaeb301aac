/*
 * craft_io_test: checks of the backend's durability promises when it
 * returns disk errors to raft (CRAFT_RETURN_ERRORS), driven on a one-node
 * world without raft's core: the backend's appends are submitted by hand,
 * one sync is made to fail, the node crashes, and a fresh backend loads
 * what survived. The promise: an append acknowledged with status 0 is in
 * the log that load() returns after a crash, with its own term. With
 * snapshots: a stored snapshot is what load() and snapshot_get() return
 * after a crash, an installed one replaces the log, and the log goes on
 * after it.
 *
 * Usage: craft_io_test   (prints one line per check; exit 0 if all pass)
 */
#include "craft_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_APPENDS = 4 };

typedef struct {
  struct raft_io io;
  int have_io;
  struct raft_io_append req[MAX_APPENDS];
  struct raft_entry entry[MAX_APPENDS];
  char payload[MAX_APPENDS][8];
  raft_index index[MAX_APPENDS]; /* the log index raft meant for it */
  int status[MAX_APPENDS];       /* -1 until its callback ran */
  int n;
} fixture;

static fixture fx;
static int with_snapshots; /* the next world's backend stores snapshots */

static void append_cb(struct raft_io_append *req, int status) {
  fx.status[(int)(intptr_t)req->data] = status;
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  if (craft_io_init(&fx.io, w, node, CRAFT_RETURN_ERRORS, with_snapshots) == 0)
    fx.have_io = 1;
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)w;
  (void)node;
  if (fx.have_io && craft_io_owns_timer(tag))
    craft_io_timer(&fx.io, tag);
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)w;
  (void)node;
  (void)why;
  if (fx.have_io)
    craft_io_free(&fx.io);
  fx.have_io = 0;
}

static const sim_node_ops ops = {boot, NULL, timer, NULL, teardown}; /* no datagrams */

/* Submit one entry of term `term` that raft places at log index `index`. */
static void append(raft_index index, raft_term term) {
  int k = fx.n++;
  snprintf(fx.payload[k], sizeof fx.payload[k], "e%d", k);
  fx.entry[k].term = term;
  fx.entry[k].type = RAFT_COMMAND;
  fx.entry[k].buf.base = fx.payload[k];
  fx.entry[k].buf.len = strlen(fx.payload[k]) + 1;
  fx.entry[k].batch = NULL;
  fx.req[k].data = (void *)(intptr_t)k;
  fx.index[k] = index;
  fx.status[k] = -1;
  if (fx.io.append(&fx.io, &fx.req[k], &fx.entry[k], 1, append_cb) != 0)
    fx.status[k] = RAFT_IOERR;
}

/* A world with one node, booted (its backend initialised), whose crashes
 * and failed syncs keep each unsynced sector with rate keep_ppm. */
static sim_world *booted_world(uint32_t keep_ppm) {
  memset(&fx, 0, sizeof fx);
  sim_config c;
  sim_config_default(&c);
  c.nodes = 1;
  c.ops = &ops;
  c.disk.unsynced_keep_ppm = keep_ppm;
  c.disk.unsynced_corrupt_ppm = 0;
  sim_world *w = sim_world_create(&c);
  if (!w)
    return NULL;
  sim_step(w); /* the node boots */
  if (!fx.have_io) {
    sim_world_destroy(w);
    return NULL;
  }
  return w;
}

/* booted_world() whose failed syncs lose every unsynced sector,
 * bootstrapped (entry 1), its backend loaded as raft would. */
static sim_world *world(void) {
  sim_world *w = booted_world(0);
  if (!w)
    return NULL;
  struct raft_configuration conf;
  raft_configuration_init(&conf);
  raft_configuration_add(&conf, 1, craft_address(0), RAFT_VOTER);
  int rv = fx.io.bootstrap(&fx.io, &conf);
  raft_configuration_close(&conf);
  raft_term term;
  raft_id vote;
  struct raft_snapshot *snap;
  raft_index start;
  struct raft_entry *entries;
  size_t n;
  if (rv != 0 || fx.io.load(&fx.io, &term, &vote, &snap, &start, &entries, &n) != 0 || n != 1) {
    sim_world_destroy(w);
    return NULL;
  }
  raft_free(entries[0].batch);
  raft_free(entries);
  return w;
}

/* Crash and restart the node, load what survived, and check that every
 * acknowledged append is there with its term and payload. 0 if so. */
static int acknowledged_appends_survive(sim_world *w, const char *what) {
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000);
  sim_node_crash(w, 0);
  sim_node_restart(w, 0);
  sim_run(w, sim_now(w) + SIM_NS_PER_MS, 100000);
  raft_term term;
  raft_id vote;
  struct raft_snapshot *snap;
  raft_index start;
  struct raft_entry *entries = NULL;
  size_t n = 0;
  if (!fx.have_io || fx.io.load(&fx.io, &term, &vote, &snap, &start, &entries, &n) != 0) {
    printf("FAIL: %s: the restarted node cannot load its log\n", what);
    return 1;
  }
  int bad = 0;
  for (int k = 0; k < fx.n; k++) {
    if (fx.status[k] == -1) {
      printf("FAIL: %s: append %d was never completed\n", what, k);
      bad = 1;
      continue;
    }
    if (fx.status[k] != 0)
      continue;
    raft_index i = fx.index[k];
    if (i > n || entries[i - 1].term != fx.entry[k].term ||
        entries[i - 1].buf.len != fx.entry[k].buf.len ||
        memcmp(entries[i - 1].buf.base, fx.payload[k], fx.entry[k].buf.len) != 0) {
      printf("FAIL: %s: append %d (index %llu) was acknowledged, but the log loaded after a "
             "crash has %zu entries and not it\n",
             what, k, (unsigned long long)i, n);
      bad = 1;
    }
  }
  if (n) {
    raft_free(entries[0].batch);
    raft_free(entries);
  }
  if (!bad)
    printf("ok: %s\n", what);
  return bad;
}

/* Two appends wait for their syncs; the first sync fails and decides both
 * appends' sectors (lost). The second append's own sync then has nothing
 * left to write: it must not be acknowledged. */
static int later_appends_after_failed_sync(void) {
  sim_world *w = world();
  if (!w) {
    printf("FAIL: set-up\n");
    return 1;
  }
  append(2, 1);
  append(3, 1);
  sim_disk_fail_nth(w, 0, SIM_DISK_SYNC, 1);
  int bad = acknowledged_appends_survive(w, "an append written before a failed sync is not "
                                            "acknowledged by a later sync");
  if (fx.status[0] == 0) {
    printf("FAIL: the append whose own sync failed was acknowledged\n");
    bad = 1;
  }
  sim_world_destroy(w);
  return bad;
}

/* An append fails at its sync; raft (its leader) truncates its in-memory
 * log at that index and appends there again: the new entry must be written
 * at that index, so the backend's next index rolls back as libuv's does. */
static int next_index_rolls_back(void) {
  sim_world *w = world();
  if (!w) {
    printf("FAIL: set-up\n");
    return 1;
  }
  sim_disk_fail_nth(w, 0, SIM_DISK_SYNC, 1);
  append(2, 1);
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000);
  int bad = 0;
  if (fx.status[0] != RAFT_IOERR) {
    printf("FAIL: the append whose sync failed completed with %d\n", fx.status[0]);
    bad = 1;
  }
  append(2, 2); /* the leader's retry at the same index, in a later term */
  bad |= acknowledged_appends_survive(w, "after a failed append, the next append goes to the "
                                         "index raft gives it");
  if (fx.status[1] != 0) {
    printf("FAIL: the retried append failed (%d)\n", fx.status[1]);
    bad = 1;
  }
  sim_world_destroy(w);
  return bad;
}

/* A disk stall (sim_disk_stall) holds an append already queued and one
 * submitted during the stall until the stall ends, then both complete, in
 * order; appends after it take the usual 0.5-4 ms again. */
static int a_stall_holds_appends_until_it_ends(void) {
  sim_world *w = world();
  if (!w) {
    printf("FAIL: set-up\n");
    return 1;
  }
  int bad = 0;
  uint64_t t0 = sim_now(w);
  append(2, 1);
  sim_disk_stall(w, 0, 500 * SIM_NS_PER_MS);
  sim_run(w, t0 + 100 * SIM_NS_PER_MS, 100000);
  append(3, 1);
  sim_run(w, t0 + 490 * SIM_NS_PER_MS, 100000);
  if (fx.status[0] != -1 || fx.status[1] != -1) {
    printf("FAIL: an append completed during the stall (%d, %d)\n", fx.status[0], fx.status[1]);
    bad = 1;
  }
  sim_run(w, t0 + 700 * SIM_NS_PER_MS, 100000);
  if (fx.status[0] != 0 || fx.status[1] != 0) {
    printf("FAIL: the stalled appends did not complete after it (%d, %d)\n", fx.status[0],
           fx.status[1]);
    bad = 1;
  }
  uint64_t t1 = sim_now(w);
  append(4, 1);
  sim_run(w, t1 + 5 * SIM_NS_PER_MS, 100000);
  if (fx.status[2] != 0) {
    printf("FAIL: an append after the stall waited (%d)\n", fx.status[2]);
    bad = 1;
  }
  if (craft_io_get_stats(&fx.io)->stalls == 0) {
    printf("FAIL: no stall counted\n");
    bad = 1;
  }
  if (!bad)
    printf("ok: a disk stall holds appends until it ends\n");
  sim_world_destroy(w);
  return bad;
}

/* Load the node's log: 0 and *n entries (freed), or -1. */
static int load_count(raft_term *term, size_t *n) {
  raft_id vote;
  struct raft_snapshot *snap;
  raft_index start;
  struct raft_entry *entries = NULL;
  *n = 0;
  if (fx.io.load(&fx.io, term, &vote, &snap, &start, &entries, n) != 0)
    return -1;
  if (*n) {
    raft_free(entries[0].batch);
    raft_free(entries);
  }
  return 0;
}

/* Bootstrap writes entry 1, then the term; the term's write fails and the
 * node crashes with entry 1 alone on disk. At restart there is no term:
 * raft (since 2024) asserts that such a node has no log, and the node must
 * be able to bootstrap again. */
static int half_bootstrap_is_no_bootstrap(void) {
  sim_world *w = booted_world(1000000); /* a crash keeps what was written */
  if (!w)
    return 1;
  struct raft_configuration conf;
  raft_configuration_init(&conf);
  raft_configuration_add(&conf, 1, craft_address(0), RAFT_VOTER);
  sim_disk_fail_nth(w, 0, SIM_DISK_WRITE, 2); /* entry 1 is written, the term is not */
  int bad = fx.io.bootstrap(&fx.io, &conf) == 0;
  sim_node_crash(w, 0);
  sim_node_restart(w, 0);
  sim_run(w, sim_now(w) + SIM_NS_PER_MS, 100000);
  raft_term term = 1;
  size_t n = 1;
  if (bad || !fx.have_io || load_count(&term, &n) != 0 || term != 0 || n != 0) {
    printf("FAIL: after a bootstrap whose term write failed, load gives term %llu and %zu "
           "entries (want 0 and none)\n",
           (unsigned long long)term, n);
    bad = 1;
  } else if (fx.io.bootstrap(&fx.io, &conf) != 0 || load_count(&term, &n) != 0 || term != 1 ||
             n != 1) {
    printf("FAIL: a node whose bootstrap never completed cannot bootstrap again\n");
    bad = 1;
  } else {
    printf("ok: a bootstrap that left entry 1 without a term is no bootstrap, and is redone\n");
  }
  raft_configuration_close(&conf);
  sim_world_destroy(w);
  return bad;
}

static int put_status, get_status;
static struct raft_snapshot *got;

static void put_cb(struct raft_io_snapshot_put *req, int status) {
  (void)req;
  put_status = status;
}

static void get_cb(struct raft_io_snapshot_get *req, struct raft_snapshot *snapshot, int status) {
  (void)req;
  get_status = status;
  got = snapshot;
}

static void snapshot_free(struct raft_snapshot *sn) {
  if (!sn)
    return;
  raft_configuration_close(&sn->configuration);
  raft_free(sn->bufs[0].base);
  raft_free(sn->bufs);
  raft_free(sn);
}

/* Store a snapshot at `index` of term 2 holding `data`, keeping `trailing`
 * entries; its callback's status. */
static int put(sim_world *w, raft_index index, unsigned trailing, const char *data) {
  struct raft_snapshot sn;
  memset(&sn, 0, sizeof sn);
  sn.index = index;
  sn.term = 2;
  raft_configuration_init(&sn.configuration);
  raft_configuration_add(&sn.configuration, 1, craft_address(0), RAFT_VOTER);
  sn.configuration_index = 1;
  struct raft_buffer buf = {(void *)data, strlen(data) + 1};
  sn.bufs = &buf;
  sn.n_bufs = 1;
  struct raft_io_snapshot_put req;
  put_status = -1;
  int rv = fx.io.snapshot_put(&fx.io, trailing, &req, &sn, put_cb);
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000);
  raft_configuration_close(&sn.configuration);
  return rv != 0 ? rv : put_status;
}

/* Crash, restart and load: the snapshot and log start load() gives. */
static int reload(sim_world *w, struct raft_snapshot **sn, raft_index *start, size_t *n) {
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000); /* the appends complete */
  sim_node_crash(w, 0);
  sim_node_restart(w, 0);
  sim_run(w, sim_now(w) + SIM_NS_PER_MS, 100000);
  raft_term term;
  raft_id vote;
  struct raft_entry *entries = NULL;
  if (!fx.have_io || fx.io.load(&fx.io, &term, &vote, sn, start, &entries, n) != 0)
    return -1;
  if (*n) {
    raft_free(entries[0].batch);
    raft_free(entries);
  }
  return 0;
}

/* A snapshot that keeps trailing entries leaves them, and load starts at
 * the first of them (as libuv's backend, which deletes older segments); an
 * installed one (trailing 0) replaces the log, and appends go on after it.
 * Each survives a crash, and snapshot_get reads it back. */
static int snapshots_survive_and_installs_replace_the_log(void) {
  with_snapshots = 1; /* at every boot of this world's node */
  sim_world *w = world();
  if (!w) {
    printf("FAIL: set-up\n");
    return 1;
  }
  int bad = 0;
  append(2, 1);
  append(3, 1);
  struct raft_snapshot *sn = NULL;
  raft_index start = 0;
  size_t n = 0;
  if (put(w, 3, 2, "taken") != 0 || reload(w, &sn, &start, &n) != 0 || !sn || sn->index != 3 ||
      start != 2 || n != 2 || strcmp(sn->bufs[0].base, "taken") != 0) {
    printf("FAIL: a snapshot keeping 2 trailing entries: load gives snapshot %llu, start %llu, "
           "%zu entries (want 3, 2, 2)\n",
           sn ? (unsigned long long)sn->index : 0ull, (unsigned long long)start, n);
    bad = 1;
  }
  snapshot_free(sn);
  sn = NULL;
  fx.n = 0;
  append(4, 1); /* to be replaced by the install */
  int rv = put(w, 10, 0, "installed");
  append(11, 2); /* raft's log goes on after the installed snapshot */
  if (rv != 0 || reload(w, &sn, &start, &n) != 0 || !sn || sn->index != 10 || start != 11 ||
      n != 1 || strcmp(sn->bufs[0].base, "installed") != 0) {
    printf("FAIL: an installed snapshot: load gives snapshot %llu, start %llu, %zu entries "
           "(want 10, 11, 1)\n",
           sn ? (unsigned long long)sn->index : 0ull, (unsigned long long)start, n);
    bad = 1;
  }
  snapshot_free(sn);
  struct raft_io_snapshot_get req;
  got = NULL;
  get_status = -1;
  if (fx.io.snapshot_get(&fx.io, &req, get_cb) != 0)
    get_status = -2;
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000);
  if (get_status != 0 || !got || got->index != 10 || got->configuration.n != 1 ||
      strcmp(got->bufs[0].base, "installed") != 0) {
    printf("FAIL: snapshot_get after the restart: status %d\n", get_status);
    bad = 1;
  }
  snapshot_free(got);
  if (!bad)
    printf("ok: snapshots survive a crash; an installed one replaces the log, which goes on "
           "after it\n");
  sim_world_destroy(w);
  with_snapshots = 0;
  return bad;
}

/* The gauge of InstallSnapshot stores in progress (craft_io_stats.installing,
 * the "a snapshot is being installed" hazard state of craft_kv): an install
 * (trailing 0) counts from snapshot_put to its callback, a snapshot that
 * keeps trailing entries never counts. */
static int installing_counts_installs_until_they_complete(void) {
  with_snapshots = 1;
  sim_world *w = world();
  if (!w) {
    printf("FAIL: set-up\n");
    return 1;
  }
  append(2, 1);
  struct raft_snapshot sn;
  memset(&sn, 0, sizeof sn);
  sn.index = 2;
  sn.term = 1;
  raft_configuration_init(&sn.configuration);
  raft_configuration_add(&sn.configuration, 1, craft_address(0), RAFT_VOTER);
  sn.configuration_index = 1;
  struct raft_buffer buf = {(void *)"s", 2};
  sn.bufs = &buf;
  sn.n_bufs = 1;
  struct raft_io_snapshot_put taken, installed;
  const craft_io_stats *st = craft_io_get_stats(&fx.io);
  int rv = fx.io.snapshot_put(&fx.io, 1, &taken, &sn, put_cb);
  uint64_t after_taken = st->installing;
  rv |= fx.io.snapshot_put(&fx.io, 0, &installed, &sn, put_cb);
  uint64_t pending = st->installing;
  sim_run(w, sim_now(w) + 50 * SIM_NS_PER_MS, 100000);
  uint64_t done = st->installing;
  raft_configuration_close(&sn.configuration);
  int bad = rv != 0 || after_taken != 0 || pending != 1 || done != 0 || put_status != 0;
  if (bad)
    printf("FAIL: installing is %llu after a taken snapshot, %llu with an install pending, %llu "
           "after both completed (want 0, 1, 0; submit %d, status %d)\n",
           (unsigned long long)after_taken, (unsigned long long)pending, (unsigned long long)done,
           rv, put_status);
  else
    printf("ok: an install counts as in progress until its callback\n");
  sim_world_destroy(w);
  with_snapshots = 0;
  return bad;
}

int main(void) {
  int bad = later_appends_after_failed_sync();
  bad |= next_index_rolls_back();
  bad |= a_stall_holds_appends_until_it_ends();
  bad |= half_bootstrap_is_no_bootstrap();
  bad |= snapshots_survive_and_installs_replace_the_log();
  bad |= installing_counts_installs_until_they_complete();
  return bad;
}
