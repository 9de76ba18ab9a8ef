#include "trainrt/session.hpp"

namespace trainrt {

StepBoundary at_step_boundary(Session& session, std::int64_t step, std::int64_t every_steps, bool epoch_ends) {
    const bool stop = session.should_stop();
    const bool periodic = !epoch_ends && ((every_steps > 0 && step % every_steps == 0) || session.checkpoint_due());
    return {stop, stop || periodic};
}

}  // namespace trainrt
