/*
 * twofold: a test target with two bugs of one kind, one invariant failing
 * at one call site for two causes, for the explorer's crash files. The
 * common cause fails whenever node 1 is paused (many random scenarios);
 * the rare one is the ladder's (tests/targets/ladder.c): node 0 paused
 * after two restarts, which the explorer reaches through the SOMETIMES
 * site. Both fail with the same signature, so crash files kept by kind
 * alone would hold only the common cause; the message tells them apart.
 */
#include "ladder.h"

SF_ORACLE static void check_twofold(void *ctx, sim_world *w) {
  ladder *l = ctx;
  int rung = l->boots[0] >= 3;
  SF_SOMETIMES(w, rung, "n0 restarted twice");
  int rare = rung && sim_node_paused(w, 0);
  int common = sim_node_up(w, 1) && sim_node_paused(w, 1);
  SIM_INVARIANT(w, 0, !(rare || common), "twofold", "%s",
                rare ? "n0 paused after two restarts" : "n1 paused");
}

static const sf_check invariants[] = {{"twofold", check_twofold}, {NULL, NULL}};

SF_TARGET(.summary = "test only: two bugs that fail one invariant at one site", .min_nodes = 3,
          .max_nodes = 3, .default_nodes = 3, .create = create, .destroy = destroy, .ops = &ops,
          .invariants = invariants);
