#pragma once
// The PMIx calls the PMI-1 key-value space (pmix_kvs.hpp) makes, as an interface: PmixClient
// in production, an in-memory job of several ranks in unit tests.
#include <cstdint>
#include <optional>
#include <string>

namespace trainrt::launch {

class PmixStore {
public:
    virtual ~PmixStore() = default;
    virtual int rank() const = 0;
    // An integer attribute of one rank, e.g. PMIX_NODEID. Throws LaunchError.
    virtual std::int64_t proc_number(int rank, const char* key) const = 0;
    // A string `rank` put under `key` before the last fence; std::nullopt when there is none.
    virtual std::optional<std::string> get_string(int rank, const std::string& key) const = 0;
    virtual void put_global(const std::string& key, const std::string& value) = 0;
    virtual void commit() = 0;
    // Collective over the whole job; afterwards every rank's committed puts are readable.
    virtual void fence_collect() = 0;
    virtual void abort(int exit_code, const std::string& message) = 0;
};

}  // namespace trainrt::launch
