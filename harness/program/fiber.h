/* Fibers: one stack per simulated program node, switched by hand (no
 * swapcontext, which makes a signal-mask system call on every switch).
 * Internal to simfuzz's program runtime (program.c). x86-64 only for now.
 *
 * A fiber runs fn(arg) on its own stack. sfp_fiber_resume() runs it until
 * it calls sfp_fiber_yield() or fn returns; the caller's stack is the
 * scheduler's. A fiber that has returned, or that is abandoned (a crashed
 * node), is freed with sfp_fiber_free(): its stack is dropped as it is,
 * frames and all, which is what a crash does to a process.
 *
 * Whenever AddressSanitizer is in the process every switch is announced
 * (__sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber), so
 * ASan knows which stack is live and neither misses a real error nor
 * reports a false one. */
#ifndef SIMFUZZ_PROGRAM_FIBER_H
#define SIMFUZZ_PROGRAM_FIBER_H

#include <stddef.h>

typedef struct sfp_fiber sfp_fiber;

/** A fiber that will run fn(arg) on a stack of stack_bytes (rounded up to
 *  pages, plus a guard page below it). NULL if out of memory. */
sfp_fiber *sfp_fiber_new(void (*fn)(void *arg), void *arg, size_t stack_bytes);

/** Run f until it yields or returns. Returns 1 if it can be resumed again,
 *  0 once fn has returned. Must not be called from a fiber. */
int sfp_fiber_resume(sfp_fiber *f);

/** From inside a fiber: give control back to whoever resumed it. */
void sfp_fiber_yield(void);

/** The fiber running now, or NULL on the scheduler's stack. */
sfp_fiber *sfp_fiber_current(void);

/** Free a fiber that is not running (finished, or abandoned mid-way). */
void sfp_fiber_free(sfp_fiber *f);

#endif
