// A fast workload for the metrics tests: reports `train.reports` times with rank-dependent
// values, so the cross-rank summaries differ from rank 0's value and are known exactly:
//   loss = 1 / iteration + 0.01 * rank, accuracy = 1 - loss, epoch = (iteration - 1) / 5 + 1,
//   samples_per_s = 1000 * (rank + 1), phase = "warmup" for iterations <= 2 else "train" (a tag).
// From iteration `train.late_key_at` on (0: never) it also reports val_loss (a key that appears
// later). `train.slow_rank` sleeps `train.slow_ms` more than the others before every report (a
// straggler); every rank sleeps `train.sleep_ms`. `train.checkpoint_every` > 0 saves a checkpoint
// with the iteration every that many reports, and a restarted run resumes after it.
// `train.epochs` only tells the progress display the total (for its ETA). `train.nan_at` > 0 makes
// `train.nan_rank` (-1: every rank) report loss = NaN at that iteration (a diverged run).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <trainrt/keys.hpp>
#include <trainrt/plugin.hpp>

namespace {

#define REPORTER_TRAIN_KEYS(KEY)                                                                          \
    KEY(reports, std::int64_t, "20", trainrt::at_least(1), "reports to make")                                \
    KEY(sleep_ms, double, "0", trainrt::any_value(), "every rank's work per iteration (ms)")                \
    KEY(slow_rank, std::int64_t, "-1", trainrt::any_value(), "the straggling rank (-1: none)")               \
    KEY(slow_ms, double, "0", trainrt::any_value(), "the straggler's extra work per iteration (ms)")        \
    KEY(late_key_at, std::int64_t, "0", trainrt::any_value(), "first iteration reporting val_loss (0: never)") \
    KEY(checkpoint_every, std::int64_t, "0", trainrt::any_value(), "checkpoint every N reports (0: never)")  \
    KEY(epochs, std::int64_t, "0", trainrt::any_value(), "epochs the run has (5 reports each; for the ETA only)") \
    KEY(nan_at, std::int64_t, "0", trainrt::any_value(), "iteration whose loss is NaN (0: none)")            \
    KEY(nan_rank, std::int64_t, "-1", trainrt::any_value(), "the rank reporting it (-1: every rank)")
TRAINRT_KEYS(ReporterKeys, "train", REPORTER_TRAIN_KEYS);

void sleep_ms(double ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

trainrt::Metrics metrics_at(std::int64_t iteration, int rank, std::int64_t late_key_at) {
    const double loss = 1.0 / static_cast<double>(iteration) + 0.01 * rank;
    trainrt::Metrics metrics;
    metrics.set("epoch", (iteration - 1) / 5 + 1).set("loss", loss).set("accuracy", 1.0 - loss)
        .set("samples_per_s", 1000.0 * (rank + 1)).set("phase", std::string(iteration <= 2 ? "warmup" : "train"));
    if (late_key_at > 0 && iteration >= late_key_at) metrics.set("val_loss", 2 * loss);
    return metrics;
}

void train(trainrt::Session& session) {
    const ReporterKeys keys = ReporterKeys::read(session.config());
    const int rank = session.context().world_rank;
    const std::int64_t reports = keys.reports.value;
    const std::int64_t every = keys.checkpoint_every.value;
    const std::int64_t late_key_at = keys.late_key_at.value;
    const double work_ms = keys.sleep_ms.value;
    const double extra_ms = rank == keys.slow_rank.value ? keys.slow_ms.value : 0.0;
    std::int64_t iteration = 0;
    if (const trainrt::Checkpoint* checkpoint = session.checkpoint()) iteration = checkpoint->attribute_int("iteration");
    while (iteration < reports) {
        ++iteration;
        sleep_ms(work_ms + extra_ms);
        trainrt::Metrics metrics = metrics_at(iteration, rank, late_key_at);
        const std::int64_t nan_rank = keys.nan_rank.value;
        if (iteration == keys.nan_at.value && (nan_rank < 0 || nan_rank == rank))
            metrics.set("loss", std::nan(""));
        if (every > 0 && iteration % every == 0) {
            trainrt::CheckpointState state;
            state.attribute("iteration", iteration);
            session.report(metrics, state);
        } else {
            session.report(metrics);
        }
        if (iteration < reports && session.should_stop()) return;
    }
    if (rank == 0) std::printf("reporter_done=%lld\n", static_cast<long long>(iteration));
}

}  // namespace

TRAINRT_WORKLOAD_WITH(reporter, "fast reports with known values (metrics tests)", train, ReporterKeys::specs, nullptr);
