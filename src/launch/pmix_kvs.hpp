#pragma once
// The PMI-1 key-value space on top of PMIx: put is PMIx_Put(PMIX_GLOBAL), barrier is PMIx_Commit +
// PMIx_Fence(collect data), get is PMIx_Get from the rank that put the key.
//
// PMIx needs that owner (Slurm's PMIx server does not answer a get for PMIX_RANK_UNDEF), and PMI-1
// does not say it, so it is found, in order: among the keys this rank put itself or that an index
// already read names; from the key's name (pmi1_keys.hpp: every key MPICH 4.0 puts); and finally
// in the indexes not read yet. At every fence each rank publishes the index of keys it put since
// the previous one; these are read lazily, only when a key's name does not tell its owner.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "launch/pmi1_server.hpp"
#include "launch/pmix_store.hpp"

namespace trainrt::launch {

class PmixKvs final : public pmi1::Backend {
public:
    PmixKvs(PmixStore& pmix, int world_size);

    void put(const std::string& key, const std::string& value) override;
    void fence() override;
    std::optional<std::string> get(const std::string& key) override;
    // From every rank's PMIX_NODEID, read once.
    std::optional<std::string> process_mapping() override;
    void abort(int exit_code) override;

private:
    std::optional<int> owner_of(const std::string& key);
    std::optional<int> known_owner(const std::string& key) const;
    void read_new_indexes();

    PmixStore& pmix_;
    int world_size_;
    int fences_ = 0;          // fences completed
    int indexed_fences_ = 0;  // fences whose indexes are read into owners_
    std::vector<std::string> unpublished_;                // keys put since the last fence
    std::unordered_map<std::string, std::string> mine_;   // what this rank put
    std::unordered_map<std::string, int> owners_;         // from indexes
    std::optional<std::string> mapping_;
};

}  // namespace trainrt::launch
