#include "launch/pmix_kvs.hpp"


#include <sstream>

#include <fmt/format.h>

#include "launch/pmi1_keys.hpp"
#include "launch/pmi1_mapping.hpp"
#include "trainrt/error.hpp"

namespace trainrt::launch {
namespace {

// PMI-1 keys live under their own prefix: no clash with PMIx's reserved "pmix" keys or with
// other users of the job's PMIx space, and none with the indexes below.
std::string data_key(const std::string& key) { return "trainrt.pmi1.k." + key; }
std::string index_key(int fence) { return fmt::format("trainrt.pmi1.i.{}", fence); }

// An index is "keys" followed by the keys, space-separated (PMI-1 keys never hold a space);
// the leading word keeps the value non-empty.
std::string format_index(const std::vector<std::string>& keys) {
    std::string index = "keys";
    for (const auto& key : keys) index += ' ' + key;
    return index;
}

std::vector<std::string> parse_index(const std::string& index) {
    std::istringstream words(index);
    std::vector<std::string> keys;
    std::string word;
    words >> word;  // "keys"
    while (words >> word) keys.push_back(word);
    return keys;
}

}  // namespace

PmixKvs::PmixKvs(PmixStore& pmix, int world_size) : pmix_(pmix), world_size_(world_size) {}

void PmixKvs::put(const std::string& key, const std::string& value) {
    pmix_.put_global(data_key(key), value);
    if (mine_.insert_or_assign(key, value).second) unpublished_.push_back(key);
}

void PmixKvs::fence() {
    pmix_.put_global(index_key(fences_), format_index(unpublished_));
    pmix_.commit();
    pmix_.fence_collect();
    ++fences_;
    unpublished_.clear();
}

std::optional<std::string> PmixKvs::get(const std::string& key) {
    if (auto it = mine_.find(key); it != mine_.end()) return it->second;
    auto owner = owner_of(key);
    if (!owner) return std::nullopt;
    return pmix_.get_string(*owner, data_key(key));
}

std::optional<int> PmixKvs::owner_of(const std::string& key) {
    if (auto owner = known_owner(key)) return owner;
    if (auto owner = pmi1::mpich_key_owner(key, world_size_)) return owner;
    read_new_indexes();
    return known_owner(key);
}

std::optional<int> PmixKvs::known_owner(const std::string& key) const {
    auto it = owners_.find(key);
    if (it == owners_.end()) return std::nullopt;
    return it->second;
}

// Every rank publishes an index at every fence, so each get below finds its key; a rank whose
// index is missing (not served by this launcher) is skipped.
void PmixKvs::read_new_indexes() {
    for (; indexed_fences_ < fences_; ++indexed_fences_) {
        for (int rank = 0; rank < world_size_; ++rank) {
            if (rank == pmix_.rank()) continue;
            auto index = pmix_.get_string(rank, index_key(indexed_fences_));
            if (!index) continue;
            for (auto& key : parse_index(*index)) owners_.insert_or_assign(std::move(key), rank);
        }
    }
}

std::optional<std::string> PmixKvs::process_mapping() {
    if (!mapping_) {
        mapping_ = pmi1::format_process_mapping(pmix_.node_of_rank(world_size_));
    }
    return mapping_;
}

void PmixKvs::abort(int exit_code) {
    pmix_.abort(exit_code, fmt::format("MPI called PMI_Abort with exit code {} on rank {}",
                                         exit_code, pmix_.rank()));
}

}  // namespace trainrt::launch
