#include "metrics/result_log.hpp"

#include <fstream>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "comm/collective_watch.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "log/log.hpp"

namespace trainrt::metrics {
namespace {

// The two step times, then every numeric metric, in the order reported.
NamedValues summarized_values(const Metrics& metrics, double iteration_s, double compute_s) {
    NamedValues values{{"_time_this_iter_s", iteration_s}, {"_time_compute_s", compute_s}};
    for (const auto& [key, value] : metrics.items()) {
        if (const auto* real = std::get_if<double>(&value)) values.emplace_back(key, *real);
        if (const auto* integer = std::get_if<std::int64_t>(&value))
            values.emplace_back(key, static_cast<double>(*integer));
    }
    return values;
}

constexpr double straggler_note_every_s = 60;

}  // namespace

nlohmann::ordered_json to_json(const Metrics& metrics) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metrics.items())
        std::visit([&row, &key](const auto& v) { row[key] = v; }, value);
    return row;
}

ResultLog::ResultLog(std::string run_dir, const Context& context, ResultLogOptions options)
    : path_(runlog::path_in(run_dir, runlog::kResults)),
      superseded_path_(runlog::path_in(run_dir, runlog::kSupersededResults)), rows_(path_), context_(context), options_(options), tables_(run_dir),
      progress_(context.world_rank == 0 ? options.progress : ProgressOptions{ProgressMode::off}) {}

std::int64_t ResultLog::resume_after(std::int64_t iteration) {
    iteration_ = iteration;
    return keep_rows([iteration](std::int64_t at) { return at > 0 && at <= iteration; });
}

std::int64_t ResultLog::start_over() {
    total_before_s_ = 0;
    return keep_rows([](std::int64_t) { return false; });
}

std::int64_t ResultLog::keep_rows(const std::function<bool(std::int64_t)>& keep) {
    if (context_.world_rank != 0) return 0;
    std::vector<Row> kept;
    std::vector<std::string> superseded;
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
        auto row = Row::parse(line, nullptr, false);
        const std::int64_t at = row.is_object() ? row.value("_training_iteration", std::int64_t{0}) : 0;
        if (keep(at)) kept.push_back(std::move(row));
        else if (!line.empty()) superseded.push_back(line);
    }
    if (!superseded.empty()) {
        for (const std::string& row : superseded) storage::append_line(superseded_path_, row);
        std::string content;
        for (const Row& row : kept) content += row.dump() + "\n";
        storage::write_file_atomic(path_, content);
        rows_.reopen();
    }
    if (!kept.empty()) total_before_s_ = kept.back().value("_time_total_s", 0.0);
    const MetricsTables::Notices notices = tables_.reconcile(kept);
    for (const std::string& warning : notices.warnings) log::warn("{}", warning);
    for (const std::string& note : notices.notes) log::info("{}", note);
    return static_cast<std::int64_t>(superseded.size());
}

double ResultLog::total_seconds() const {
    return std::chrono::duration<double>(Clock::now() - started_).count();
}

nlohmann::ordered_json ResultLog::autofilled(const Metrics& metrics, Clock::time_point now) const {
    nlohmann::ordered_json row = to_json(metrics);
    row["_training_iteration"] = iteration_;
    row["_timestamp"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    row["_time_this_iter_s"] = std::chrono::duration<double>(now - last_report_).count();
    row["_time_total_s"] = total_before_s_ + std::chrono::duration<double>(now - started_).count();
    row["world_size"] = context_.world_size;
    row["restart_count"] = context_.restart_count;
    return row;
}

const nlohmann::ordered_json& ResultLog::record(const Metrics& metrics, Communicator& comm, Votes& votes) {
    const auto now = Clock::now();
    // Not this rank's own work: time blocked in collectives, and rank 0 writing the files.
    const double blocked = comm::blocked_seconds() + writing_s_;
    ++iteration_;
    last_ = autofilled(metrics, now);
    const double iteration_s = last_["_time_this_iter_s"].get<double>();
    // An attempt's first iteration also holds each rank's start-up: not a straggler's sign.
    const double threshold = reported_this_attempt_ ? options_.straggler_threshold : 0.0;
    RankSummary summary = summarize_ranks(
        comm, summarized_values(metrics, iteration_s, std::max(0.0, iteration_s - (blocked - blocked_at_last_report_))),
        threshold, votes);
    reported_this_attempt_ = true;
    last_["_ranks"] = std::move(summary.ranks);
    last_report_ = now;
    blocked_at_last_report_ = blocked;
    if (context_.world_rank == 0) {
        const auto writing = Clock::now();
        write(last_, summary);
        writing_s_ += std::chrono::duration<double>(Clock::now() - writing).count();
    }
    return last_;
}

void ResultLog::write(const nlohmann::ordered_json& row, const RankSummary& summary) {
    rows_.append(row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    tables_.append(row);
    progress_.show(row);
    note_straggler(summary);
    if (summary.names_differ && !names_differ_noted_)
        log::warn("ranks reported different metric names at iteration {}; only the step times are summarized "
                  "across ranks in such rows", iteration_);
    names_differ_noted_ = names_differ_noted_ || summary.names_differ;
}

// The first straggling iteration is logged at once, later ones at most once a minute, counted.
void ResultLog::note_straggler(const RankSummary& summary) {
    if (!summary.straggler) return;
    ++stragglers_unnoted_;
    const auto now = Clock::now();
    if (last_straggler_note_ && std::chrono::duration<double>(now - *last_straggler_note_).count() < straggler_note_every_s)
        return;
    const Straggler& slow = *summary.straggler;
    log::info("straggler: rank {} worked {:.3f} s in iteration {}, the other ranks {:.3f} s on average ({:.1f}x, "
              "[metrics] straggler_threshold = {}; {} straggling iteration(s) since the last note)",
              slow.rank, slow.work_s, iteration_, slow.others_mean_s, slow.work_s / std::max(slow.others_mean_s, 1e-9),
              options_.straggler_threshold, stragglers_unnoted_);
    last_straggler_note_ = now;
    stragglers_unnoted_ = 0;
}

}  // namespace trainrt::metrics
