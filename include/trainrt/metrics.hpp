#pragma once
// What a training function reports: named numbers, and strings as tags. Order is kept.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trainrt {

using MetricValue = std::variant<double, std::int64_t, std::string>;

// A value type of the public API, whole in this header.
class Metrics {
public:
    // Sets `key`, replacing an earlier value in its place (the order of first setting is kept).
    Metrics& set(const std::string& key, MetricValue value) {
        for (auto& [existing, old] : items_)
            if (existing == key) {
                old = std::move(value);
                return *this;
            }
        items_.emplace_back(key, std::move(value));
        return *this;
    }
    const std::vector<std::pair<std::string, MetricValue>>& items() const { return items_; }
    // The value of `key`, nullptr when it was not set.
    const MetricValue* find(const std::string& key) const {
        for (const auto& [existing, value] : items_)
            if (existing == key) return &value;
        return nullptr;
    }

private:
    std::vector<std::pair<std::string, MetricValue>> items_;
};

}  // namespace trainrt
