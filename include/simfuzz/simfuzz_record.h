/*
 * simfuzz adapter helpers: durable records on a node's simulated disk.
 *
 * A record store keeps numbered records of up to max_len bytes. Each record
 * lives in a slot of whole sectors of its own (sim_disk_sector_size), so a
 * crash or a failed sync that tears or corrupts the sector being written
 * can never damage an older, durable neighbour. Each record carries its
 * length and a checksum bound to its slot number, so a torn, corrupted,
 * misplaced or never-written slot reads as empty rather than as data.
 *
 *     sf_records log;
 *     sf_records_init(&log, w, node, 0, 64);      // 64-byte records from offset 0
 *     sf_record_write(&log, w, node, idx, buf, n, 1); // write and sync
 *     int64_t r = sf_record_read(&log, w, node, idx, buf, sizeof buf);
 *     // r > 0: the record; 0: empty or damaged; -EIO: the disk kept failing
 *
 * Reads are retried (a transient read error is a fault the simulator
 * injects); a read that still fails returns -EIO and the caller decides,
 * typically by crashing the node and recovering on restart (a node must
 * never serve what it could not read).
 */
#ifndef SIMFUZZ_RECORD_H
#define SIMFUZZ_RECORD_H

#include "sim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_RECORD_HEADER 12u     /**< bytes before the payload: length, checksum */
#define SF_RECORD_READ_TRIES 3u  /**< attempts of a read before -EIO */
#define SF_RECORD_MAX (1u << 20) /**< largest record payload */

/** Geometry of a record store on a node's disk. Plain data. */
typedef struct sf_records {
  uint64_t base;    /**< disk offset of slot 0 */
  uint32_t max_len; /**< largest payload */
  uint32_t slot;    /**< bytes per slot: header + max_len, rounded up to sectors */
} sf_records;

/** Lay out a store at disk offset `base` for payloads of up to max_len
 *  bytes (1..SF_RECORD_MAX). base is rounded up to a sector boundary.
 *  Returns 0 or -EINVAL. */
int sf_records_init(sf_records *r, const sim_world *w, int node, uint64_t base, uint32_t max_len);

/** Disk offset just past slot n (where a store placed after this one may
 *  start). */
uint64_t sf_records_end(const sf_records *r, uint64_t n);

/** Write len bytes (<= max_len) as record n; with sync, make it durable.
 *  Returns 0, or a negative errno from the disk (-EIO, -ENOSPC) or -EINVAL.
 *  After an error the record's slot may hold anything: it reads as empty
 *  or as the old or the new record, never as something else. */
int sf_record_write(const sf_records *r, sim_world *w, int node, uint64_t n, const void *data,
                    uint32_t len, int sync);

/** Read record n into out (cap bytes). Returns the record's length (> 0),
 *  0 if the slot is empty, torn, corrupted or holds more than cap bytes,
 *  or -EIO if every attempt failed. A zero-length record reads as 0. */
int64_t sf_record_read(const sf_records *r, sim_world *w, int node, uint64_t n, void *out,
                       uint32_t cap);

/** Erase record n (it then reads as empty); with sync, durably. */
int sf_record_erase(const sf_records *r, sim_world *w, int node, uint64_t n, int sync);

#ifdef __cplusplus
}
#endif
#endif
