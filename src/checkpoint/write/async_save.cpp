#include "checkpoint/write/async_save.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/snapshot_check.hpp"
#include "comm/agreement.hpp"
#include "comm/strings.hpp"
#include "log/log.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

using Json = nlohmann::ordered_json;

// An async save between its background write and its commit. Its thread first publishes
// (rank 0) the async save before it, whose every part the ranks agreed was durable, then
// writes this save's data: the previous save is committed before this one's data is written.
struct AsyncSave::InFlight {
    std::string name;
    std::int64_t iteration = 0;
    Json metrics;
    WritePlan plan;  // its blocks' data in host_copy_
    Attributes attributes;
    std::string written_json;  // this rank's RankWrite (rank_write_json), made on the thread
    std::optional<Settled> previous;  // rank 0: the save before, to publish first
    std::exception_ptr failure;  // what publishing the previous save or writing this one threw
    std::thread thread;
    // Background snapshot: set by the thread once the state's large blocks are copied.
    std::mutex copy_mutex;
    std::condition_variable copy_done;
    bool copied = true;
    std::vector<BlockSamples> samples;  // per block of `plan`: the large ones' at report()
    void mark_copied() {
        std::lock_guard<std::mutex> lock(copy_mutex);
        copied = true;
        copy_done.notify_all();
    }
};

AsyncSave::AsyncSave(CommitProtocol& commit, AsyncOptions options, const Context& context, Communicator& comm)
    : commit_(commit), options_(std::move(options)), context_(context), comm_(comm) {}

AsyncSave::~AsyncSave() {
    if (in_flight_ && in_flight_->thread.joinable()) in_flight_->thread.join();
}

SaveReport AsyncSave::save(const CheckpointState& state, std::int64_t iteration, const Json& metrics) {
    const auto start = std::chrono::steady_clock::now();
    // The save in flight is agreed here and published by this save's thread.
    std::optional<Settled> previous = settle_in_flight();
    SaveReport report{checkpoint_name(iteration), 0, 0, 0};
    WritePlan plan;
    set_fault_iteration(iteration);
    try {
        validate_state(state, comm_);
        plan = plan_writes(state, context_.world_rank, context_.world_size, options_.spread_replicated);
        report.bytes = plan.bytes();
    } catch (const Error&) {  // the save before is durable on every rank: commit it all the same
        if (previous) {
            try {
                commit_.publish_and_retain(*previous);
            } catch (const std::exception& error) {
                log::warn("checkpoint: committing {} failed: {}", previous->name, error.what());
            }
        }
        throw;
    }
    start_write(plan, state.attributes(), report.name, iteration, metrics, std::move(previous));
    report.stall_s = seconds_since(start);
    return report;
}

void AsyncSave::start_write(const WritePlan& plan, const Attributes& attributes, const std::string& name,
                            std::int64_t iteration, const Json& metrics, std::optional<Settled> previous) {
    auto flight = std::make_unique<InFlight>();
    flight->name = name;
    flight->iteration = iteration;
    flight->metrics = metrics;
    flight->previous = std::move(previous);
    const bool background = options_.background_snapshot;
    flight->plan = copy_blocks(plan, host_copy_, background ? CopySelect::small : CopySelect::all);
    if (background) {
        flight->copied = false;
        for (std::size_t i = 0; i < plan.blocks.size(); ++i)
            flight->samples.push_back(plan.writes[i] && plan.blocks[i].bytes() >= kBackgroundBlockBytes
                                          ? sample_block(plan.blocks[i].data, plan.blocks[i].bytes())
                                          : BlockSamples{});
    }
    flight->attributes = attributes;
    InFlight* raw = flight.get();
    flight->thread = std::thread([this, raw, background] {
        // The snapshot comes first (the training thread may wait for it), then the save before is
        // published whatever the snapshot found, then this one is written.
        const std::exception_ptr snapshot = background ? attempt_checkpoint([&] { take_snapshot(*raw); }) : nullptr;
        raw->mark_copied();
        raw->failure = attempt_checkpoint([&] {
            if (raw->previous) commit_.publish_and_retain(*raw->previous);
            if (snapshot) std::rethrow_exception(snapshot);
            // Every rank makes the pending directory (mkdir -p): no agreement on the main thread.
            // A stale one was removed by restore's clean-up or by the discard of a failed save.
            storage::make_dirs(commit_.pending(raw->name));
            raw->written_json = rank_write_json(commit_.write(raw->plan, raw->name)).dump();
        });
    });
    in_flight_ = std::move(flight);
}

// The large blocks copied into the host buffers, each checked against its samples from report().
void AsyncSave::take_snapshot(InFlight& flight) {
    if (options_.before_background_copy) options_.before_background_copy();
    const WritePlan live = flight.plan;
    flight.plan = copy_blocks(live, host_copy_, CopySelect::large);
    for (std::size_t i = 0; i < live.blocks.size(); ++i) {
        if (flight.samples[i].words.empty()) continue;
        const TensorPart& block = live.blocks[i];
        const std::string problem =
            snapshot_problem(block.name, flight.samples[i], flight.plan.blocks[i].data, block.data, block.bytes());
        if (!problem.empty()) throw CheckpointError(problem);
    }
}

double AsyncSave::await_snapshot() {
    InFlight* flight = in_flight_.get();
    if (flight == nullptr) return 0;
    std::unique_lock<std::mutex> lock(flight->copy_mutex);
    if (flight->copied) return 0;
    const auto start = std::chrono::steady_clock::now();
    flight->copy_done.wait(lock, [&] { return flight->copied; });
    return seconds_since(start);
}

std::optional<Settled> AsyncSave::settle_in_flight() {
    if (!in_flight_) return std::nullopt;
    std::unique_ptr<InFlight> flight = std::move(in_flight_);
    flight->thread.join();
    try {
        comm::agree(comm_, flight->failure, "checkpoint: writing " + flight->name);
    } catch (const CheckpointError&) {
        commit_.discard(flight->name);
        if (flight->previous) commit_.discard(flight->previous->name);  // its publication failed
        throw;
    }
    std::vector<std::string> writes = comm::allgather_strings(comm_, flight->written_json);
    if (!commit_.root()) return std::nullopt;
    return Settled{flight->name,           flight->iteration,          std::move(flight->metrics),
                   std::move(flight->plan), std::move(flight->attributes), std::move(writes)};
}

void AsyncSave::finish() {
    if (!in_flight_) return;
    const std::string name = in_flight_->name;
    const std::optional<Settled> settled = settle_in_flight();
    std::exception_ptr failure;
    if (commit_.root()) failure = attempt_checkpoint([&] { commit_.publish(commit_.manifest_of(*settled)); });
    commit_.agree_or_discard(failure, name, "checkpoint: committing " + name);
    if (commit_.root()) commit_.apply_retention(name, settled->iteration);
}

}  // namespace trainrt::checkpoint
