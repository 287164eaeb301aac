#include "testlib.h"
TEST(placeholder) { CHECK(1); }
TEST_MAIN(T(placeholder))
