/* Scenario-level mutations: insert, delete, duplicate, swap and retime
 * steps; change their targets and parameters; change network, swarm and
 * run knobs; mutate the choice tape; splice two scenarios. */
#include "mutate.h"

#include "scenario/draw.h"

#include <stdlib.h>
#include <string.h>

/* The mutator's choices come from the shared choice source (draw.h) in
 * generator mode; steps, links, disks and swarms are drawn there. */
typedef sf_choice rng;

static uint64_t next(rng *r) {
  return sf_u64(r);
}

static uint32_t below(rng *r, uint32_t n) {
  return sf_below(r, n);
}

static uint64_t max_time(const sf_scenario *s) {
  return s->nsteps ? s->steps[s->nsteps - 1].at_us : 0;
}

/* A new step (sf_draw_step), near an existing one half the time (an
 * interleaving), else anywhere up to 0.5 s past the last. */
static void random_step(rng *r, const sf_scenario *s, sf_step *st) {
  sf_draw_step(r, st);
  uint64_t horizon = max_time(s) + 500000;
  if (s->nsteps && below(r, 2))
    st->at_us = s->steps[below(r, s->nsteps)].at_us + below(r, 20000);
  else
    st->at_us = below(r, (uint32_t)(horizon > 60000000 ? 60000000 : horizon));
  SIM_ASSERT(st->kind != SF_STEP__NONE);
}

static void retime(rng *r, sf_step *st) {
  int64_t d;
  switch (below(r, 3)) {
  case 0: d = (int64_t)below(r, 2001) - 1000; break;        /* +-1 ms */
  case 1: d = (int64_t)below(r, 200001) - 100000; break;    /* +-100 ms */
  default: d = (int64_t)below(r, 4000001) - 2000000; break; /* +-2 s */
  }
  int64_t t = (int64_t)st->at_us + d;
  st->at_us = t < 0 ? 0 : (uint64_t)t;
}

/* Tweak one parameter of a step, keeping its kind. */
static void tweak(rng *r, sf_step *st) {
  switch (below(r, 5)) {
  case 4: st->by_state = !st->by_state; break; /* by number <-> by role */
  case 0: st->node = below(r, 8); break;
  case 1: st->peer = below(r, 8); break;
  case 2: retime(r, st); break;
  default: {
    sf_step fresh = *st;
    sf_draw_params(r, &fresh);
    fresh.node = st->node;
    fresh.peer = st->peer;
    *st = fresh;
    break;
  }
  }
}

static void mutate_tape(rng *r, sf_scenario *s) {
  switch (below(r, 4)) {
  case 0: /* grow with random bytes */
  {
    uint32_t add = 1 + below(r, 64);
    for (uint32_t i = 0; i < add && s->tape_len < SIM_TAPE_MAX; i++)
      s->tape[s->tape_len++] = (uint8_t)next(r);
    break;
  }
  case 1: /* shrink */ s->tape_len = s->tape_len ? below(r, s->tape_len) : 0; break;
  default: /* overwrite a few bytes with extremes or random values */
  {
    if (!s->tape_len) { /* start a tape: every byte defined */
      s->tape_len = 1 + below(r, 64);
      for (uint32_t i = 0; i < s->tape_len; i++)
        s->tape[i] = (uint8_t)next(r);
    }
    uint32_t k = 1 + below(r, 8);
    for (uint32_t i = 0; i < k; i++) {
      uint32_t at = below(r, s->tape_len);
      uint32_t c = below(r, 3);
      s->tape[at] = c == 0 ? 0x00 : c == 1 ? 0xff : (uint8_t)next(r);
    }
    break;
  }
  }
}

/* One of the swarm's amplifiers (SF_SWARM_FIELDS but its first row, the
 * switches), drawn afresh as its row says. */
static void redraw_amp(sf_choice *c, sf_swarm *w) {
#define COUNT_(field, type, bound, draw) +1
  enum { ROWS = 0 SF_SWARM_FIELDS(COUNT_) };
#undef COUNT_
  uint32_t pick = 1 + below(c, ROWS - 1), k = 0;
#define AMP_(field, type, bound, draw)                                                             \
  if (k++ == pick)                                                                                 \
    w->field = (type)(draw);
  SF_SWARM_FIELDS(AMP_)
#undef AMP_
  SIM_ASSERT(k == ROWS && pick >= 1);
}

