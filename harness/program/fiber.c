/* Fibers (fiber.h): a hand-written x86-64 context switch. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "program/fiber.h"

#include <simfuzz/sim.h>

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "simfuzz programs: the fiber switch is written for x86-64 only"
#endif

/* AddressSanitizer's fiber calls, weak: the process may hold ASan without
 * this file being instrumented (a fuzzer whose target is sanitized and whose
 * core is not), and the stacks must be announced whenever ASan is there. */
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size)
    __attribute__((weak));
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));

struct sfp_fiber {
  void *sp;           /* the fiber's saved stack pointer, while it is not running */
  void *caller_sp;    /* the scheduler's, while the fiber runs */
  void (*fn)(void *); /* what it runs */
  void *arg;
  uint8_t *map; /* guard page + stack */
  size_t map_len;
  int done;                  /* fn has returned */
  void *fake_stack;          /* ASan's fake stack of the side that switched away */
  const void *caller_bottom; /* the scheduler's stack, for ASan */
  size_t caller_size;
};

static sfp_fiber *running; /* NULL: the scheduler's stack */

/* Save the callee-saved registers, the SSE control word and the x87
 * control word on the current stack, store the stack pointer in *save, take
 * the stack `to`, restore the same from it and return there. */
void sfp_fiber_switch(void **save, void *to);
__asm__(".text\n"
        ".globl sfp_fiber_switch\n"
        ".type sfp_fiber_switch,@function\n"
        "sfp_fiber_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size sfp_fiber_switch, .-sfp_fiber_switch\n"
        /* a new fiber's first return lands here, r12 = the fiber */
        ".globl sfp_fiber_entry\n"
        ".type sfp_fiber_entry,@function\n"
        "sfp_fiber_entry:\n"
        "  movq %r12, %rdi\n"
        "  call sfp_fiber_main\n"
        "  ud2\n"
        ".size sfp_fiber_entry, .-sfp_fiber_entry\n");
void sfp_fiber_entry(void);
void sfp_fiber_main(sfp_fiber *f) __attribute__((noreturn));

/* ASan: this side is about to leave its stack for the other's. */
static void leave(void **fake, const void *bottom, size_t size) {
  if (__sanitizer_start_switch_fiber)
    __sanitizer_start_switch_fiber(fake, bottom, size);
}

/* ASan: this side is back on its stack (old: the stack it came from). */
static void arrive(void *fake, const void **old_bottom, size_t *old_size) {
  if (__sanitizer_finish_switch_fiber)
    __sanitizer_finish_switch_fiber(fake, old_bottom, old_size);
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

void sfp_fiber_main(sfp_fiber *f) {
  arrive(NULL, &f->caller_bottom, &f->caller_size);
  f->fn(f->arg);
  f->done = 1;
  running = NULL;
  leave(NULL, f->caller_bottom, f->caller_size); /* NULL: this stack is gone */
  sfp_fiber_switch(&f->sp, f->caller_sp);
  abort(); /* a finished fiber is never resumed */
}

/* Stacks of freed fibers, kept for the next ones: a mapping, its guard
 * page and its first-touch page faults cost more than a short run of a
 * node (a program restarts its nodes at every crash and every run). What
 * a stack held is never read: a fiber starts on the frame it is given. */
#define SFP_SPARE_STACKS 16
static struct {
  uint8_t *map;
  size_t len;
} spare[SFP_SPARE_STACKS];
static int nspare;

static uint8_t *stack_get(size_t len) {
  for (int i = nspare - 1; i >= 0; i--)
    if (spare[i].len == len) {
      uint8_t *m = spare[i].map;
      spare[i] = spare[--nspare];
      return m;
    }
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  mprotect(m, page_size(), PROT_NONE); /* an overflow faults instead of corrupting */
  return m;
}

static void stack_put(uint8_t *m, size_t len) {
  if (nspare < SFP_SPARE_STACKS) {
    spare[nspare].map = m;
    spare[nspare++].len = len;
  } else {
    munmap(m, len);
  }
}

sfp_fiber *sfp_fiber_new(void (*fn)(void *arg), void *arg, size_t stack_bytes) {
  size_t pg = page_size();
  size_t len = ((stack_bytes + pg - 1) / pg + 1) * pg; /* + the guard page */
  sfp_fiber *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  uint8_t *m = stack_get(len);
  if (!m) {
    free(f);
    return NULL;
  }
  f->map = m;
  f->map_len = len;
  /* a dropped fiber's frames (a crash drops them as they are) leave their
   * red zones poisoned in ASan's shadow, which the next stack at the same
   * address (this one, reused, or a new mapping) would inherit: a false
   * alarm at its first use */
  if (__asan_unpoison_memory_region)
    __asan_unpoison_memory_region(f->map + pg, len - pg);
  f->fn = fn;
  f->arg = arg;
  /* the first switch pops: control words, r15, r14, r13, r12 (the fiber),
   * rbx, rbp, then returns to sfp_fiber_entry with the top 16-aligned */
  uint64_t *top = (uint64_t *)(void *)(f->map + len);
  uint64_t *sp = top - 8;
  SIM_ASSERT(((uintptr_t)sp & 15) == 0);
  sp[0] = 0x1F80u | (0x037Full << 32); /* default MXCSR, x87 control word */
  sp[1] = sp[2] = sp[3] = 0;           /* r15 r14 r13 */
  sp[4] = (uint64_t)(uintptr_t)f;      /* r12 */
  sp[5] = sp[6] = 0;                   /* rbx rbp */
  sp[7] = (uint64_t)(uintptr_t)sfp_fiber_entry;
  f->sp = sp;
  return f;
}

int sfp_fiber_resume(sfp_fiber *f) {
  SIM_ASSERT(!running && !f->done); /* from the scheduler, a live fiber */
  running = f;
  size_t pg = page_size();
  leave(&f->fake_stack, f->map + pg, f->map_len - pg);
  sfp_fiber_switch(&f->caller_sp, f->sp);
  arrive(f->fake_stack, NULL, NULL);
  SIM_ASSERT(!running); /* the fiber yielded or finished */
  return !f->done;
}

void sfp_fiber_yield(void) {
  sfp_fiber *f = running;
  SIM_ASSERT(f && !f->done);
  running = NULL;
  void *fake = NULL;
  leave(&fake, f->caller_bottom, f->caller_size);
  sfp_fiber_switch(&f->sp, f->caller_sp);
  arrive(fake, &f->caller_bottom, &f->caller_size);
}

sfp_fiber *sfp_fiber_current(void) {
  return running;
}

void sfp_fiber_free(sfp_fiber *f) {
  if (!f)
    return;
  SIM_ASSERT(f != running);
  stack_put(f->map, f->map_len);
  free(f);
}
