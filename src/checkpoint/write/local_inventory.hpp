#pragma once
// What the local checkpoint levels hold across the nodes, and the restore's choice among them
// (local_level.hpp). Pure logic: the nodes' lists come in, a decision comes out.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainrt::checkpoint {

// A local checkpoint as one node holds it: the manifest's identity and the files found valid.
struct Held {
    std::string key;  // name@created: two attempts may each have saved a checkpoint of one name
    std::string name;
    std::int64_t iteration = 0;
    int world_size = 0;
    std::string manifest_path;
    std::vector<std::string> files;           // every file the manifest lists
    std::map<std::string, std::string> held;  // file -> its path on this node
};

nlohmann::ordered_json to_json(const Held& held);
Held held_from_json(const nlohmann::ordered_json& json);

// The newest checkpoint of iteration `at_least` or later whose every file some node holds (the
// nodes' lists together in `all`); nothing when none is complete.
std::optional<Held> newest_complete(const std::vector<Held>& all, std::int64_t at_least);

// True when some file of `chosen` survives only as a partner copy: no node holds it in its
// writer's own directory (.../rank_NNNNN/<name>/rank_NNNNN.h5).
bool needs_partner_copies(const Held& chosen, const std::vector<Held>& all);

// The files of `held` (what one node holds of a checkpoint) whose checksums local rank
// `local_rank` of the node verifies, so that the node's ranks share the reading: the file each
// local rank j wrote, `owned`[j] (one entry per local rank), is its own to verify (it keeps the
// bytes to restore from), the others (partner copies), in name order, each to the local rank
// with the fewest files so far (the lowest such).
// As file -> its path on the node.
std::map<std::string, std::string> verification_share(const Held& held, int local_rank,
                                                      const std::vector<std::string>& owned);

// Takes the `damaged` files, (node, file), of checkpoint `key` out of the nodes' lists: a
// checksum that failed on a node leaves that node's copy unused; another node's copy (a partner
// copy) may still complete the checkpoint.
void drop_damaged(std::vector<std::vector<Held>>& by_node, const std::string& key,
                  const std::vector<std::pair<int, std::string>>& damaged);

}  // namespace trainrt::checkpoint