/* 1 if s is about versions of the target's code (starting versions, or an
 * upgrade): only then do the mutations draw versions, so that the
 * scenarios of a target of one version never hold any. */
static int has_versions(const sf_scenario *s) {
  if (s->nversions)
    return 1;
  for (uint32_t i = 0; i < s->nsteps; i++)
    if (sf_step_flags(s->steps[i].kind) & SF_SK_VERSIONS)
      return 1;
  return 0;
}

/* A scenario about versions: one node's starting version drawn afresh. */
static void redraw_version(rng *r, sf_scenario *s) {
  uint32_t i = below(r, 8);
  while (s->nversions <= i)
    s->versions[s->nversions++] = 0;
  s->versions[i] = (uint8_t)below(r, SF_MAX_VERSIONS);
}

static void one_mutation(rng *r, sf_scenario *s) {
  uint32_t choice = below(r, 16);
  sf_step *st = s->nsteps ? &s->steps[below(r, s->nsteps)] : NULL;
  switch (choice) {
  case 0:
  case 1:
  case 2: /* insert (an upgrade one time in four, in a scenario about versions) */
    if (s->nsteps < SF_MAX_STEPS) {
      sf_step *ns = &s->steps[s->nsteps++];
      random_step(r, s, ns);
      if (has_versions(s) && below(r, 4) == 0) {
        ns->kind = SF_STEP_UPGRADE;
        sf_draw_params(r, ns);
      }
    }
    break;
  case 3: /* delete */
    if (st) {
      uint32_t i = (uint32_t)(st - s->steps);
      memmove(st, st + 1, (s->nsteps - i - 1) * sizeof *st);
      s->nsteps--;
    }
    break;
  case 4: /* duplicate, slightly later */
    if (st && s->nsteps < SF_MAX_STEPS) {
      s->steps[s->nsteps] = *st;
      s->steps[s->nsteps].at_us += below(r, 100000);
      s->nsteps++;
    }
    break;
  case 5: /* swap the times of two steps: reorders them */
    if (s->nsteps >= 2) {
      sf_step *o = &s->steps[below(r, s->nsteps)];
      uint64_t t = st->at_us;
      st->at_us = o->at_us;
      o->at_us = t;
    }
    break;
  case 6:
  case 7: /* retime */
    if (st)
      retime(r, st);
    break;
  case 8:
  case 9: /* change target or parameters */
    if (st)
      tweak(r, st);
    break;
  case 10: /* network defaults */
    s->has_net = 1;
    if (below(r, 2))
      sf_draw_net(r, &s->net);
    else
      s->net.loss_ppm = sf_draw_rate(r);
    break;
  case 11: /* swarm knobs: one switch, or one amplifier drawn afresh */
    if (below(r, 2))
      s->swarm.disabled ^= 1u << (1 + below(r, SF_FAULT__COUNT - 1));
    else
      redraw_amp(r, &s->swarm);
    break;
  case 12:
  case 13: /* choice tape */ mutate_tape(r, s); break;
  case 14: /* run knobs */
    if (has_versions(s) && below(r, 3) == 0) {
      redraw_version(r, s);
      break;
    }
    switch (below(r, 5)) {
    case 0: s->seed = next(r); break;
    case 1: s->nodes = below(r, 2) ? 0 : 2 + below(r, 6); break;
    case 2: s->fifo = !s->fifo; break;
    case 3: s->tail_ms = below(r, 10000); break;
    default:
      s->fp_enable_ppm = sf_draw_rate(r);
      s->fp_fire_ppm = sf_draw_rate(r);
      break;
    }
    break;
  default: /* disk defaults */
    s->has_disk = 1;
    sf_draw_disk(r, &s->disk);
    break;
  }
}

void sf_mutate_scenario(sf_scenario *s, uint64_t seed) {
  rng r = sf_choice_rng(seed * 0x2545f4914f6cdd1dull + 1);
  uint32_t k = 1 + below(&r, 3);
  for (uint32_t i = 0; i < k; i++)
    one_mutation(&r, s);
  sf_normalize(s);
}

