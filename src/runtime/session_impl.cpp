#include "runtime/session_impl.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <variant>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "checkpoint/format/manifest.hpp"
#include "checkpoint/write/fault.hpp"
#include "comm/agreement.hpp"
#include "data/configured.hpp"
#include "data/shard.hpp"
#include "data/stream.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"
#include "runlog/events.hpp"
#include "runlog/run_files.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

// The first numeric metric that is NaN or infinite, as "'loss' = nan"; "" when all are finite.
std::string nonfinite_metric(const Metrics& metrics) {
    for (const auto& [name, value] : metrics.items()) {
        const double* number = std::get_if<double>(&value);
        if (number != nullptr && !std::isfinite(*number)) return fmt::format("'{}' = {}", name, *number);
    }
    return "";
}

}  // namespace

namespace {

// Seconds since this process was started (exec), from /proc: covers loading and MPI start-up,
// which no clock inside main() sees. 0 when /proc cannot be read.
double process_age_seconds() {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int index = 3; index <= 22 && fields >> field; ++index) {
    }
    double uptime = 0;
    std::ifstream("/proc/uptime") >> uptime;
    const double started = std::atof(field.c_str()) / static_cast<double>(sysconf(_SC_CLK_TCK));
    return uptime > 0 ? uptime - started : 0.0;
}

metrics::ResultLogOptions result_options(const JobConfig& config, const MetricsSettings& settings) {
    metrics::ResultLogOptions options;
    options.progress.mode = metrics::progress_mode(settings.progress.value);
    options.progress.interval_s = settings.progress_interval.value;
    if (config.has(kTrainEpochsKey)) options.progress.total_epochs = config.get_int(kTrainEpochsKey);
    options.straggler_threshold = settings.straggler_threshold.value;
    return options;
}

// Rank 0's checkpoint clock ([checkpoint] interval); the run's earlier costs and failures come with
// StopCoordinator::recall_checkpoint_costs and recall_mtbf once the record was read.
CheckpointInterval checkpoint_interval(const Settings& settings, const Context& context) {
    Mtbf mtbf = job_mtbf(settings.failure.mtbf.value, context.num_nodes);
    return CheckpointInterval(settings.checkpoint.interval.value.seconds, mtbf.seconds, std::move(mtbf.source));
}

}  // namespace

SessionImpl::SessionImpl(const JobConfig& config, const Settings& settings, Context context,
                         std::unique_ptr<Communicator> comm)
    : config_(config), settings_(settings), context_(std::move(context)), comm_(std::move(comm)),
      results_(context_.run_dir, context_, result_options(config, settings_.metrics)),
      checkpoints_(checkpoint::options_from(settings_.checkpoint), context_, *comm_),
      stops_(*comm_, context_, settings_.stop.time_margin.value.seconds, checkpoint_interval(settings_, context_)),
      pause_(settings_.stop, context_.run_dir), criteria_(stop_criteria(settings_.stop)), resume_(context_) {}

void SessionImpl::report(const Metrics& metrics) { record_row(metrics); }

// A report() since the last call already was this step's boundary: its agreement is the answer
// (every rank follows the same sequence, so the verdict is the same everywhere).
bool SessionImpl::should_stop() {
    if (stops_.boundaries() == 0) first_boundary();
    agreed_since_report_ = !reported_since_check_;
    const bool stop = reported_since_check_ ? stops_.agreed() : stops_.agree();
    reported_since_check_ = false;
    boundary_seen_.store(stops_.boundaries());
    stop_seen_ = stop_seen_ || stop;
    if (stop) await_snapshot();  // the function returns now, and its state may go with it
    return stop;
}

// Fault points for the lifecycle tests: before the row and the checkpoint of this iteration.
void SessionImpl::before_report() {
    const std::int64_t iteration = results_.iterations() + 1;
    checkpoint::fault_point_at("report", context_.world_rank, iteration);
    checkpoint::fault_point_at("hang_report", context_.world_rank, iteration);
}

// A report is a step boundary: the stop agreement rides in the row's own collective (the
// cross-rank summaries), so a report costs one collective. A report right after should_stop()
// agreed is that same boundary and votes nothing: a stop requested in between is agreed at the
// next one, so a caller that chose this report's checkpoint from the agreement (a booster only
// when stopping) is never stopped at a report without it.
void SessionImpl::record_row(const Metrics& metrics) {
    before_report();
    if (stops_.boundaries() == 0) first_boundary();
    const bool same_boundary = std::exchange(agreed_since_report_, false);
    const StopCoordinator::Votes boundary = same_boundary ? StopCoordinator::abstain() : stops_.vote();
    const bool check_finite = settings_.failure.on_nonfinite.value == NonFinitePolicy::fail;
    const std::string nonfinite = check_finite ? nonfinite_metric(metrics) : "";
    metrics::Votes votes{boundary[0], boundary[1], boundary[2], boundary[3], nonfinite.empty() ? 0 : 1};
    results_.record(metrics, *comm_, votes);
    if (!same_boundary) stops_.decide({votes[0], votes[1], votes[2], votes[3]});
    iteration_seen_.store(results_.iterations());
    reported_since_check_ = true;
    boundary_seen_.store(stops_.boundaries());
    if (votes[4] != 0) fail_nonfinite(nonfinite);
    if ((pause_.active() || !criteria_.empty()) && !stops_.agreed()) end_early_if_due(metrics);
}

