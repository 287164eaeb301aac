/* The deterministic heap (sim.h, "Deterministic heap").
 *
 * A library may read a pointer's bits (a union member of the wrong state,
 * a hash of an address) or memory it never wrote. With the C library's
 * allocator both depend on ASLR and on what the process did before, so a
 * run would stop being a function of its scenario. Here every world that
 * allocates takes a slot: a region of SLOT_BYTES at a fixed address (slot
 * k at BASE + k * SLOT_BYTES, the lowest free slot; a process that runs
 * one world at a time always gets slot 0). Blocks come from per-size-class
 * free lists and a bump pointer, all reset when the world is destroyed, so
 * a block's address is a function of the run's allocations and frees, and
 * every block starts zero-filled.
 *
 * Under AddressSanitizer the region is poisoned except for live payloads:
 * each block's 16-byte header is a left redzone, the rounding tail a right
 * one, and a freed block stays poisoned in a FIFO quarantine before its
 * class reuses it, so overflows and uses after free are still reported.
 *
 * Where the region cannot be mapped (32-bit, or the address is taken) the
 * world's blocks come from calloc(), with a note on stderr once. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, madvise() */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIM__ASAN 1
#endif
#if defined(SIM__ASAN)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#if UINTPTR_MAX > 0xffffffffu
/* Below a PIE's load address (0x55..., 0x56...) and ASan's allocator
 * (0x6000'0000'0000), above its shadow memory (up to 0x1000'7fff'7fff). */
#define BASE ((uintptr_t)0x500000000000ull)
#define SLOT_BYTES ((size_t)1 << 32)
#define SLOTS 8
#else
#define SLOTS 0
#define BASE ((uintptr_t)0)
#define SLOT_BYTES ((size_t)0)
#endif

enum {
  HDR = 16,
  NCLASS = 48,
  MAGIC_LIVE = 0x6c697665u,
  MAGIC_FREE = 0x66726565u,
  QUAR_BLOCKS = 256,
  QUAR_BYTES = 4 << 20,
  KEEP_RESIDENT = 64 << 20, /* bytes of a slot kept mapped between worlds */
};

typedef struct {
  uint32_t magic, cls;
  uint64_t size; /* what was asked for */
} hdr;
_Static_assert(sizeof(hdr) == HDR, "payloads stay 16-byte aligned");

struct sim__mem {
  int slot; /* -1: calloc() */
  uint8_t *base, *bump, *end;
  hdr *free[NCLASS]; /* the next block is in the first 8 bytes of the payload */
  hdr *quar[QUAR_BLOCKS];
  uint32_t quar_head, quar_n;
  size_t quar_bytes;
};

/* Which slots a world holds, and which were ever mapped (mappings are kept
 * for the next world: mapping again per run would cost a fault per page). */
static struct sim__mem *slot_mem[SLOTS > 0 ? SLOTS : 1];
static uint8_t slot_mapped[SLOTS > 0 ? SLOTS : 1];
static int warned;

static size_t class_bytes(uint32_t c) {
  return c < 16 ? (size_t)(c + 1) * 16 : (size_t)512 << (c - 16);
}

/* The smallest class that holds n bytes, or NCLASS if none does. */
static uint32_t class_of(size_t n) {
  if (n <= 256)
    return n ? (uint32_t)((n + 15) / 16 - 1) : 0;
  uint32_t c = 16;
  while (c < NCLASS && class_bytes(c) < n)
    c++;
  return c;
}

static int map_slot(int k) {
  if (slot_mapped[k])
    return 1;
  void *want = (void *)(BASE + (uintptr_t)k * SLOT_BYTES);
  int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
#if defined(MAP_FIXED_NOREPLACE)
  fl |= MAP_FIXED_NOREPLACE;
#endif
  void *p = mmap(want, SLOT_BYTES, PROT_READ | PROT_WRITE, fl, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  if (p != want) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
    munmap(p, SLOT_BYTES);
    return 0;
  }
  slot_mapped[k] = 1; /* poisoned block by block as the bump pointer hands it out */
  return 1;
}

static struct sim__mem *mem_of(sim_world *w) {
  if (w->mem)
    return w->mem;
  struct sim__mem *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->slot = -1;
  for (int k = 0; k < SLOTS && m->slot < 0; k++)
    if (!slot_mem[k] && map_slot(k))
      m->slot = k;
  if (m->slot >= 0) {
    slot_mem[m->slot] = m;
    m->base = m->bump = (uint8_t *)(BASE + (uintptr_t)m->slot * SLOT_BYTES);
    m->end = m->base + SLOT_BYTES;
  } else if (!warned) {
    warned = 1;
    fprintf(stderr, "simfuzz: the deterministic heap has no fixed region here; "
                    "blocks come from the C library, at addresses that vary\n");
  }
  w->mem = m;
  return m;
}

/* The slot a pointer lies in, or NULL. */
static struct sim__mem *slot_of(const void *p) {
  return sim_heap_owns(p) ? slot_mem[((uintptr_t)p - BASE) / SLOT_BYTES] : NULL;
}