size_t sf_encode_fit(sf_scenario *s, uint8_t *out, size_t max_size) {
  for (;;) {
    size_t need = sf_encode(s, out, max_size);
    if (need <= max_size)
      return need;
    if (s->nsteps > 0)
      s->nsteps = s->nsteps > 8 ? s->nsteps - s->nsteps / 8 : s->nsteps - 1;
    else if (s->tape_len > 0)
      s->tape_len /= 2;
    else
      return 0; /* cannot happen for max_size >= a few dozen bytes */
  }
}

size_t sf_mutate(uint8_t *data, size_t size, size_t max_size, uint64_t seed, sf_raw_mutate_fn raw) {
  rng r = sf_choice_rng(seed ^ 0x6a09e667f3bcc909ull);
  if (raw && below(&r, 32) == 0) /* raw bytes: exercises the generator path */
    return raw(data, size, max_size);
  sf_scenario *s = malloc(sizeof *s);
  if (!s)
    return size;
  sf_decode(data, size, s);
  if (raw && s->tape_len && below(&r, 8) == 0) {
    /* let the engine's byte mutators work on the tape */
    uint8_t tape[SIM_TAPE_MAX];
    memcpy(tape, s->tape, s->tape_len);
    size_t tl = raw(tape, s->tape_len, SIM_TAPE_MAX);
    s->tape_len = (uint32_t)(tl > SIM_TAPE_MAX ? SIM_TAPE_MAX : tl);
    memcpy(s->tape, tape, s->tape_len);
    sf_normalize(s);
  } else {
    sf_mutate_scenario(s, next(&r));
  }
  size_t n = sf_encode_fit(s, data, max_size);
  free(s);
  return n ? n : size;
}

size_t sf_crossover(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, uint8_t *out,
                    size_t max_size, uint64_t seed) {
  rng r = sf_choice_rng(seed ^ 0xbb67ae8584caa73bull);
  sf_scenario *x = malloc(sizeof *x), *y = malloc(sizeof *y);
  size_t n = 0;
  if (x && y) {
    sf_decode(a, an, x);
    sf_decode(b, bn, y);
    uint64_t cut = below(&r, (uint32_t)(max_time(x) > max_time(y) ? max_time(x) : max_time(y)) + 1);
    uint32_t k = 0;
    for (uint32_t i = 0; i < x->nsteps && x->steps[i].at_us <= cut; i++)
      k++;
    x->nsteps = k;
    for (uint32_t i = 0; i < y->nsteps && x->nsteps < SF_MAX_STEPS; i++)
      if (y->steps[i].at_us > cut)
        x->steps[x->nsteps++] = y->steps[i];
    if (below(&r, 2)) {
      memcpy(x->tape, y->tape, y->tape_len);
      x->tape_len = y->tape_len;
    }
    sf_normalize(x);
    n = sf_encode_fit(x, out, max_size);
  }
  free(x);
  free(y);
  return n;
}

/* ---- exploration branches -------------------------------------------------- */

/* A delay of about log-uniform from 100 us to 3 s (one in 8 at once). */
static uint64_t branch_delay(rng *r) {
  uint32_t k = below(r, 15);
  uint64_t d = (100ull << k) + below(r, 100u << k);
  return below(r, 8) == 0 ? below(r, 100) : d;
}

/* Write into *u a step of this kind on node and peer by number (k: a
 * deliver step's message) at at_us. 1 if it reads back unchanged, as a
 * replay will read it. */
static int step_at(sf_step *u, unsigned kind, uint32_t node, uint32_t peer, uint32_t k,
                   uint64_t at_us) {
  memset(u, 0, sizeof *u);
  u->kind = (uint8_t)kind;
  u->node = node;
  u->peer = peer;
  u->k = k;
  u->at_us = at_us;
  return sf_step_normalize(u) && u->at_us == at_us;
}

