/* kvrep 1.1: the interface of 1.0 (a release that changed no declaration
 * ships the same header with its own version). */
#ifndef KVREP_VERSION
#define KVREP_VERSION "1.1"
#endif
#include "../../kvrep-1.0/include/kvrep.h"
