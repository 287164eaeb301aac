/* Disk: durability after sync, loss/tearing/corruption of unsynced sectors
 * at a crash, injected EIO (rates and countdown), budgets. */
#include "testlib.h"

#include <errno.h>
#include <string.h>

static sim_world *disk_world(recorder *r, uint32_t keep, uint32_t corrupt, uint64_t seed) {
  sim_config c = recorder_config(r, 1, seed);
  c.disk.unsynced_keep_ppm = keep;
  c.disk.unsynced_corrupt_ppm = corrupt;
  return recorder_world(&c);
}

static void crash_restart(sim_world *w) {
  sim_node_crash(w, 0);
  sim_node_restart(w, 0);
  sim_run(w, UINT64_MAX, 0);
}

TEST(write_read_size_truncate) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_size(w, 0), 0);
  CHECK_EQ(sim_disk_write(w, 0, 10, "hello", 5), 5);
  CHECK_EQ(sim_disk_size(w, 0), 15);
  char b[32] = {0};
  CHECK_EQ(sim_disk_read(w, 0, 0, b, sizeof b), 15);
  CHECK(memcmp(b, "\0\0\0\0\0\0\0\0\0\0hello", 15) == 0);
  CHECK_EQ(sim_disk_read(w, 0, 12, b, 2), 2);
  CHECK(memcmp(b, "ll", 2) == 0);
  CHECK_EQ(sim_disk_read(w, 0, 100, b, 2), 0);
  CHECK_EQ(sim_disk_truncate(w, 0, 12), 0);
  CHECK_EQ(sim_disk_size(w, 0), 12);
  CHECK_EQ(sim_disk_truncate(w, 0, 20), 0);
  memset(b, 0x55, sizeof b);
  CHECK_EQ(sim_disk_read(w, 0, 10, b, 10), 10);
  CHECK(memcmp(b, "he\0\0\0\0\0\0\0\0", 10) == 0); /* growth reads zeros */
  CHECK_EQ(sim_disk_write(w, 7, 0, "x", 1), -EINVAL);
  CHECK_EQ(sim_disk_write(w, 0, 0, NULL, 1), -EINVAL);
  FX_END();
}

TEST(synced_data_survives_crash) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "durable", 7), 7);
  CHECK_EQ(sim_disk_sync(w, 0), 0);
  CHECK_EQ(sim_disk_write(w, 0, 7, "-volatile", 9), 9);
  crash_restart(w);
  char b[32] = {0};
  CHECK_EQ(sim_disk_size(w, 0), 7);
  CHECK_EQ(sim_disk_read(w, 0, 0, b, sizeof b), 7);
  CHECK(memcmp(b, "durable", 7) == 0);
  CHECK(sim_get_stats(w)->sectors_lost >= 1);
  FX_END();
}

TEST(unsynced_write_all_kept) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, SIM_PPM, 0, 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "kept", 4), 4);
  crash_restart(w);
  char b[8] = {0};
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 8), 4);
  CHECK(memcmp(b, "kept", 4) == 0);
  CHECK_EQ(sim_get_stats(w)->sectors_lost, 0);
  FX_END();
}

/* A process that stops (sim_node_stop: an upgrade's restart) keeps every
 * write, synced or not, as the page cache of a machine that stays up; the
 * writes it left unsynced are lost at a later crash as ever. Its teardown
 * says STOP, and its trace record is a crash record with b = 1. */
TEST(a_stopped_process_keeps_the_page_cache) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "durable", 7), 7);
  CHECK_EQ(sim_disk_sync(w, 0), 0);
  CHECK_EQ(sim_disk_write(w, 0, 7, "-volatile", 9), 9);
  sim_run(w, UINT64_MAX, 0); /* booted */
  CHECK_EQ(sim_node_stop(w, 0), 0);
  CHECK(!sim_node_up(w, 0));
  const rec_event *td = rec_next(r, NULL, R_TEARDOWN, 0);
  CHECK(td && td->val == SIM_TEARDOWN_STOP);
  sim_trace_rec last;
  CHECK_EQ(sim_trace_last(w, &last, 1), 1);
  CHECK(last.kind == SIM_EV_CRASH && last.b == 1);
  CHECK_EQ(sim_node_restart(w, 0), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK(sim_node_up(w, 0));
  char b[32] = {0};
  CHECK_EQ(sim_disk_size(w, 0), 16);
  CHECK_EQ(sim_disk_read(w, 0, 0, b, sizeof b), 16);
  CHECK(memcmp(b, "durable-volatile", 16) == 0);
  CHECK_EQ(sim_get_stats(w)->sectors_lost, 0);
  crash_restart(w); /* still unsynced: a crash loses it */
  CHECK_EQ(sim_disk_size(w, 0), 7);
  CHECK(sim_get_stats(w)->sectors_lost >= 1);
  FX_END();
}