/* step_at a short random delay (branch_delay, at most left) after `from`. */
static int later_step(rng *r, sf_step *u, unsigned kind, uint32_t node, uint32_t peer,
                      uint64_t from, uint64_t left) {
  uint64_t d = branch_delay(r);
  return step_at(u, kind, node, peer, 0, from + (d < left ? d : left));
}

/* Aim step st at node f (by number): as its node, or the other end of a
 * link, or one side of a partition. */
static void aim(rng *r, sf_step *st, uint32_t f) {
  switch (sf_step_shape_of(st->kind)) {
  case SF_SHAPE_MASKS: st->mask_a = 1ull << f; break;
  case SF_SHAPE_RESET:
  case SF_SHAPE_LINK:
  case SF_SHAPE_PAIR:
  case SF_SHAPE_DELIVER:
    if (below(r, 2))
      st->peer = f;
    else
      st->node = f;
    break;
  case SF_SHAPE_NODE:
  case SF_SHAPE_CLOCK:
  case SF_SHAPE_DISK:
  case SF_SHAPE_OP:
  case SF_SHAPE_VERSION: st->node = f; break;
  default: return; /* no node to aim at */
  }
  st->by_state = 0;
}

/* A long delay, about log-uniform from 12.8 ms to 3.2 s (at most left):
 * long enough for the other nodes to move on (a timeout, an election). */
static uint64_t long_delay(rng *r, uint64_t left) {
  uint32_t k = 7 + below(r, 8);
  uint64_t d = (100ull << k) + below(r, 100u << k);
  return d < left ? d : left;
}

/* Act on one link with messages in flight at the fork (see
 * sf_branch_steps): writes at most 2 steps into out (room for max),
 * returns how many. */
static uint32_t in_flight_move(rng *r, const sf_fork *at, uint64_t now_us, uint64_t room,
                               sf_step *out, uint32_t max) {
  SIM_ASSERT(at->nlinks > 0 && at->nlinks <= SF_FORK_LINKS);
  uint32_t mine = 0; /* the focus node's links come first */
  while (mine < at->nlinks && at->focus >= 0 &&
         (at->link[mine].from == at->focus || at->link[mine].to == at->focus))
    mine++;
  uint32_t i = mine && below(r, 4) ? below(r, mine) : below(r, at->nlinks);
  uint32_t from = at->link[i].from, to = at->link[i].to, pending = at->link[i].pending;
  SIM_ASSERT(pending > 0);
  uint64_t late = now_us + long_delay(r, room);
  switch (below(r, 3)) {
  case 0: /* held now, released late: every one of them stale */
    if (max < 2 || !step_at(&out[0], SF_STEP_HOLD, from, to, 0, now_us))
      return 0;
    return 1 + (uint32_t)step_at(&out[1], SF_STEP_RELEASE, from, to, 0, late);
  case 1: /* one of them now, ahead of those sent before it */
    return (uint32_t)step_at(&out[0], SF_STEP_DELIVER, from, to, below(r, pending), now_us);
  default: /* held now, the newest delivered late, the others later still */
    if (max < 2 || !step_at(&out[0], SF_STEP_HOLD, from, to, 0, now_us))
      return 0;
    return 1 + (uint32_t)step_at(&out[1], SF_STEP_DELIVER, from, to, pending - 1, late);
  }
}

/* One allocation through sf_malloc() fails soon after the fork, once: one
 * of the next few hits of SIM_FAULTPOINT_ALLOC, on any node (SF_FORK's
 * one_shot). 1 if it was written to *u. */
static int one_alloc_fails(rng *r, sf_step *u, uint64_t now_us, uint64_t room) {
  uint64_t d = below(r, 2) ? 0 : branch_delay(r);
  uint32_t nth = 1 + below(r, 1u << below(r, 7)); /* 1 to 64, mostly small */
  if (!step_at(u, SF_STEP_FAULTPOINT, 0, 0, SIM_FAULTPOINT_ALLOC, now_us + (d < room ? d : room)))
    return 0;
  u->count = nth; /* below SF_MAX_FP_NTH: still as a replay reads it */
  return 1;
}

