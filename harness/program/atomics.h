/* Atomic operations as switch points: the header simfuzz_add_program()
 * forces into every translation unit of a program (-include), installed as
 * program_atomics.h. The program's sources are not changed.
 *
 * An atomic operation compiles to an instruction, not a call, so the
 * interposition of calls.h cannot see it. Every spelling of one in C goes
 * through a builtin of the compiler, though: <stdatomic.h>'s generic
 * functions expand to GCC's __atomic_* or clang's __c11_atomic_*, and a
 * program may call those or the older __sync_* itself. Each of them is
 * defined here as a macro of its own name, "a switch point, then the
 * operation": a macro's own name in its expansion is not expanded again,
 * so the operation is the compiler's builtin, with its arguments, type
 * and value unchanged. The switch point is sf_atomic_point(), a row of
 * the calls table like any call, which the runtime models as a point
 * where another thread of the node may run (harness/program/thread.c).
 *
 * Not switch points: the operators on an _Atomic object (x++, x = v,
 * x += v), which the compiler emits with no builtin to name; fences;
 * atomic_init; and the atomic operations inside a static library's
 * objects, compiled before this header (libuv's). */
#ifndef SIMFUZZ_PROGRAM_ATOMICS_H
#define SIMFUZZ_PROGRAM_ATOMICS_H
#pragma GCC system_header /* reserved macro names, on purpose */
#ifdef __clang__          /* a builtin's name in its own macro is what this header does */
#pragma clang diagnostic ignored "-Wdisabled-macro-expansion"
#endif

void sf_atomic_point(void);

#define SFP__ATOMIC(op, ...) (sf_atomic_point(), op(__VA_ARGS__))