// Collective (every rank holds the same settings and stop agreement): rank 0 decides whether the
// run ends here as finished, by [stop] criteria or at a pause point by the sweep's verdict (which
// it waits for), and a yes ends it at this boundary on every rank, the report's checkpoint (if it
// has one) committed first.
void SessionImpl::end_early_if_due(const Metrics& metrics) {
    auto reason = static_cast<std::int64_t>(context_.world_rank == 0 ? early_end_on_rank0(metrics) : StopReason::none);
    comm_->broadcast(&reason, sizeof reason, 0);
    if (static_cast<StopReason>(reason) != StopReason::none) stops_.end_early(static_cast<StopReason>(reason));
}

bool SessionImpl::may_end_at(const Metrics& metrics) {
    std::int64_t may = 0;
    if (context_.world_rank == 0) {
        const std::int64_t next = results_.iterations() + 1;
        const nlohmann::ordered_json& last = results_.last();
        const double total_s = last.is_object() ? last.value("_time_total_s", 0.0) : 0.0;
        may = criterion_met(criteria_, metrics, next, total_s).has_value() ||
              (pause_.active() && pause_.would_reach(metrics, next));
    }
    comm_->broadcast(&may, sizeof may, 0);
    return may != 0;
}

StopReason SessionImpl::early_end_on_rank0(const Metrics& metrics) {
    const std::int64_t iteration = results_.iterations();
    if (const auto met = criterion_met(criteria_, metrics, iteration, results_.last().value("_time_total_s", 0.0))) {
        log::info("stop criterion met at iteration {} ({}): the run ends here as finished", iteration, *met);
        return StopReason::criteria;
    }
    const std::optional<std::int64_t> point = pause_.active() ? pause_.reached(metrics, iteration) : std::nullopt;
    if (!point || pause_.await(*point) != Verdict::stop) return StopReason::none;
    log::info("the sweep's scheduler ends this trial at iteration {}", iteration);
    return StopReason::scheduler;
}

// Collective: every rank saw the vote. A save still in flight is an earlier, finite report's:
// committed first, so the latest checkpoint is the last finite one. Then every rank throws the
// lowest such rank's WorkloadError (exit 7), and this report's checkpoint is never written.
void SessionImpl::fail_nonfinite(const std::string& mine) {
    await_snapshot();
    checkpoints_.finish();
    std::exception_ptr local;
    if (!mine.empty())
        local = std::make_exception_ptr(WorkloadError(fmt::format(
            "workload: metric {} reported at iteration {} is not finite (the run diverged?); its checkpoint "
            "was not committed, so the latest checkpoint is the last finite one: fix the cause (e.g. a "
            "smaller learning rate) and rerun to resume from it, or set [failure] on_nonfinite = ignore",
            mine, results_.iterations())));
    comm::agree(*comm_, local);
    throw WorkloadError("workload: a non-finite metric was reported");  // agree threw on every rank
}

std::string SessionImpl::where() const {
    return fmt::format("step boundary {} (after iteration {})", boundary_seen_.load(),
                       iteration_seen_.load());
}

void SessionImpl::report(const Metrics& metrics, const CheckpointState& state) {
    await_snapshot();  // the save before, if its copy is still running
    // The row first: a crash between the two repeats this row after the resume (the previous
    // checkpoint is restored), where the other order would lose it for good.
    record_row(metrics);
    const std::int64_t iteration = results_.iterations();
    checkpoint::SaveReport saved;
    try {
        saved = checkpoints_.save(state, iteration, metrics::to_json(metrics));
    } catch (const CheckpointError& error) {
        if (error.on_all_ranks()) {
            try {  // this report did not happen; on a full disk the next start moves the row
                results_.resume_after(iteration - 1);
            } catch (const Error&) {
            }
        }
        throw;
    }
    if (stops_.agreed()) stop_checkpoint_ = saved.name;  // agreed before or at this boundary
    settle_save(saved, iteration);
}

