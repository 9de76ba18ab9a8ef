// The PMI-1 key-value space over PMIx (owner resolution, key indexes, process mapping), run
// against an in-memory job of several ranks instead of a PMIx server; and check_pmix's messages.
#include <catch2/catch.hpp>

#include <pmix.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "launch/pmix_client.hpp"
#include "launch/pmix_kvs.hpp"
#include "trainrt/error.hpp"

using trainrt::launch::PmixKvs;
using trainrt::launch::PmixStore;

namespace {

struct FakeJob {
    std::map<std::pair<int, std::string>, std::string> published;  // (rank, key) after a fence
    std::vector<int> node_of_rank;
    std::vector<std::pair<int, std::string>> gets;                   // every get_string made
};

// One rank of the job. Its fence publishes only its own data: a test fences every rank in turn
// before reading, which is what a collective fence guarantees.
class FakeRank final : public PmixStore {
public:
    FakeRank(FakeJob& job, int rank) : job_(job), rank_(rank) {}
    int rank() const override { return rank_; }
    std::vector<int> node_of_rank(int world_size) const override {
        if (static_cast<std::size_t>(world_size) != job_.node_of_rank.size())
            throw trainrt::LaunchError("unexpected world size");
        return job_.node_of_rank;
    }
    std::optional<std::string> get_string(int rank, const std::string& key) const override {
        job_.gets.emplace_back(rank, key);
        auto it = job_.published.find({rank, key});
        if (it == job_.published.end()) return std::nullopt;
        return it->second;
    }
    void put_global(const std::string& key, const std::string& value) override {
        staged_[key] = value;
    }
    void commit() override { committed_.merge(staged_); }
    void fence_collect() override {
        for (auto& [key, value] : committed_) job_.published[{rank_, key}] = value;
        committed_.clear();
    }
    void abort(int exit_code, const std::string&) override { aborted_with = exit_code; }

    std::optional<int> aborted_with;

private:
    FakeJob& job_;
    int rank_;
    std::map<std::string, std::string> staged_, committed_;
};

struct Job {
    explicit Job(int size) {
        job.node_of_rank.assign(static_cast<std::size_t>(size), 0);
        for (int rank = 0; rank < size; ++rank) {
            ranks.push_back(std::make_unique<FakeRank>(job, rank));
            kvs.push_back(std::make_unique<PmixKvs>(*ranks.back(), size));
        }
    }
    void fence() {
        for (auto& rank : kvs) rank->fence();
    }
    PmixKvs& operator[](int rank) { return *kvs[static_cast<std::size_t>(rank)]; }

    FakeJob job;
    std::vector<std::unique_ptr<FakeRank>> ranks;
    std::vector<std::unique_ptr<PmixKvs>> kvs;
};

}  // namespace

TEST_CASE("pmix kvs: an MPICH key is fetched from the rank its name gives", "[pmi1]") {
    Job job(3);
    job[0].put("-bcast-1-0", "00FF");
    job.fence();
    job.job.gets.clear();
    CHECK(job[2].get("-bcast-1-0") == "00FF");
    REQUIRE(job.job.gets.size() == 1);
    CHECK(job.job.gets[0] == std::pair<int, std::string>{0, "trainrt.pmi1.k.-bcast-1-0"});
}

TEST_CASE("pmix kvs: a key whose name gives no owner is found through the indexes", "[pmi1]") {
    Job job(4);
    job[1].put("service", "port-1");
    job[3].put("other", "x");
    job.fence();
    job.job.gets.clear();
    CHECK(job[2].get("service") == "port-1");
    CHECK(job.job.gets.size() == 3 + 1);  // three other ranks' indexes, then the value
    job.job.gets.clear();
    CHECK(job[2].get("other") == "x");    // indexes of that fence are read once
    CHECK(job.job.gets.size() == 1);
}

TEST_CASE("pmix kvs: indexes of every fence are read", "[pmi1]") {
    Job job(3);
    job[0].put("first", "1");
    job.fence();
    CHECK(job[2].get("first") == "1");
    job[1].put("second", "2");
    job.fence();
    CHECK(job[2].get("second") == "2");
    CHECK(job[0].get("second") == "2");
}

TEST_CASE("pmix kvs: missing keys and keys before their fence are not found", "[pmi1]") {
    Job job(2);
    job[0].put("late", "1");
    job[0].put("-bcast-1-0", "2");
    CHECK_FALSE(job[1].get("late"));
    CHECK_FALSE(job[1].get("-bcast-1-0"));
    CHECK_FALSE(job[1].get("never-put"));
    CHECK(job[0].get("late") == "1");  // a rank reads its own puts at once
}

TEST_CASE("pmix kvs: process mapping from node ids", "[pmi1]") {
    Job job(4);
    job.job.node_of_rank = {5, 5, 9, 9};
    CHECK(job[0].process_mapping() == "(vector,(0,2,2))");
}

TEST_CASE("pmix kvs: abort goes to PMIx with the exit code", "[pmi1]") {
    Job job(2);
    job[1].abort(3);
    CHECK(job.ranks[1]->aborted_with == 3);
}

TEST_CASE("check_pmix names the call and PMIx's error text", "[pmi1]") {
    CHECK_NOTHROW(trainrt::launch::check_pmix(PMIX_SUCCESS, "PMIx_Fence"));
    CHECK_THROWS_AS(trainrt::launch::check_pmix(PMIX_ERR_TIMEOUT, "PMIx_Fence"),
                    trainrt::LaunchError);
    CHECK_THROWS_WITH(trainrt::launch::check_pmix(PMIX_ERR_TIMEOUT, "PMIx_Fence"),
                      Catch::Contains("PMIx_Fence") &&
                          Catch::Contains(PMIx_Error_string(PMIX_ERR_TIMEOUT)) &&
                          Catch::Contains("-24"));
}
