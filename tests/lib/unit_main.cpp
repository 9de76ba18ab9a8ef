// The one translation unit that defines Catch2's main() for unit_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