/* A node's version: 0 at first, traced when it changes (not when set to
 * what it is), and kept across crashes and restarts. */
TEST(a_node_version_is_traced_and_survives_crashes) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_node_version(w, 0), 0);
  CHECK_EQ(sim_node_set_version(w, 0, 2), 0);
  sim_trace_rec last;
  CHECK_EQ(sim_trace_last(w, &last, 1), 1);
  CHECK(last.kind == SIM_EV_VERSION && last.a == 2 && last.b == 0 && last.node == 0);
  uint64_t h = sim_trace_hash(w);
  CHECK_EQ(sim_node_set_version(w, 0, 2), 0);
  CHECK_HASH(sim_trace_hash(w), h); /* no change, no record */
  sim_run(w, UINT64_MAX, 0);
  crash_restart(w);
  CHECK_EQ(sim_node_version(w, 0), 2);
  CHECK_EQ(sim_node_set_version(w, 5, 1), -EINVAL);
  CHECK_EQ(sim_node_version(w, 5), 0);
  FX_END();
}

/* A 64-sector overwrite with keep 50 %: torn at sector granularity. */
static uint64_t torn_once(uint64_t seed, int *new_sectors) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, SIM_PPM / 2, 0, seed);
  static uint8_t a[64 * 512], b[64 * 512];
  memset(a, 'A', sizeof a);
  memset(b, 'B', sizeof b);
  sim_disk_write(w, 0, 0, a, sizeof a);
  sim_disk_sync(w, 0);
  sim_disk_write(w, 0, 0, b, sizeof b);
  crash_restart(w);
  static uint8_t got[64 * 512];
  CHECK_EQ(sim_disk_read(w, 0, 0, got, sizeof got), (int64_t)sizeof got);
  int nb = 0;
  for (int s = 0; s < 64; s++) {
    uint8_t c = got[s * 512];
    CHECK(c == 'A' || c == 'B');
    for (int i = 0; i < 512; i++)
      CHECK_EQ(got[s * 512 + i], c); /* whole sectors, never mixed */
    nb += c == 'B';
  }
  CHECK_EQ(sim_get_stats(w)->sectors_lost, (uint64_t)(64 - nb));
  *new_sectors = nb;
  uint64_t h = sim_trace_hash(w);
  FX_END();
  return h;
}

TEST(unsynced_sectors_torn_at_crash) {
  int nb, nb2;
  uint64_t h = torn_once(3, &nb);
  CHECK(nb > 16 && nb < 48);
  CHECK_HASH(h, torn_once(3, &nb2));
  CHECK_EQ(nb, nb2);
  int other;
  torn_once(4, &other);
  CHECK(other != nb || (torn_once(5, &other), other != nb));
}

TEST(unsynced_sectors_corrupted) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, SIM_PPM, 1);
  uint8_t a[4 * 512];
  memset(a, 'C', sizeof a);
  sim_disk_write(w, 0, 0, a, sizeof a);
  crash_restart(w);
  uint8_t got[4 * 512];
  CHECK_EQ(sim_disk_read(w, 0, 0, got, sizeof got), (int64_t)sizeof got);
  for (int s = 0; s < 4; s++) {
    int diff = 0;
    for (int i = 0; i < 512; i++)
      diff += got[s * 512 + i] != 'C';
    CHECK_EQ(diff, 1); /* one damaged byte per sector */
  }
  CHECK_EQ(sim_get_stats(w)->sectors_corrupted, 4);
  FX_END();
}

TEST(injected_eio_rates) {
  FX_BEGIN(1, 1);
  c.disk.read_eio_ppm = 100000;
  c.disk.write_eio_ppm = 200000;
  sim_world *w = recorder_world(&c);
  int rf = 0, wf = 0;
  char b[4];
  for (int i = 0; i < 1000; i++) {
    rf += sim_disk_read(w, 0, 0, b, 4) == -EIO;
    wf += sim_disk_write(w, 0, 0, "abcd", 4) == -EIO;
  }
  CHECK(rf > 60 && rf < 140);
  CHECK(wf > 150 && wf < 250);
  CHECK_EQ(sim_get_stats(w)->disk_eio, (uint64_t)(rf + wf));
  FX_END();
}