// The stop's checkpoint between two reports adds no row, so that a stopped and resumed run
// reports the same iterations as an uninterrupted one (Ray counts reports). It takes the next
// report's name, marked as saved between reports (the manifest's metrics); that report replaces
// it after the resume (commit.cpp), and a restore counts on from the report before it
// (Checkpoint::reported_iterations). Every rank holds the same agreement, so all throw alike.
void SessionImpl::save_at_stop(const CheckpointState& state) {
    if (!stops_.agreed())
        throw WorkloadError("workload: save_at_stop() was called with no stop agreed: call it when should_stop() "
                            "returned true (then return); checkpoint a report with report(metrics, state)");
    await_snapshot();
    const std::int64_t iteration = results_.iterations() + 1;
    nlohmann::ordered_json marked = nlohmann::ordered_json::object();
    marked[checkpoint::kBetweenReportsKey] = true;
    const checkpoint::SaveReport saved = checkpoints_.save(state, iteration, marked);
    stop_checkpoint_ = saved.name;
    settle_save(saved, iteration);
}

void SessionImpl::settle_save(const checkpoint::SaveReport& saved, std::int64_t iteration) {
    if (settings_.checkpoint.async.value && settings_.checkpoint.snapshot.value == SnapshotMode::background)
        unrecorded_save_.emplace(saved, iteration);
    else
        record_save(saved, iteration);
    if (stops_.agreed()) await_snapshot();  // a stop's checkpoint: the function returns next
}

void SessionImpl::record_save(const checkpoint::SaveReport& saved, std::int64_t iteration) {
    stops_.record_checkpoint(saved.stall_s, saved.commit_s);
    if (context_.world_rank == 0)
        runlog::append(context_.run_dir, context_,
                       runlog::CheckpointEvent{saved.name, iteration, static_cast<std::int64_t>(saved.bytes),
                                               saved.stall_s, settings_.checkpoint.async.value});
}

void SessionImpl::await_snapshot() {
    const double waited = checkpoints_.await_snapshot();
    if (!unrecorded_save_) return;
    auto [saved, iteration] = *std::exchange(unrecorded_save_, std::nullopt);
    saved.stall_s += waited;
    record_save(saved, iteration);
}

// The first step boundary decides whether the run resumed (resume.hpp).
void SessionImpl::first_boundary() {
    resume_.settle(results_);
    log_resume_latency();
}

// Restart latency: process start to the first step boundary after a restore, less the time
// spent verifying and reading the checkpoint (that depends on its size, not on trainrt).
void SessionImpl::log_resume_latency() {
    if (context_.world_rank != 0) return;
    const double age = process_age_seconds();
    if (!resume_.resumed()) {
        log::info("first step {:.3f} s after process start (fresh start)", age);
        return;
    }
    const double reading = resume_.read_seconds();
    log::info("resumed: first step {:.3f} s after process start, {:.3f} s of it verifying and reading the "
              "checkpoint; restart latency {:.3f} s", age, reading, age - reading);
}

// Collective. The restored checkpoint is offered to the workload; rows reported after it by an
// earlier attempt are set aside now, so result.jsonl never holds an iteration twice.
void SessionImpl::restore() {
    const auto started = std::chrono::steady_clock::now();
    std::optional<Checkpoint> restored = checkpoints_.restore();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::int64_t superseded = results_.resume_after(restored ? restored->reported_iterations() : 0);
    if (superseded > 0 && context_.world_rank == 0)
        log::warn("{} result row(s) reported after the {} were moved to {}", superseded,
                  restored ? "restored checkpoint" : "last start", runlog::kSupersededResults);
    resume_.offer(std::move(restored), seconds, superseded, checkpoints_.restored_level());
}

// Collective, after the workload returned: a workload that never reported decides here.
void SessionImpl::end_resume() { resume_.settle(results_); }

DatasetShard SessionImpl::dataset_shard(const std::string& split, std::uint64_t epoch) {
    data::ShardRequest request;
    request.path = data::configured_path(settings_.data);
    request.split = split;
    request.rank = context_.world_rank;
    request.ranks = context_.world_size;
    const Shuffle shuffle = split == "train" ? settings_.data.shuffle.value : Shuffle::none;
    if (shuffle == Shuffle::blocks)
        throw ConfigError(fmt::format("config: {} needs the streaming reader (session.dataset, "
                                      "trainrt.get_dataset); dataset_shard reads a rank's whole part: use none or "
                                      "global with it", settings_.data.shuffle.stated("blocks")));
    request.shuffle = shuffle != Shuffle::none;
    request.seed = static_cast<std::uint64_t>(settings_.run.seed.value);
    request.epoch = epoch;
    return data::read_shard(request);
}

Dataset SessionImpl::dataset(const std::string& split) {
    return data::open_dataset(data::configured_path(settings_.data), split, context_.world_rank,
                              context_.world_size, static_cast<std::uint64_t>(settings_.run.seed.value));
}

}  // namespace trainrt::runtime
