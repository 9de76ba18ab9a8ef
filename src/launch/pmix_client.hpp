#pragma once
// This process as a PMIx client: PMIx_Init on construction, PMIx_Finalize on destruction, and the
// few calls the launcher needs. Every PMIx call goes through check_pmix, which turns a failure
// into a LaunchError naming the call and carrying PMIx_Error_string. <pmix.h> stays out of here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "launch/pmix_store.hpp"

namespace trainrt::launch {

// Throws LaunchError "launch: CALL failed: <PMIx_Error_string> (<code>)" unless `status` is
// PMIX_SUCCESS.
void check_pmix(int status, std::string_view call);

class PmixClient final : public PmixStore {
public:
    PmixClient();  // PMIx_Init; a failed init is finalized before the LaunchError leaves
    ~PmixClient() override { finalize(); }
    PmixClient(const PmixClient&) = delete;
    PmixClient& operator=(const PmixClient&) = delete;

    // PMIx_Finalize, once. Never throws.
    void finalize() noexcept;

    int rank() const override { return rank_; }
    const std::string& nspace() const { return nspace_; }

    // An integer attribute of the whole job (PMIx_Get on the wildcard rank), e.g. PMIX_JOB_SIZE.
    std::int64_t job_number(const char* key) const;
    // An integer attribute of one rank, e.g. PMIX_NODEID (this node's ranks only, across nodes).
    std::int64_t proc_number(int rank, const char* key) const;
    // From the job's node list (PMIx_Resolve_nodes) and each node's ranks (PMIx_Resolve_peers).
    std::vector<int> node_of_rank(int world_size) const override;
    // A string `rank` put under `key`; std::nullopt when PMIx does not find it.
    std::optional<std::string> get_string(int rank, const std::string& key) const override;

    // PMIx_Put(PMIX_GLOBAL)
    void put_global(const std::string& key, const std::string& value) override;
    void commit() override;         // PMIx_Commit
    void fence_collect() override;  // PMIx_Fence over the whole job with PMIX_COLLECT_DATA
    void abort(int exit_code, const std::string& message) override;  // PMIx_Abort of the job

private:
    std::int64_t number(std::uint32_t rank, const char* key) const;

    std::string nspace_;
    int rank_ = 0;
    bool initialized_ = false;
};

}  // namespace trainrt::launch
