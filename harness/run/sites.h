/* The assertion-site catalog (SF_SOMETIMES, SF_REACHABLE, SF_MAXIMIZE):
 * the sites the linker gathered into this binary, and a site's position in
 * it. Internal to the runner and the features; the catalog itself is
 * public through sf_sites() (<simfuzz/simfuzz.h>). */
#ifndef SIMFUZZ_RUN_SITES_H
#define SIMFUZZ_RUN_SITES_H

#include <simfuzz/simfuzz.h>

#include <stddef.h>
#include <stdint.h>

/** The position of `site` in this binary's catalog, or SIZE_MAX when it is
 *  not one of its entries (a shared library's site, a stray pointer). */
size_t sf__site_index(const sf_site *site);

#endif
