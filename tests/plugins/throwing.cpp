// A workload whose training function throws std::runtime_error on rank 1 at its third step while
// rank 0 goes on into the next collective: the job must end on every rank (no hang) with rank 1's
// message in the run's failure record.
#include <stdexcept>

#include <trainrt/plugin.hpp>

namespace {

void train(trainrt::Session& session) {
    for (int step = 1; step <= 10; ++step) {
        if (step == 3 && session.context().world_rank == 1)
            throw std::runtime_error("loss became NaN at step 3 (injected by the test plugin)");
        double value = session.communicator().allreduce_value(1.0, trainrt::ReduceOp::sum);
        trainrt::Metrics metrics;
        metrics.set("step", step).set("value", value);
        session.report(metrics);
    }
}

}  // namespace

TRAINRT_WORKLOAD(throws_on_rank1, train);
