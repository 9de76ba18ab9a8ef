// request_requeue (launch/requeue.hpp) against a scripted Slurm: who requeued, and what a failed
// scontrol means.
#include <catch2/catch.hpp>

#include "launch/requeue.hpp"
#include "fake_slurm.hpp"
#include "trainrt/error.hpp"

using trainrt::testing::FakeSlurm;

TEST_CASE("requeue: scontrol requeue succeeds: requeued by trainrt", "[launch]") {
    FakeSlurm slurm;
    const auto outcome = trainrt::launch::request_requeue(slurm, "42", 0);
    CHECK(outcome.by == "trainrt");
    CHECK(outcome.exit_code == trainrt::exit_codes::stopped);
    CHECK(slurm.requeued == std::vector<std::string>{"42"});
}

TEST_CASE("requeue: scontrol fails but the job was requeued (scontrol killed by the requeue)", "[launch]") {
    FakeSlurm slurm;
    slurm.requeue_exit = 143;
    SECTION("slurmctld carried it out: requeued by trainrt") {
        slurm.requeue_done_anyway = true;
        const auto outcome = trainrt::launch::request_requeue(slurm, "42", 0);
        CHECK(outcome.by == "trainrt");
        CHECK(outcome.message.find("requeued job 42") != std::string::npos);
    }
    SECTION("it did not: not requeued, resubmit") {
        const auto outcome = trainrt::launch::request_requeue(slurm, "42", 0);
        CHECK(outcome.by.empty());
        CHECK(outcome.message.find("resubmit the job to resume") != std::string::npos);
    }
}
