#pragma once
// What a training function reports: named numbers, and strings as tags. Order is kept.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trainrt {

using MetricValue = std::variant<double, std::int64_t, std::string>;

class Metrics {
public:
    Metrics& set(const std::string& key, MetricValue value);
    const std::vector<std::pair<std::string, MetricValue>>& items() const { return items_; }
    const MetricValue* find(const std::string& key) const;

private:
    std::vector<std::pair<std::string, MetricValue>> items_;
};

}  // namespace trainrt
