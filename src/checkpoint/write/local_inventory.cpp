#include "checkpoint/write/local_inventory.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace trainrt::checkpoint {

using Json = nlohmann::ordered_json;

Json to_json(const Held& h) {
    return {{"key", h.key}, {"name", h.name}, {"iteration", h.iteration}, {"world_size", h.world_size},
            {"manifest", h.manifest_path}, {"files", h.files}, {"held", h.held}};
}

Held held_from_json(const Json& j) {
    return {j.at("key"), j.at("name"), j.at("iteration"), j.at("world_size"), j.at("manifest"),
            j.at("files").get<std::vector<std::string>>(), j.at("held").get<std::map<std::string, std::string>>()};
}

std::optional<Held> newest_complete(const std::vector<Held>& all, std::int64_t at_least) {
    std::map<std::string, std::set<std::string>> held;
    std::map<std::string, const Held*> first;
    for (const Held& h : all) {
        for (const auto& [file, path] : h.held) held[h.key].insert(file);
        if (!first.count(h.key)) first[h.key] = &h;
    }
    std::optional<Held> best;
    for (const auto& [key, h] : first) {
        const bool complete = std::all_of(h->files.begin(), h->files.end(),
                                          [&](const std::string& f) { return held[key].count(f) > 0; });
        if (complete && h->iteration >= at_least && (!best || h->iteration > best->iteration)) best = *h;
    }
    return best;
}

bool needs_partner_copies(const Held& chosen, const std::vector<Held>& all) {
    for (const std::string& file : chosen.files) {
        bool original = false;
        for (const Held& h : all)
            if (h.key == chosen.key && h.held.count(file))
                original = original ||
                           fs::path(h.held.at(file)).parent_path().parent_path().filename().string() + ".h5" == file;
        if (!original) return true;
    }
    return false;
}

std::map<std::string, std::string> verification_share(const Held& held, int local_rank,
                                                      const std::vector<std::string>& owned) {
    std::map<std::string, std::string> share;
    std::vector<int> files_of(std::max<std::size_t>(1, owned.size()), 0);  // by local rank
    auto owner_of = [&](const std::string& file) {
        return static_cast<int>(std::find(owned.begin(), owned.end(), file) - owned.begin());
    };
    for (const auto& [file, path] : held.held)
        if (owner_of(file) < static_cast<int>(owned.size())) ++files_of[owner_of(file)];
    for (const auto& [file, path] : held.held) {
        int verifier = owner_of(file);
        if (verifier == static_cast<int>(owned.size())) {  // a copy: to the rank with the fewest files
            verifier = static_cast<int>(std::min_element(files_of.begin(), files_of.end()) - files_of.begin());
            ++files_of[verifier];
        }
        if (verifier == local_rank) share.emplace(file, path);
    }
    return share;
}

void drop_damaged(std::vector<std::vector<Held>>& by_node, const std::string& key,
                  const std::vector<std::pair<int, std::string>>& damaged) {
    for (const auto& [node, file] : damaged)
        for (Held& h : by_node.at(static_cast<std::size_t>(node)))
            if (h.key == key) h.held.erase(file);
}

}  // namespace trainrt::checkpoint