/* clang-format off */
/* GCC's builtins (and clang's, which accepts them too) */
#define __atomic_load(...) SFP__ATOMIC(__atomic_load, __VA_ARGS__)
#define __atomic_load_n(...) SFP__ATOMIC(__atomic_load_n, __VA_ARGS__)
#define __atomic_store(...) SFP__ATOMIC(__atomic_store, __VA_ARGS__)
#define __atomic_store_n(...) SFP__ATOMIC(__atomic_store_n, __VA_ARGS__)
#define __atomic_exchange(...) SFP__ATOMIC(__atomic_exchange, __VA_ARGS__)
#define __atomic_exchange_n(...) SFP__ATOMIC(__atomic_exchange_n, __VA_ARGS__)
#define __atomic_compare_exchange(...) SFP__ATOMIC(__atomic_compare_exchange, __VA_ARGS__)
#define __atomic_compare_exchange_n(...) SFP__ATOMIC(__atomic_compare_exchange_n, __VA_ARGS__)
#define __atomic_fetch_add(...) SFP__ATOMIC(__atomic_fetch_add, __VA_ARGS__)
#define __atomic_fetch_sub(...) SFP__ATOMIC(__atomic_fetch_sub, __VA_ARGS__)
#define __atomic_fetch_and(...) SFP__ATOMIC(__atomic_fetch_and, __VA_ARGS__)
#define __atomic_fetch_or(...) SFP__ATOMIC(__atomic_fetch_or, __VA_ARGS__)
#define __atomic_fetch_xor(...) SFP__ATOMIC(__atomic_fetch_xor, __VA_ARGS__)
#define __atomic_fetch_nand(...) SFP__ATOMIC(__atomic_fetch_nand, __VA_ARGS__)
#define __atomic_add_fetch(...) SFP__ATOMIC(__atomic_add_fetch, __VA_ARGS__)
#define __atomic_sub_fetch(...) SFP__ATOMIC(__atomic_sub_fetch, __VA_ARGS__)
#define __atomic_and_fetch(...) SFP__ATOMIC(__atomic_and_fetch, __VA_ARGS__)
#define __atomic_or_fetch(...) SFP__ATOMIC(__atomic_or_fetch, __VA_ARGS__)
#define __atomic_xor_fetch(...) SFP__ATOMIC(__atomic_xor_fetch, __VA_ARGS__)
#define __atomic_nand_fetch(...) SFP__ATOMIC(__atomic_nand_fetch, __VA_ARGS__)
#define __atomic_test_and_set(...) SFP__ATOMIC(__atomic_test_and_set, __VA_ARGS__)
#define __atomic_clear(...) SFP__ATOMIC(__atomic_clear, __VA_ARGS__)
/* the older __sync_* builtins */
#define __sync_fetch_and_add(...) SFP__ATOMIC(__sync_fetch_and_add, __VA_ARGS__)
#define __sync_fetch_and_sub(...) SFP__ATOMIC(__sync_fetch_and_sub, __VA_ARGS__)
#define __sync_fetch_and_or(...) SFP__ATOMIC(__sync_fetch_and_or, __VA_ARGS__)
#define __sync_fetch_and_and(...) SFP__ATOMIC(__sync_fetch_and_and, __VA_ARGS__)
#define __sync_fetch_and_xor(...) SFP__ATOMIC(__sync_fetch_and_xor, __VA_ARGS__)
#define __sync_fetch_and_nand(...) SFP__ATOMIC(__sync_fetch_and_nand, __VA_ARGS__)
#define __sync_add_and_fetch(...) SFP__ATOMIC(__sync_add_and_fetch, __VA_ARGS__)
#define __sync_sub_and_fetch(...) SFP__ATOMIC(__sync_sub_and_fetch, __VA_ARGS__)
#define __sync_or_and_fetch(...) SFP__ATOMIC(__sync_or_and_fetch, __VA_ARGS__)
#define __sync_and_and_fetch(...) SFP__ATOMIC(__sync_and_and_fetch, __VA_ARGS__)
#define __sync_xor_and_fetch(...) SFP__ATOMIC(__sync_xor_and_fetch, __VA_ARGS__)
#define __sync_nand_and_fetch(...) SFP__ATOMIC(__sync_nand_and_fetch, __VA_ARGS__)
#define __sync_bool_compare_and_swap(...) SFP__ATOMIC(__sync_bool_compare_and_swap, __VA_ARGS__)
#define __sync_val_compare_and_swap(...) SFP__ATOMIC(__sync_val_compare_and_swap, __VA_ARGS__)
#define __sync_lock_test_and_set(...) SFP__ATOMIC(__sync_lock_test_and_set, __VA_ARGS__)
#define __sync_lock_release(...) SFP__ATOMIC(__sync_lock_release, __VA_ARGS__)
/* clang's <stdatomic.h> */
#define __c11_atomic_load(...) SFP__ATOMIC(__c11_atomic_load, __VA_ARGS__)
#define __c11_atomic_store(...) SFP__ATOMIC(__c11_atomic_store, __VA_ARGS__)
#define __c11_atomic_exchange(...) SFP__ATOMIC(__c11_atomic_exchange, __VA_ARGS__)
#define __c11_atomic_compare_exchange_strong(...)                                                 \
  SFP__ATOMIC(__c11_atomic_compare_exchange_strong, __VA_ARGS__)
#define __c11_atomic_compare_exchange_weak(...)                                                   \
  SFP__ATOMIC(__c11_atomic_compare_exchange_weak, __VA_ARGS__)
#define __c11_atomic_fetch_add(...) SFP__ATOMIC(__c11_atomic_fetch_add, __VA_ARGS__)
#define __c11_atomic_fetch_sub(...) SFP__ATOMIC(__c11_atomic_fetch_sub, __VA_ARGS__)
#define __c11_atomic_fetch_and(...) SFP__ATOMIC(__c11_atomic_fetch_and, __VA_ARGS__)
#define __c11_atomic_fetch_or(...) SFP__ATOMIC(__c11_atomic_fetch_or, __VA_ARGS__)
#define __c11_atomic_fetch_xor(...) SFP__ATOMIC(__c11_atomic_fetch_xor, __VA_ARGS__)
#define __c11_atomic_fetch_nand(...) SFP__ATOMIC(__c11_atomic_fetch_nand, __VA_ARGS__)
#define __c11_atomic_fetch_max(...) SFP__ATOMIC(__c11_atomic_fetch_max, __VA_ARGS__)
#define __c11_atomic_fetch_min(...) SFP__ATOMIC(__c11_atomic_fetch_min, __VA_ARGS__)
/* clang-format on */

#endif