/* Whether h can be a block's header: headers are always poisoned, so an
 * unpoisoned one is a pointer into a live payload (and must not be
 * poisoned on the way out). Without AddressSanitizer, anything can be. */
static int may_be_header(const hdr *h) {
#if defined(SIM__ASAN)
  return __asan_region_is_poisoned((void *)(uintptr_t)h, HDR) == (void *)(uintptr_t)h;
#else
  (void)h;
  return 1;
#endif
}

/* The oldest quarantined block goes back to its class's free list. */
static void quar_pop(struct sim__mem *m) {
  SIM_ASSERT(m->quar_n > 0);
  hdr *h = m->quar[m->quar_head];
  m->quar_head = (m->quar_head + 1) % QUAR_BLOCKS;
  m->quar_n--;
  UNPOISON(h, HDR + sizeof(void *));
  SIM_ASSERT(h->magic == MAGIC_FREE && h->cls < NCLASS);
  m->quar_bytes -= class_bytes(h->cls);
  memcpy(h + 1, &m->free[h->cls], sizeof(void *));
  m->free[h->cls] = h;
  POISON(h, HDR + sizeof(void *));
}

static hdr *take(struct sim__mem *m, uint32_t c) {
  hdr *h = m->free[c];
  if (h) {
    UNPOISON(h, HDR + sizeof(void *));
    SIM_ASSERT(h->magic == MAGIC_FREE && h->cls == c);
    memcpy(&m->free[c], h + 1, sizeof(void *));
    return h;
  }
  size_t need = HDR + class_bytes(c);
  if ((size_t)(m->end - m->bump) < need)
    return NULL;
  h = (hdr *)m->bump;
  m->bump += need;
  UNPOISON(h, HDR);
  h->cls = c;
  return h;
}

void *sim_heap_alloc(sim_world *w, size_t n) {
  struct sim__mem *m = w ? mem_of(w) : NULL;
  if (!m || m->slot < 0)
    return n <= SIM_HEAP_MAX ? calloc(1, n ? n : 1) : NULL;
  uint32_t c = class_of(n);
  if (n > SIM_HEAP_MAX || c >= NCLASS)
    return NULL;
  hdr *h = take(m, c);
  if (!h)
    return NULL;
  h->magic = MAGIC_LIVE;
  h->size = n;
  POISON(h, HDR + class_bytes(c)); /* the header and the rounding tail are redzones */
  UNPOISON(h + 1, n);
  memset(h + 1, 0, n);
  return h + 1;
}

/* The header of the live block that starts at p in m, unpoisoned (the
 * caller poisons it again), or NULL: p is no block's start, or the block
 * was freed (nothing is left unpoisoned then). */
static hdr *live_header(struct sim__mem *m, const void *p) {
  hdr *h = (hdr *)(uintptr_t)p - 1;
  if (!m || (uintptr_t)p % 16 || (uint8_t *)h < m->base || (const uint8_t *)p > m->bump ||
      !may_be_header(h))
    return NULL;
  UNPOISON(h, HDR);
  if (h->magic == MAGIC_LIVE)
    return h;
  POISON(h, HDR);
  return NULL;
}

int sim_heap_free(void *p) {
  if (!p)
    return 0;
  if (!sim_heap_owns(p)) {
    free(p);
    return 0;
  }
  struct sim__mem *m = slot_of(p);
  hdr *h = live_header(m, p);
  if (!h)
    return -EINVAL; /* freed twice, no block's start, or in a slot no world holds */
  h->magic = MAGIC_FREE;
  size_t bytes = class_bytes(h->cls);
  POISON(h, HDR + bytes);
  if (m->quar_n == QUAR_BLOCKS || m->quar_bytes > QUAR_BYTES)
    quar_pop(m);
  m->quar[(m->quar_head + m->quar_n) % QUAR_BLOCKS] = h;
  m->quar_n++;
  m->quar_bytes += bytes;
  return 0;
}

size_t sim_heap_size(const void *p) {
  hdr *h = live_header(slot_of(p), p);
  if (!h)
    return 0;
  size_t n = (size_t)h->size;
  POISON(h, HDR);
  return n;
}

int sim_heap_owns(const void *p) {
  uintptr_t a = (uintptr_t)p;
  return SLOTS > 0 && a >= BASE && a < BASE + (uintptr_t)SLOTS * SLOT_BYTES;
}

int sim_heap_fixed(sim_world *w) {
  struct sim__mem *m = w ? mem_of(w) : NULL;
  return m && m->slot >= 0;
}

void sim__mem_release(sim_world *w) {
  struct sim__mem *m = w->mem;
  if (!m)
    return;
  if (m->slot >= 0) {
    size_t used = (size_t)(m->bump - m->base);
    POISON(m->base, used);
    if (used > KEEP_RESIDENT) /* bound what the next world inherits */
      madvise(m->base + KEEP_RESIDENT, used - KEEP_RESIDENT, MADV_DONTNEED);
    SIM_ASSERT(slot_mem[m->slot] == m);
    slot_mem[m->slot] = NULL;
  }
  free(m);
  w->mem = NULL;
}
