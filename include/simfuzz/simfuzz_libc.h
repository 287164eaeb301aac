/*
 * simfuzz adapter helpers: routing a library's randomness, time and
 * allocation into the simulator.
 *
 * A run must be a pure function of its scenario, but real libraries call
 * rand(), time() and clock_gettime() and allocate memory without asking.
 * Three ways to bring such calls into the simulation, best first:
 *
 * 1. Hooks the library offers. Many take their I/O, time, randomness or
 *    allocator from the caller (canonical/raft's raft_io->time/random and
 *    raft_heap_set(), libuv's uv_replace_allocator(), SQLite's
 *    SQLITE_CONFIG_MALLOC). Point them at sim_clock()/sim_node_random() or
 *    at the sf_* functions below; hooks that get no context pointer find
 *    their world and node with sim_current().
 *
 * 2. ROUTE in simfuzz_add_target() for a library you link statically (an
 *    archive or your own sources): the linker redirects every call to the
 *    listed C functions (rand, srand, random, srandom, time, gettimeofday,
 *    clock_gettime, getrandom) to simfuzz's versions (-Wl,--wrap). While a
 *    world runs they answer from the simulation: random numbers from the
 *    current node's decision stream (sim_node_random), wall-clock time
 *    from the node's clock (sim_clock, drift and jumps included, counted
 *    from SF_LIBC_EPOCH_S), monotonic time from sim_clock_mono; srand and
 *    srandom do nothing. Outside a world they call the C library. Calls
 *    made inside a shared library are not redirected.
 *
 * 3. For a shared library that calls them: define the function in your
 *    target (symbol interposition) and forward to sf_libc_random() /
 *    sf_libc_clock().
 *
 * Allocation: route the library's allocator to sf_malloc() and friends.
 * While a world runs, their blocks come from its deterministic heap
 * (sim_heap_alloc): the same addresses in every process, whatever ASLR
 * does, and zero-filled, so a library that reads a pointer's bits or memory
 * it never wrote still runs as a function of its scenario. Free them with
 * sf_free() or sf_realloc(), never free(). They fail (return NULL) when
 * fault point SIM_FAULTPOINT_ALLOC fires for the current node, so a
 * scenario's FaultPoint step with k = SIM_FAULTPOINT_ALLOC (65281)
 * exercises the library's out-of-memory paths. Outside a world they are
 * the C library's.
 */
#ifndef SIMFUZZ_LIBC_H
#define SIMFUZZ_LIBC_H

#include "sim.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* clockid_t, under -std=c11 too */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a simulated wall clock reads at node-local time 0: 2025-01-01
 *  00:00:00 UTC, so that dates look plausible to code that checks them. */
#define SF_LIBC_EPOCH_S 1735689600ll

/** A random 64-bit value for the code running now: the current node's
 *  decision stream (sim_node_random; world-level code has its own), or 0
 *  outside a world. */
uint64_t sf_libc_random(void);

/** The time a clock of the running node reads, as clock_gettime() would
 *  return it: CLOCK_REALTIME (and _COARSE, CLOCK_TAI) give SF_LIBC_EPOCH_S
 *  plus the node's local clock; every other clock gives the node's
 *  monotonic clock plus one second. World-level code reads true virtual
 *  time. Returns 0, or -1 outside a world (ts untouched). */
int sf_libc_clock(clockid_t clock, struct timespec *ts);

/** malloc() from the running world's deterministic heap (sim_heap_alloc;
 *  the C library's outside a world) that fails when fault point
 *  SIM_FAULTPOINT_ALLOC fires for the current node (never outside a world
 *  or in world-level code). */
void *sf_malloc(size_t size);

/** calloc() with the failures of sf_malloc(). */
void *sf_calloc(size_t n, size_t size);

/** realloc() with the failures of sf_malloc() (a failed realloc leaves the
 *  old block as it was, as realloc does). */
void *sf_realloc(void *p, size_t size);

/** aligned_alloc() with the failures of sf_malloc(); alignments over 16
 *  bytes come from the C library (the heap's blocks are 16-byte aligned). */
void *sf_aligned_alloc(size_t align, size_t size);

/** free() for every block of the functions above (NULL is accepted). A
 *  heap block that is not live (freed twice) is the running node's failure
 *  heap_misuse; outside a world, abort(). */
void sf_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