TEST(sync_eio_loses_data_later_sync_cannot_save) {
  /* fsync-gate: a failed sync decides dirty sectors as at a crash, and the
   * data stays readable from the cache; a later successful sync does not
   * bring the lost sectors back. */
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  sim_disk_fail_nth(w, 0, SIM_DISK_SYNC, 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "data", 4), 4);
  CHECK_EQ(sim_disk_sync(w, 0), -EIO);
  char b[8] = {0};
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 8), 4); /* still in the cache */
  CHECK_EQ(sim_disk_sync(w, 0), 0);
  crash_restart(w);
  memset(b, 0, sizeof b);
  sim_disk_read(w, 0, 0, b, 4);
  CHECK(memcmp(b, "data", 4) != 0);
  FX_END();
}

/* A range sync makes only the sectors it covers durable: two "files" at
 * 0 and 4096, the second synced alone, the first's write lost at a crash;
 * the disk's growth is durable to the range's end. A failed range sync
 * decides its own sectors only: the other file's stay dirty, and a later
 * sync of it saves them. */
TEST(a_range_sync_makes_only_its_sectors_durable) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "first", 5), 5);
  CHECK_EQ(sim_disk_write(w, 0, 4096, "second", 6), 6);
  CHECK_EQ(sim_disk_sync_range(w, 0, 4096, 4096), 0);
  crash_restart(w);
  char b[8] = {0};
  CHECK_EQ(sim_disk_size(w, 0), 4102);
  CHECK_EQ(sim_disk_read(w, 0, 4096, b, 6), 6);
  CHECK(memcmp(b, "second", 6) == 0);
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 5), 5);
  CHECK(memcmp(b, "\0\0\0\0\0", 5) == 0); /* never synced */
  CHECK_EQ(sim_disk_write(w, 0, 0, "again", 5), 5);
  CHECK_EQ(sim_disk_write(w, 0, 4096, "other!", 6), 6);
  sim_disk_fail_nth(w, 0, SIM_DISK_SYNC, 1);
  CHECK_EQ(sim_disk_sync_range(w, 0, 4096, 4096), -EIO); /* "other!" decided: lost */
  CHECK_EQ(sim_disk_sync_range(w, 0, 0, 4096), 0);       /* "again" still dirty: saved */
  CHECK_EQ(sim_disk_sync_range(w, 0, 0, 0), 0);          /* no data */
  crash_restart(w);
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 5), 5);
  CHECK(memcmp(b, "again", 5) == 0);
  CHECK_EQ(sim_disk_read(w, 0, 4096, b, 6), 6);
  CHECK(memcmp(b, "second", 6) == 0);
  FX_END();
}

TEST(countdown_faults) {
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_fail_nth(w, 0, SIM_DISK_WRITE, 3), 0);
  CHECK_EQ(sim_disk_fail_nth(w, 0, (sim_disk_op)7, 3), -EINVAL);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), 1);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), -EIO);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), 1);
  sim_disk_fail_nth(w, 0, SIM_DISK_READ, 1);
  char b[1];
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 1), -EIO);
  CHECK_EQ(sim_disk_read(w, 0, 0, b, 1), 1);
  sim_disk_params p = {0};
  p.write_eio_ppm = SIM_PPM;
  CHECK_EQ(sim_disk_set_params(w, 0, &p), 0);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), -EIO);
  FX_END();
}

TEST(stall_is_a_window_of_true_time) {
  /* sim_disk_stall: the time left runs down with the world's time; a
   * longer stall replaces a shorter one, a shorter one does not shorten it,
   * 0 ends it; a crash does not; synchronous calls are not delayed. */
  recorder *r = recorder_new();
  sim_world *w = disk_world(r, 0, 0, 1);
  CHECK_EQ(sim_disk_stall_left(w, 0), 0u);
  CHECK_EQ(sim_disk_stall(w, 1, 1), -EINVAL);
  CHECK_EQ(sim_disk_stall_left(w, 1), 0u);
  CHECK_EQ(sim_disk_stall(w, 0, 100 * SIM_NS_PER_MS), 0);
  CHECK_EQ(sim_disk_stall_left(w, 0), 100 * SIM_NS_PER_MS);
  CHECK_EQ(sim_disk_stall(w, 0, 10 * SIM_NS_PER_MS), 0);
  CHECK_EQ(sim_disk_stall_left(w, 0), 100 * SIM_NS_PER_MS);
  CHECK_EQ(sim_disk_write(w, 0, 0, "a", 1), 1);
  CHECK_EQ(sim_disk_sync(w, 0), 0);
  uint64_t t0 = sim_now(w);
  sim_run(w, t0 + 40 * SIM_NS_PER_MS, 1000);
  CHECK_EQ(sim_disk_stall_left(w, 0), t0 + 100 * SIM_NS_PER_MS - sim_now(w));
  crash_restart(w);
  CHECK(sim_disk_stall_left(w, 0) > 0);
  CHECK_EQ(sim_disk_stall(w, 0, 300 * SIM_NS_PER_MS), 0);
  CHECK_EQ(sim_disk_stall_left(w, 0), 300 * SIM_NS_PER_MS);
  CHECK_EQ(sim_disk_stall(w, 0, 0), 0);
  CHECK_EQ(sim_disk_stall_left(w, 0), 0u);
  CHECK_EQ(sim_disk_stall(w, 0, UINT64_MAX), 0); /* saturates */
  CHECK(sim_disk_stall_left(w, 0) > 0);
  FX_END();
}

