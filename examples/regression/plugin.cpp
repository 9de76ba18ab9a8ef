// The plugin: libregression.so, selected with run.workload = plugin:/path/libregression.so
#include <trainrt/plugin.hpp>

#include "regression.hpp"

TRAINRT_WORKLOAD(regression, regression::train);
