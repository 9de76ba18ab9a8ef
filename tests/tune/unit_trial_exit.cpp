// How a trial step's exit counts for its sweep (tune/trial_exit.hpp).
#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include "trainrt/error.hpp"
#include "tune/trial_exit.hpp"

using namespace trainrt;
using tune::TrialEnd;

namespace {

tune::TrialExitContext running() { return {false, false, {SIGUSR2, SIGTERM}}; }

}  // namespace

TEST_CASE("tune: a trial's exit 0 is done, trainrt's stop codes are stops as they are", "[tune]") {
    CHECK(tune::classify_trial_exit(0, running()).end == TrialEnd::done);
    for (int code : {exit_codes::stopped, exit_codes::requeue_needed, exit_codes::interrupted}) {
        const tune::TrialExit exit = tune::classify_trial_exit(code, running());
        CHECK(exit.end == TrialEnd::stopped);
        CHECK(exit.code == code);
        CHECK(std::string(exit.why).empty());
    }
}

TEST_CASE("tune: a trial killed by a stop signal before the sweep saw its stop is stopped, not failed", "[tune]") {
    const tune::TrialExit usr2 = tune::classify_trial_exit(128 + SIGUSR2, running());
    CHECK(usr2.end == TrialEnd::stopped);
    CHECK(usr2.code == exit_codes::stopped);
    CHECK(std::string(usr2.why) == "killed by a stop signal");
    CHECK(tune::classify_trial_exit(128 + SIGTERM, running()).end == TrialEnd::stopped);
    // USR1 is not one of this job's stop signals: a death by it is the trial's failure.
    CHECK(tune::classify_trial_exit(128 + SIGUSR1, running()).end == TrialEnd::failed);
    CHECK(tune::classify_trial_exit(128 + SIGUSR1, {false, false, {SIGUSR1}}).end == TrialEnd::stopped);
}

TEST_CASE("tune: a trial failing while the sweep stops is stopped; otherwise a failure is a failure", "[tune]") {
    CHECK(tune::classify_trial_exit(exit_codes::workload, running()).end == TrialEnd::failed);
    CHECK(tune::classify_trial_exit(128 + SIGKILL, running()).end == TrialEnd::failed);
    const tune::TrialExit during = tune::classify_trial_exit(exit_codes::workload, {true, false, {SIGUSR2}});
    CHECK(during.end == TrialEnd::stopped);
    CHECK(during.code == exit_codes::stopped);
    CHECK(std::string(during.why) == "during the sweep's stop");
}

TEST_CASE("tune: a step the sweep ended itself (a lost node) is judged by its code alone", "[tune]") {
    CHECK(tune::classify_trial_exit(128 + SIGTERM, {false, true, {SIGTERM}}).end == TrialEnd::failed);
    CHECK(tune::classify_trial_exit(exit_codes::workload, {true, true, {SIGTERM}}).end == TrialEnd::failed);
    CHECK(tune::classify_trial_exit(exit_codes::stopped, {false, true, {SIGTERM}}).end == TrialEnd::stopped);
}
