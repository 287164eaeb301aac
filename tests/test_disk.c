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

TEST_MAIN(T(write_read_size_truncate), T(synced_data_survives_crash), T(unsynced_write_all_kept),
          T(unsynced_sectors_torn_at_crash), T(unsynced_sectors_corrupted), T(injected_eio_rates),
          T(sync_eio_loses_data_later_sync_cannot_save), T(countdown_faults), T(disk_budget))
