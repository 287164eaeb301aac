/* Linearizability checker: hand-made histories, pending operations,
 * randomized histories from the sequential model (linearizable by
 * construction) and the same with one read falsified (never linearizable),
 * the budget's "unknown", and a plugged-in model. */
#include "testlib.h"
#include <simfuzz/linearize.h>

#include <string.h>

#define P SF_LIN_PENDING

static sf_lin_op op(uint32_t client, uint32_t kind, uint64_t key, uint64_t arg, uint64_t out,
                    uint64_t call, uint64_t ret) {
  sf_lin_op o = {key, kind, arg, 0, out, call, ret, client};
  return o;
}

/* The search itself, with room to decide these histories (the defaults
 * are sized for a fuzzing run's time budget; see the budget test). */
static sf_lin_result check(const sf_lin_op *h, size_t n) {
  sf_lin_report r;
  sf_lin_budget b = {10000000, 64ull << 20, 0};
  sf_lin_result res = sf_linearizable(&sf_kv_model, h, n, &b, &r);
  CHECK_EQ(r.result, res);
  return res;
}

TEST(sequential_and_concurrent_histories) {
  sf_lin_op seq[] = {
      op(1, SF_KV_PUT, 1, 5, 0, 0, 10),
      op(2, SF_KV_GET, 1, 0, 5, 20, 30),
      op(1, SF_KV_PUT, 1, 6, 0, 40, 50),
      op(2, SF_KV_GET, 1, 0, 6, 60, 70),
  };
  CHECK_EQ(check(seq, 4), SF_LIN_OK);
  CHECK_EQ(check(NULL, 0), SF_LIN_OK);
  /* a read overlapping a write may see either value */
  sf_lin_op a[] = {
      op(1, SF_KV_PUT, 1, 5, 0, 0, 10),
      op(1, SF_KV_PUT, 1, 6, 0, 20, 40),
      op(2, SF_KV_GET, 1, 0, 5, 25, 30),
      op(3, SF_KV_GET, 1, 0, 6, 26, 35),
  };
  CHECK_EQ(check(a, 4), SF_LIN_OK);
  /* ...but two reads cannot see the write then not see it */
  sf_lin_op b[] = {
      op(1, SF_KV_PUT, 1, 5, 0, 0, 10),
      op(1, SF_KV_PUT, 1, 6, 0, 20, 100),
      op(2, SF_KV_GET, 1, 0, 6, 30, 40),
      op(3, SF_KV_GET, 1, 0, 5, 50, 60),
  };
  CHECK_EQ(check(b, 4), SF_LIN_VIOLATION);
}

TEST(classic_violations) {
  /* stale read: the write returned before the read was invoked */
  sf_lin_op stale[] = {op(1, SF_KV_PUT, 7, 1, 0, 0, 10), op(1, SF_KV_PUT, 7, 2, 0, 20, 30),
                       op(2, SF_KV_GET, 7, 0, 1, 40, 50)};
  sf_lin_report r;
  CHECK_EQ(sf_linearizable(&sf_kv_model, stale, 3, NULL, &r), SF_LIN_VIOLATION);
  CHECK_EQ(r.key, 7);
  CHECK(strstr(r.message, "key 7 is not linearizable"));
  CHECK(r.failed_op < 3);
  /* a value nobody wrote */
  sf_lin_op phantom[] = {op(1, SF_KV_PUT, 1, 1, 0, 0, 10), op(2, SF_KV_GET, 1, 0, 9, 5, 15)};
  CHECK_EQ(check(phantom, 2), SF_LIN_VIOLATION);
  /* compare-and-set: both succeeded from the same expected value */
  sf_lin_op cas[] = {
      op(0, SF_KV_PUT, 3, 1, 0, 0, 1),
      {3, SF_KV_CAS, 1, 2, 1, 10, 20, 1},
      {3, SF_KV_CAS, 1, 3, 1, 11, 21, 2},
  };
  CHECK_EQ(check(cas, 3), SF_LIN_VIOLATION);
  cas[2].out = 0; /* the second one failing is fine */
  CHECK_EQ(check(cas, 3), SF_LIN_OK);
  /* keys are independent: a violation on key 2 is found among many keys */
  sf_lin_op many[64];
  size_t n = 0;
  for (uint64_t k = 10; k < 40; k++) {
    many[n++] = op(1, SF_KV_PUT, k, k, 0, k * 10, k * 10 + 5);
    many[n++] = op(2, SF_KV_GET, k, 0, k, k * 10 + 6, k * 10 + 8);
  }
  many[n++] = op(1, SF_KV_PUT, 2, 4, 0, 0, 1);
  many[n++] = op(2, SF_KV_GET, 2, 0, 0, 2, 3);
  CHECK_EQ(sf_linearizable(&sf_kv_model, many, n, NULL, &r), SF_LIN_VIOLATION);
  CHECK_EQ(r.key, 2);
}