uint32_t sf_branch_steps(const sf_scenario *s, uint64_t now_us, uint64_t seed,
                         const sf_fork *at_fork, sf_step *out, uint32_t max) {
  int focus = at_fork ? at_fork->focus : -1;
  rng r = sf_choice_rng(seed ^ 0xb7a2c4f1ull);
  uint64_t end = sf_run_end_us(s);
  if (end > SF_MAX_AT_US) /* a later time would not survive normalisation */
    end = SF_MAX_AT_US;
  if (now_us >= end || max == 0)
    return 0;
  uint64_t room = end - now_us;
  if (room > 2000000)
    room = 2000000;
  uint32_t n = 1 + below(&r, 6);
  if (n > max)
    n = max;
  uint32_t k = 0;
  /* a node out of play at the fork comes back in half the futures: many
   * bugs need an old node back at the wrong moment */
  uint64_t away = at_fork ? (at_fork->down | at_fork->paused) : 0;
  if (away && below(&r, 2)) {
    uint32_t pick = below(&r, (uint32_t)__builtin_popcountll(away)), node = 0;
    for (uint64_t m = away;; m &= m - 1)
      if (pick-- == 0) {
        node = (uint32_t)__builtin_ctzll(m);
        break;
      }
    unsigned back = at_fork->down >> node & 1 ? SF_STEP_RESTART : SF_STEP_RESUME;
    k += (uint32_t)later_step(&r, &out[k], back, node, 0, now_us, room);
  }
  if (at_fork && at_fork->nlinks && k < max && below(&r, 2))
    k += in_flight_move(&r, at_fork, now_us, room, &out[k], max - k);
  if (at_fork && at_fork->one_shot && k < max && below(&r, 4) == 0)
    k += (uint32_t)one_alloc_fails(&r, &out[k], now_us, room);
  for (uint32_t i = 0; i < n && k < max; i++) {
    /* most futures act while the rare state lasts, some after it has had
     * time to play out */
    uint64_t d = branch_delay(&r);
    uint64_t at = now_us + (d < room ? d : room);
    sf_step *st = &out[k];
    random_step(&r, s, st);
    st->at_us = at;
    st->by_state = below(&r, 2); /* at a rare state, roles matter */
    /* some moves are needed at a moment no delay hits: as soon as a
     * leader is elected, by its rank */
    if (at_fork && at_fork->anchor && below(&r, 4) == 0) {
      st->on_change = (uint8_t)(1 + below(&r, 3));
      st->by_state = 1;
    }
    /* and so does the node the rare state arose on: the most telling
     * future is often that node crashing (and coming back) right then */
    else if (focus >= 0 && focus < SIM_MAX_NODES && below(&r, 2)) {
      if (below(&r, 4) == 0)
        st->kind = SF_STEP_CRASH;
      aim(&r, st, (uint32_t)focus);
    }
    if (sf_step_shape_of(st->kind) == SF_SHAPE_OP) {
      st->count = 1;
      st->interval_us = 0;
    }
    /* as a replay will read it back */
    if (!sf_step_normalize(st) || st->at_us != at)
      continue;
    k++;
    /* half the faults end soon, as most real ones do (a supervisor
     * restarts the process, the partition heals): deep bugs often need a
     * node back, or a link up, before some deadline */
    unsigned undo = sf_step_ends(st->kind);
    if (!undo || k >= max || below(&r, 2))
      continue;
    int heal = undo == SF_STEP_HEAL; /* else the same node (or pair) by number */
    if (st->on_change) { /* a node named by its rank then: only a cut ends, at the next rise */
      if (heal && step_at(&out[k], SF_STEP_HEAL, 0, 0, 0, at)) {
        out[k].on_change = (uint8_t)(st->on_change + 1);
        k++;
      }
      continue;
    }
    if (!heal)
      st->by_state = 0;
    k += (uint32_t)later_step(&r, &out[k], undo, heal ? 0 : st->node, heal ? 0 : st->peer, at,
                              room - (at - now_us));
  }
  for (uint32_t i = 1; i < k; i++) /* sorted by at_us, equal ones kept in order */
    for (uint32_t j = i; j > 0 && out[j - 1].at_us > out[j].at_us; j--) {
      sf_step t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return k;
}
