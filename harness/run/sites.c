/* The assertion-site catalog: the linker gathers every sf_site of the
 * binary into the section sf_site_catalog (<simfuzz/simfuzz.h>); its
 * bounds are __start_/__stop_sf_site_catalog, weak, NULL when no object
 * has a site. */
#include "sites.h"

sf_site *sf_sites(size_t *n) {
  uintptr_t a = (uintptr_t)__start_sf_site_catalog, b = (uintptr_t)__stop_sf_site_catalog;
  *n = a && b > a ? (size_t)(b - a) / sizeof(sf_site) : 0;
  SIM_ASSERT(!*n || (b - a) % sizeof(sf_site) == 0); /* whole entries only */
  return *n ? __start_sf_site_catalog : NULL;
}

size_t sf__site_index(const sf_site *site) {
  size_t n;
  sf_site *first = sf_sites(&n);
  uintptr_t a = (uintptr_t)first, p = (uintptr_t)site;
  if (!first || p < a || (p - a) % sizeof(sf_site) != 0 || (p - a) / sizeof(sf_site) >= n)
    return SIZE_MAX;
  size_t i = (p - a) / sizeof(sf_site);
  SIM_ASSERT(&first[i] == site);
  return i;
}
