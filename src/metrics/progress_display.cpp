#include "metrics/progress_display.hpp"

#include "log/log.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <algorithm>

#include <fmt/format.h>

namespace trainrt::metrics {
namespace {

std::string clock_text(double seconds) {
    const auto total = static_cast<long long>(std::max(0.0, seconds));
    return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

bool contains(std::string text, const char* part) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text.find(part) != std::string::npos;
}

// `key` itself when reported, else the first numeric user metric whose name contains `part`.
const nlohmann::ordered_json* find_metric(const Row& row, const char* key, const char* part) {
    if (row.contains(key) && row[key].is_number()) return &row[key];
    for (const auto& [name, value] : row.items())
        if (!name.empty() && name[0] != '_' && value.is_number() && contains(name, part)) return &value;
    return nullptr;
}

std::optional<double> number(const Row& row, const char* key) {
    if (!row.contains(key) || !row[key].is_number()) return std::nullopt;
    return row[key].get<double>();
}

void write_out(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

}  // namespace

ProgressMode progress_mode(ProgressSetting setting) {
    switch (setting) {
        case ProgressSetting::tty: return ProgressMode::tty;
        case ProgressSetting::lines: return ProgressMode::lines;
        case ProgressSetting::off: return ProgressMode::off;
        case ProgressSetting::automatic: break;
    }
    return ::isatty(STDOUT_FILENO) ? ProgressMode::tty : ProgressMode::lines;
}

std::string progress_text(const Row& row, std::int64_t total_epochs, double eta_s) {
    std::string text = fmt::format("{} iter {}", log::tag(), row.value("_training_iteration", std::int64_t{0}));
    if (auto epoch = number(row, "epoch"))
        text += total_epochs > 0 ? fmt::format(" | epoch {}/{}", *epoch, total_epochs) : fmt::format(" | epoch {}", *epoch);
    if (const auto* loss = find_metric(row, "loss", "loss")) text += fmt::format(" | loss {:.4f}", loss->get<double>());
    if (const auto* accuracy = find_metric(row, "accuracy", "acc"))
        text += fmt::format(" | accuracy {:.4f}", accuracy->get<double>());
    if (auto throughput = number(row, "samples_per_s")) text += fmt::format(" | {:.0f} samples/s", *throughput);
    text += " | " + clock_text(row.value("_time_total_s", 0.0));
    if (eta_s >= 0) text += " | ETA " + clock_text(eta_s);
    return text;
}

// From this attempt's pace: epochs done since its first row over the time they took.
double ProgressDisplay::eta_seconds(const Row& row) {
    const auto epoch = number(row, "epoch");
    if (options_.total_epochs <= 0 || !epoch) return -1;
    if (!first_epoch_) first_epoch_ = std::pair{*epoch, Clock::now()};
    const double done = *epoch - first_epoch_->first;
    if (done <= 0) return -1;
    const double spent = std::chrono::duration<double>(Clock::now() - first_epoch_->second).count();
    return spent / done * std::max(0.0, static_cast<double>(options_.total_epochs) - *epoch);
}

void ProgressDisplay::show(const Row& row) {
    if (options_.mode == ProgressMode::off) return;
    const std::string text = progress_text(row, options_.total_epochs, eta_seconds(row));
    if (options_.mode == ProgressMode::tty) {
        write_out("\r\033[K" + text);
        line_open_ = true;
        return;
    }
    const auto now = Clock::now();
    if (last_printed_ && std::chrono::duration<double>(now - *last_printed_).count() < options_.interval_s) {
        pending_ = text;
        return;
    }
    write_out(text + "\n");
    last_printed_ = now;
    pending_.clear();
}

ProgressDisplay::ProgressDisplay(ProgressOptions options) : options_(options) {
    if (options_.mode == ProgressMode::tty)
        log::set_line_break([this] {
            if (line_open_.exchange(false)) write_out("\n");
        });
}

ProgressDisplay::~ProgressDisplay() {
    if (options_.mode == ProgressMode::tty) log::set_line_break(nullptr);
    end();
}

void ProgressDisplay::end() {
    if (line_open_) write_out("\n");
    line_open_ = false;
    if (!pending_.empty()) write_out(pending_ + "\n");
    pending_.clear();
}

}  // namespace trainrt::metrics
