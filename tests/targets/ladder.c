/*
 * ladder: a test target whose planted bug needs two rare events in order,
 * for the explorer's and the assertion catalog's tests.
 *
 * Three nodes exchange heartbeats. The "bug" fires when node 0, after it
 * has been crashed and restarted twice (a rare state: two crash steps and
 * two restart steps that all name node 0, in that order), is then paused.
 * A random-seed sweep must draw the whole sequence in one scenario; an
 * explorer that branches at the rare state (the SOMETIMES site below
 * reports it) only has to draw the pause. One assertion site can never be
 * reached, so that `simfuzz reach` has something to list.
 */
#include "ladder.h"

SF_ORACLE static void check_ladder(void *ctx, sim_world *w) {
  ladder *l = ctx;
  int rung = l->boots[0] >= 3;
  SF_SOMETIMES(w, rung, "n0 restarted twice");
  SF_MAXIMIZE(w, "boots of n0", l->boots[0]);
  if (sim_node_up(w, 0) && l->boots[0] == 0)
    SF_REACHABLE(w, "n0 up before its first boot"); /* cannot happen */
  SIM_INVARIANT(w, 0, !(rung && sim_node_paused(w, 0)), "ladder", "n0 paused after two restarts");
}

static const sf_check invariants[] = {{"ladder", check_ladder}, {NULL, NULL}};

SF_TARGET(.summary = "test only: a bug behind two rare events in order", .min_nodes = 3,
          .max_nodes = 3, .default_nodes = 3, .create = create, .destroy = destroy, .ops = &ops,
          .invariants = invariants);
