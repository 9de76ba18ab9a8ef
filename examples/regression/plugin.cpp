// The plugin: libregression.so, selected with run.workload = plugin:/path/libregression.so
#include <trainrt/plugin.hpp>

#include "regression.hpp"

TRAINRT_WORKLOAD_WITH(regression, "linear regression on synthetic data", regression::train,
                      regression::train_keys, nullptr);
