// Which block of each tensor a rank writes (write_plan.hpp): replicated tensors written once in
// all, large ones in row ranges over the ranks, small ones whole by rank 0.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/write/write_plan.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;

namespace {

struct Model {  // buffers for a state; the state points into them
    std::vector<float> embed = std::vector<float>(1000 * 300);  // 1.2 MB, 1000 rows
    std::vector<float> wide = std::vector<float>(3 * 200000);   // 2.4 MB but 3 rows
    std::vector<double> small_a = std::vector<double>(100), small_b = std::vector<double>(90),
                        small_c = std::vector<double>(50), small_d = std::vector<double>(40);
    std::vector<float> shard = std::vector<float>(10);
    CheckpointState state;
    Model() {
        // Added out of name order: the plan follows names, as every rank must agree.
        state.replicated<double>("small_c", small_c, {50})
            .sharded<float>("shard", shard, {40}, {10}, {10})
            .replicated<float>("embed", embed, {1000, 300})
            .replicated<double>("small_a", small_a, {100})
            .replicated<float>("wide", wide, {3, 200000})
            .replicated<double>("small_d", small_d, {40})
            .replicated<double>("small_b", small_b, {90});
    }
};

TensorPart block_named(const WritePlan& plan, const std::string& name, bool* writes = nullptr) {
    for (std::size_t i = 0; i < plan.blocks.size(); ++i)
        if (plan.blocks[i].name == name) {
            if (writes != nullptr) *writes = plan.writes[i];
            return plan.blocks[i];
        }
    FAIL("no block " << name);
    return {};
}

// Rank -> whether it writes `name`, over `world` ranks.
std::vector<bool> writers_of(const Model& model, const std::string& name, int world, bool spread = true) {
    std::vector<bool> writers;
    for (int rank = 0; rank < world; ++rank) {
        bool writes = false;
        block_named(plan_writes(model.state, rank, world, spread), name, &writes);
        writers.push_back(writes);
    }
    return writers;
}

}  // namespace

TEST_CASE("write plan: blocks in name order, sharded blocks as given", "[checkpoint]") {
    const Model model;
    const WritePlan plan = plan_writes(model.state, 1, 4, true);
    std::vector<std::string> names;
    for (const TensorPart& block : plan.blocks) names.push_back(block.name);
    CHECK(names == std::vector<std::string>{"embed", "shard", "small_a", "small_b", "small_c", "small_d", "wide"});
    bool writes = false;
    const TensorPart shard = block_named(plan, "shard", &writes);
    CHECK(writes);
    CHECK(shard.offset == Shape{10});
    CHECK(shard.data == model.shard.data());
}

TEST_CASE("write plan: a large replicated tensor is split in row ranges, one per rank", "[checkpoint]") {
    const Model model;
    const int world = GENERATE(2, 3, 4);
    std::uint64_t next_row = 0;
    for (int rank = 0; rank < world; ++rank) {
        bool writes = false;
        const TensorPart block = block_named(plan_writes(model.state, rank, world, true), "embed", &writes);
        CHECK(writes);
        CHECK(block.replicated);
        CHECK(block.global_shape == Shape{1000, 300});
        CHECK(block.offset == Shape{next_row, 0});
        CHECK(block.shape[1] == 300);
        CHECK(block.data == model.embed.data() + next_row * 300);
        CHECK(block.shape[0] * world >= 1000 - world);  // even shares
        next_row += block.shape[0];
    }
    CHECK(next_row == 1000);  // the shares cover the rows once
}

TEST_CASE("write plan: small or short replicated tensors stay rank 0's, whole", "[checkpoint]") {
    const Model model;
    // wide has fewer rows (3) than 4 ranks; the small ones are under 1 MiB (batch-norm statistics
    // differ between ranks after a forward pass: rank 0's copy is the one DDP keeps).
    for (const char* name : {"wide", "small_a", "small_b", "small_c", "small_d"})
        CHECK(writers_of(model, name, 4) == std::vector<bool>{true, false, false, false});
    CHECK(writers_of(model, "wide", 2) == std::vector<bool>{true, true});  // 3 rows on 2 ranks: split
    CHECK(block_named(plan_writes(model.state, 0, 4, true), "small_a").data == model.small_a.data());
}

TEST_CASE("write plan: one rank, or spread_replicated off, writes every replicated tensor on rank 0", "[checkpoint]") {
    const Model model;
    for (const char* name : {"embed", "wide", "small_a", "small_d"}) {
        CHECK(writers_of(model, name, 1) == std::vector<bool>{true});
        CHECK(writers_of(model, name, 3, false) == std::vector<bool>{true, false, false});
    }
    const TensorPart whole = block_named(plan_writes(model.state, 0, 3, false), "embed");
    CHECK(whole.shape == Shape{1000, 300});
    CHECK(plan_writes(model.state, 1, 3, false).bytes() == 10 * sizeof(float));  // its shard only
}

TEST_CASE("write plan: an async copy holds only the blocks this rank writes", "[checkpoint]") {
    Model model;
    model.embed[500 * 300] = 7.5F;  // row 500: in rank 1's share of 2
    const WritePlan plan = plan_writes(model.state, 1, 2, true);
    std::vector<HostBuffer> buffers;
    const WritePlan copy = copy_blocks(plan, buffers);
    model.embed[500 * 300] = 0;  // the caller goes on training
    const TensorPart embed = block_named(copy, "embed");
    CHECK(static_cast<const float*>(embed.data)[0] == 7.5F);
    std::uint64_t held = 0;
    for (std::size_t i = 0; i < copy.blocks.size(); ++i)
        if (copy.writes[i]) held += buffers[i].capacity;
        else CHECK(copy.blocks[i].data == nullptr);
    CHECK(held >= plan.bytes());
    CHECK(held <= plan.bytes() + plan.bytes() / 4 + 16);
}
