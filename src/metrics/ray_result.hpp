#pragma once
// A row as Ray Tune names its autofilled fields, for the Python API's Result.metrics,
// metrics_dataframe and ResultGrid.get_dataframe(): training_iteration, time_this_iter_s,
// time_total_s, timestamp (whole seconds, as Ray's), date (local time, "%Y-%m-%d_%H-%M-%S"),
// beside trainrt's own (_training_iteration ...), which stay.
#include "metrics/rows_file.hpp"

namespace trainrt::metrics {

Row with_ray_names(Row row);

}  // namespace trainrt::metrics
