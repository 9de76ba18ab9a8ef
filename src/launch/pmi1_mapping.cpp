#include "launch/pmi1_mapping.hpp"

#include <map>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch::pmi1 {
namespace {

struct Block {
    int start;  // first dense node index
    int nodes;  // how many consecutive nodes
    int ppn;    // ranks on each of them
};

std::vector<int> dense_node_ids(const std::vector<int>& node_of_rank) {
    std::map<int, int> dense;
    std::vector<int> ids;
    ids.reserve(node_of_rank.size());
    for (int node : node_of_rank) {
        auto [it, added] = dense.try_emplace(node, static_cast<int>(dense.size()));
        ids.push_back(it->second);
    }
    return ids;
}

// Runs of equal node ids become (node, 1, run length); a run that continues the previous block
// on the next node with the same length widens that block instead.
std::vector<Block> blocks_of(const std::vector<int>& ids) {
    std::vector<Block> blocks;
    for (std::size_t first = 0; first < ids.size();) {
        std::size_t last = first;
        while (last < ids.size() && ids[last] == ids[first]) ++last;
        Block run{ids[first], 1, static_cast<int>(last - first)};
        Block* previous = blocks.empty() ? nullptr : &blocks.back();
        if (previous && previous->ppn == run.ppn && previous->start + previous->nodes == run.start)
            ++previous->nodes;
        else
            blocks.push_back(run);
        first = last;
    }
    return blocks;
}

}  // namespace

std::string format_process_mapping(const std::vector<int>& node_of_rank) {
    if (node_of_rank.empty())
        throw LaunchError("launch: PMI_process_mapping of an empty job requested");
    std::string mapping = "(vector";
    for (const Block& block : blocks_of(dense_node_ids(node_of_rank)))
        mapping += fmt::format(",({},{},{})", block.start, block.nodes, block.ppn);
    mapping += ')';
    return mapping;
}

}  // namespace trainrt::launch::pmi1
