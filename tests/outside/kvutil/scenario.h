/* The project's own header that shares its name with one of simfuzz's
 * (<simfuzz/scenario.h>): a source that includes "scenario.h" means this
 * one, and gets it, because simfuzz's bare names are searched last. */
#ifndef KVUTIL_SCENARIO_H
#define KVUTIL_SCENARIO_H

#define KVUTIL_OWN_SCENARIO_H 1

#endif
