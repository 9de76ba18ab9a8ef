#include "runtime/resume.hpp"

#include "checkpoint/format/manifest.hpp"
#include "log/log.hpp"
#include "runlog/events.hpp"
#include "runlog/run_files.hpp"

namespace trainrt::runtime {

void Resume::offer(std::optional<Checkpoint> restored, double read_seconds, std::int64_t superseded,
                   std::string level) {
    restored_ = std::move(restored);
    level_ = std::move(level);
    restore_seconds_ = read_seconds;
    superseded_ = superseded;
}

const Checkpoint* Resume::take() const {
    if (!restored_) return nullptr;
    if (!taken_ && context_.world_rank == 0) {
        runlog::RestoreEvent event{restored_->path(), restored_->iteration(), restored_->world_size(), superseded_};
        if (std::string source = checkpoint::read_manifest(restored_->path()).copied_from; !source.empty())
            event.copied_from = std::move(source);
        event.level = level_;
        runlog::append(context_.run_dir, context_, event);
        log::info("resuming from {} (iteration {}{})", restored_->path(), restored_->iteration(),
                  level_ == "pfs" ? "" : ", " + level_ + " level");
    }
    taken_ = true;
    return &*restored_;
}

void Resume::settle(metrics::ResultLog& results) {
    if (settled_) return;
    settled_ = true;
    if (!restored_ || taken_) return;
    const std::int64_t moved = results.start_over();
    if (context_.world_rank == 0)
        log::warn("{} exists, but the workload did not take it (trainrt.get_checkpoint() in Python, "
                  "session.checkpoint() in C++) before its first report: it started over, and the {} "
                  "earlier result row(s) were moved to {}", restored_->path(), moved, runlog::kSupersededResults);
    restored_.reset();
}

double Resume::read_seconds() const {
    return restored_ ? restore_seconds_ + restored_->read_seconds() : 0.0;
}

}  // namespace trainrt::runtime