TEST(pending_operations_may_or_may_not_take_effect) {
  /* a write that never returned (timeout): a later read may see it... */
  sf_lin_op a[] = {op(1, SF_KV_PUT, 1, 5, 0, 0, P), op(2, SF_KV_GET, 1, 0, 5, 100, 110)};
  CHECK_EQ(check(a, 2), SF_LIN_OK);
  /* ...or not */
  a[1].out = 0;
  CHECK_EQ(check(a, 2), SF_LIN_OK);
  /* but not before it was invoked */
  sf_lin_op b[] = {op(2, SF_KV_GET, 1, 0, 5, 0, 10), op(1, SF_KV_PUT, 1, 5, 0, 20, P)};
  CHECK_EQ(check(b, 2), SF_LIN_VIOLATION);
  /* and once seen, it cannot be undone by a later read */
  sf_lin_op c[] = {op(1, SF_KV_PUT, 1, 5, 0, 0, P), op(2, SF_KV_GET, 1, 0, 5, 10, 20),
                   op(3, SF_KV_GET, 1, 0, 0, 30, 40)};
  CHECK_EQ(check(c, 3), SF_LIN_VIOLATION);
}

/* Random concurrent history: each op takes effect at a random point of its
 * [call, ret] interval on a sequential store, so it is linearizable by
 * construction; some ops never return (their effect may still happen). */
static size_t random_history(uint64_t seed, sf_lin_op *h, size_t n, int keys) {
  uint64_t x = seed;
  typedef struct {
    uint64_t at;
    size_t i;
  } eff;
  eff *effects = test_alloc(n * sizeof *effects);
  for (size_t i = 0; i < n; i++) {
    uint64_t call = test_rand(&x) % 1000;
    uint64_t len = 1 + test_rand(&x) % 60;
    uint32_t kind = (uint32_t)(1 + test_rand(&x) % 3);
    h[i] = op((uint32_t)(i % 5), kind, test_rand(&x) % (uint64_t)keys, 1 + test_rand(&x) % 4, 0,
              call, call + len);
    h[i].arg2 = 1 + test_rand(&x) % 4;
    effects[i].at = call + test_rand(&x) % (len + 1);
    effects[i].i = i;
  }
  for (size_t a = 1; a < n; a++) /* sort effects by time */
    for (size_t b = a; b > 0 && effects[b - 1].at > effects[b].at; b--) {
      eff t = effects[b];
      effects[b] = effects[b - 1];
      effects[b - 1] = t;
    }
  uint64_t store[16] = {0};
  for (size_t e = 0; e < n; e++) {
    sf_lin_op *o = &h[effects[e].i];
    uint64_t next;
    uint64_t *v = &store[o->key];
    if (o->kind == SF_KV_GET)
      o->out = *v;
    if (o->kind == SF_KV_CAS)
      o->out = *v == o->arg;
    sf_kv_model.step(*v, o, &next);
    *v = next;
    if (test_rand(&x) % 20 == 0)
      o->ret = P; /* the response was lost: pending */
  }
  free(effects);
  return n;
}

TEST(random_histories) {
  sf_lin_op h[120];
  int violations = 0, unknown = 0;
  for (uint64_t seed = 1; seed <= 300; seed++) {
    size_t n = random_history(seed, h, 60 + seed % 60, 1 + (int)(seed % 4));
    sf_lin_result r = check(h, n);
    CHECK(r != SF_LIN_VIOLATION); /* no false alarm */
    unknown += r == SF_LIN_UNKNOWN;
    /* falsify one completed read: a value no operation ever writes */
    for (size_t i = 0; i < n; i++)
      if (h[i].kind == SF_KV_GET && h[i].ret != P) {
        h[i].out = 99;
        CHECK_EQ(check(h, n), SF_LIN_VIOLATION);
        violations++;
        break;
      }
  }
  CHECK(violations > 250);
  CHECK_EQ(unknown, 0);
}

TEST(budget_gives_unknown_not_a_false_failure) {
  /* 30 fully concurrent writes, then a read of a value none of them wrote:
   * not linearizable, but proving it means trying every subset of writes */
  sf_lin_op h[31];
  for (size_t i = 0; i < 30; i++)
    h[i] = op((uint32_t)i, SF_KV_PUT, 1, i + 1, 0, i, 1000 + i);
  h[30] = op(99, SF_KV_GET, 1, 0, 999, 2000, 2100);
  sf_lin_budget b = {1000, 0, 0};
  sf_lin_report r;
  CHECK_EQ(sf_linearizable(&sf_kv_model, h, 31, &b, &r), SF_LIN_UNKNOWN);
  CHECK(strstr(r.message, "unknown"));
  CHECK(r.steps <= 1001);
  sf_lin_budget few_ops = {0, 0, 10}; /* keys with more ops are not searched */
  CHECK_EQ(sf_linearizable(&sf_kv_model, h, 31, &few_ops, &r), SF_LIN_UNKNOWN);
  sf_lin_budget tiny_memo = {0, 4096, 0}; /* memo memory */
  CHECK_EQ(sf_linearizable(&sf_kv_model, h, 31, &tiny_memo, &r), SF_LIN_UNKNOWN);
}

