#pragma once
// The PMIx calls the PMI-1 key-value space (pmix_kvs.hpp) makes, as an interface: PmixClient
// in production, an in-memory job of several ranks in unit tests.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainrt::launch {

class PmixStore {
public:
    virtual ~PmixStore() = default;
    virtual int rank() const = 0;
    // The node of each of the job's `world_size` ranks (any node numbering), from what PMIx holds
    // for the whole job: other nodes' ranks' own attributes are not served across nodes by
    // Slurm's PMIx server. Throws LaunchError.
    virtual std::vector<int> node_of_rank(int world_size) const = 0;
    // A string `rank` put under `key` before the last fence; std::nullopt when there is none.
    virtual std::optional<std::string> get_string(int rank, const std::string& key) const = 0;
    virtual void put_global(const std::string& key, const std::string& value) = 0;
    virtual void commit() = 0;
    // Collective over the whole job; afterwards every rank's committed puts are readable.
    virtual void fence_collect() = 0;
    virtual void abort(int exit_code, const std::string& message) = 0;
};

}  // namespace trainrt::launch