TEST(disk_budget) {
  FX_BEGIN(1, 1);
  c.budgets.max_disk_bytes = 8192;
  sim_world *w = recorder_world(&c);
  static uint8_t big[8192];
  CHECK_EQ(sim_disk_write(w, 0, 0, big, 8192), 8192);
  CHECK_EQ(sim_disk_write(w, 0, 8192, big, 1), -ENOSPC);
  CHECK_EQ(sim_disk_write(w, 0, UINT64_MAX - 1, big, 4), -ENOSPC);
  CHECK_EQ(sim_disk_truncate(w, 0, 8193), -ENOSPC);
  FX_END();
}

/* The images are sparse (pages of whole sectors): against a flat model of
 * both images, random writes, reads, syncs, truncations and crashes (every
 * unsynced sector lost) agree byte for byte, for sector sizes that do and
 * do not divide a page, with writes far past the data and across pages. */
TEST(sparse_images_match_a_flat_model) {
  enum { SPAN = 96 * 1024 };
  static uint8_t cache[SPAN], durable[SPAN], got[SPAN], buf[12000];
  const uint32_t sizes[] = {512, 1000, 4096, 8192, 65536};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    recorder *r = recorder_new();
    sim_config c = recorder_config(r, 1, 7);
    c.disk.sector_size = sizes[z];
    c.disk.unsynced_keep_ppm = 0; /* a crash reverts to the last sync */
    sim_world *w = recorder_world(&c);
    memset(cache, 0, sizeof cache);
    memset(durable, 0, sizeof durable);
    uint64_t size = 0, dsize = 0, x = z;
    for (int op = 0; op < 600; op++) {
      uint64_t v = sim_mix64(++x);
      uint64_t off = (v >> 8) % (SPAN - sizeof buf), len = (v >> 40) % sizeof buf;
      switch (v % 8) {
      case 0:
      case 1:
      case 2:
        for (uint64_t i = 0; i < len; i++)
          buf[i] = (uint8_t)sim_mix64(v + i);
        CHECK_EQ(sim_disk_write(w, 0, off, buf, len), (int64_t)len);
        memcpy(cache + off, buf, len);
        if (off + len > size)
          size = off + len;
        break;
      case 3:
        CHECK_EQ(sim_disk_sync(w, 0), 0);
        memcpy(durable, cache, SPAN);
        dsize = size;
        break;
      case 4:
        CHECK_EQ(sim_disk_truncate(w, 0, off), 0);
        if (off < size)
          memset(cache + off, 0, size - off);
        size = off;
        break;
      case 5:
        if (op % 3 == 0) {
          sim_node_crash(w, 0);
          sim_node_restart(w, 0);
          sim_run(w, UINT64_MAX, 0);
          memcpy(cache, durable, SPAN);
          size = dsize;
        }
        break;
      default: break;
      }
      CHECK_EQ(sim_disk_size(w, 0), size);
      memset(got, 0x5a, sizeof got);
      CHECK_EQ(sim_disk_read(w, 0, 0, got, SPAN), (int64_t)size);
      CHECK(memcmp(got, cache, (size_t)size) == 0);
    }
    FX_END();
  }
}

TEST_MAIN(T(write_read_size_truncate), T(stall_is_a_window_of_true_time),
          T(a_stopped_process_keeps_the_page_cache),
          T(a_node_version_is_traced_and_survives_crashes), T(synced_data_survives_crash),
          T(unsynced_write_all_kept), T(unsynced_sectors_torn_at_crash),
          T(unsynced_sectors_corrupted), T(injected_eio_rates),
          T(sync_eio_loses_data_later_sync_cannot_save), T(countdown_faults), T(disk_budget),
          T(sparse_images_match_a_flat_model), T(a_range_sync_makes_only_its_sectors_durable))
