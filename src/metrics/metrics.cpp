#include "trainrt/metrics.hpp"

namespace trainrt {

Metrics& Metrics::set(const std::string& key, MetricValue value) {
    for (auto& [existing, old] : items_)
        if (existing == key) {
            old = std::move(value);
            return *this;
        }
    items_.emplace_back(key, std::move(value));
    return *this;
}

const MetricValue* Metrics::find(const std::string& key) const {
    for (const auto& [existing, value] : items_)
        if (existing == key) return &value;
    return nullptr;
}

}  // namespace trainrt