/* A plugged-in model: a counter with increments and reads. */
enum { INC = 1, READ = 2 };
static int counter_step(uint64_t s, const sf_lin_op *o, uint64_t *next) {
  if (o->kind == INC) {
    *next = s + o->arg;
    return 1;
  }
  *next = s;
  return o->ret == P || o->out == s;
}

TEST(plugged_in_model) {
  const sf_lin_model counter = {"counter", 0, counter_step, NULL};
  sf_lin_op h[] = {op(1, INC, 0, 2, 0, 0, 50), op(2, INC, 0, 3, 0, 10, 60),
                   op(3, READ, 0, 0, 3, 20, 30), op(3, READ, 0, 0, 5, 70, 80)};
  CHECK_EQ(sf_linearizable(&counter, h, 4, NULL, NULL), SF_LIN_OK);
  h[3].out = 4;
  CHECK_EQ(sf_linearizable(&counter, h, 4, NULL, NULL), SF_LIN_VIOLATION);
}

TEST(recording_a_history) {
  sf_history h = {0};
  size_t a = sf_history_invoke(&h, 1, SF_KV_PUT, 1, 5, 0, 10);
  size_t b = sf_history_invoke(&h, 2, SF_KV_GET, 1, 0, 0, 12);
  sf_history_complete(&h, a, 0, 20);
  sf_history_complete(&h, b, 5, 25);
  sf_history_complete(&h, b, 7, 30);                /* a second response is ignored */
  sf_history_complete(&h, 99, 0, 30);               /* unknown ids too */
  sf_history_invoke(&h, 3, SF_KV_PUT, 1, 6, 0, 40); /* never answered: pending */
  size_t c = sf_history_invoke(&h, 2, SF_KV_GET, 1, 0, 0, 50);
  sf_history_complete(&h, c, 6, 60);
  sf_lin_report r;
  CHECK_EQ(sf_history_check(&h, &sf_kv_model, NULL, &r), SF_LIN_OK);
  CHECK_EQ(h.ops[b].out, 5);
  sf_history_complete(&h, sf_history_invoke(&h, 2, SF_KV_GET, 1, 0, 0, 70), 5, 80); /* stale */
  CHECK_EQ(sf_history_check(&h, &sf_kv_model, NULL, &r), SF_LIN_VIOLATION);
  sf_history_free(&h);
  /* a full history is never judged */
  sf_history small = {0};
  small.max = 2;
  sf_history_invoke(&small, 1, SF_KV_PUT, 1, 5, 0, 1);
  sf_history_invoke(&small, 1, SF_KV_PUT, 1, 6, 0, 2);
  CHECK_EQ(sf_history_invoke(&small, 1, SF_KV_GET, 1, 0, 0, 3), SIZE_MAX);
  CHECK_EQ(sf_history_check(&small, &sf_kv_model, NULL, &r), SF_LIN_UNKNOWN);
  CHECK(strstr(r.message, "not recorded"));
  sf_history_free(&small);
}

/* A client that hears a response and invokes its next operation in the
 * same simulated moment: the two are in order, not concurrent. A lost
 * write (the kvstore example's ack-before-fsync) read back as the value
 * before it is then a violation. */
TEST(a_response_and_the_next_invocation_at_one_moment_are_ordered) {
  sf_history h = {0};
  size_t a = sf_history_invoke(&h, 0, SF_KV_PUT, 2, 100001, 0, 151);
  sf_history_complete(&h, a, 0, 171);
  size_t b = sf_history_invoke(&h, 0, SF_KV_PUT, 2, 100002, 0, 171); /* the same moment */
  sf_history_complete(&h, b, 0, 191);
  size_t c = sf_history_invoke(&h, 1, SF_KV_GET, 2, 0, 0, 522);
  sf_history_complete(&h, c, 100001, 531); /* the write before the last one */
  sf_lin_report r;
  CHECK_EQ(sf_history_check(&h, &sf_kv_model, NULL, &r), SF_LIN_VIOLATION);
  CHECK(h.ops[b].call > h.ops[a].ret && h.ops[b].call <= 172); /* a nanosecond later */
  /* an operation answered in the moment it was invoked is still one */
  size_t d = sf_history_invoke(&h, 1, SF_KV_GET, 2, 0, 0, 600);
  sf_history_complete(&h, d, 100002, 600);
  CHECK(h.ops[d].ret > h.ops[d].call);
  sf_history_free(&h);
  /* the raw checker is unchanged: touching intervals may overlap */
  sf_lin_op raw[] = {{2, SF_KV_PUT, 1, 0, 0, 0, 10, 0},
                     {2, SF_KV_PUT, 2, 0, 0, 10, 30, 0},
                     {2, SF_KV_GET, 0, 0, 1, 40, 50, 1}};
  CHECK_EQ(sf_linearizable(&sf_kv_model, raw, 3, NULL, NULL), SF_LIN_OK);
}

TEST_MAIN(T(sequential_and_concurrent_histories), T(recording_a_history), T(classic_violations),
          T(a_response_and_the_next_invocation_at_one_moment_are_ordered),
          T(pending_operations_may_or_may_not_take_effect), T(random_histories),
          T(budget_gives_unknown_not_a_false_failure), T(plugged_in_model))
