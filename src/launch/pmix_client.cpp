#include "launch/pmix_client.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <vector>
#include <memory>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch {
namespace {

struct ValueRelease {
    void operator()(pmix_value_t* value) const noexcept { PMIX_VALUE_RELEASE(value); }
};
using ValuePtr = std::unique_ptr<pmix_value_t, ValueRelease>;

pmix_proc_t proc_of(const std::string& nspace, pmix_rank_t rank) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), rank);
    return proc;
}

// PMIx_Get; a null pointer when the key is not found and `missing_ok`. A key that may be missing
// is asked for with PMIX_IMMEDIATE: without it the server waits for the key to be posted (Slurm's
// answers TIMEOUT after about 2 s); with it the server answers from the data it holds, which after
// a fence with collected data is every key that was put.
ValuePtr get_value(const std::string& nspace, pmix_rank_t rank, const char* key,
                   bool missing_ok) {
    pmix_proc_t proc = proc_of(nspace, rank);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool immediate = true;
    PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
    pmix_value_t* raw = nullptr;
    pmix_status_t status = PMIx_Get(&proc, key, missing_ok ? &info : nullptr,
                                    missing_ok ? 1 : 0, &raw);
    PMIX_INFO_DESTRUCT(&info);
    ValuePtr value(raw);
    if (missing_ok && status == PMIX_ERR_NOT_FOUND) return nullptr;
    check_pmix(status, fmt::format("PMIx_Get({}, rank {})", key, rank));
    if (!value) check_pmix(PMIX_ERR_NOT_FOUND, fmt::format("PMIx_Get({}, rank {})", key, rank));
    return value;
}

}  // namespace

void check_pmix(int status, std::string_view call) {
    if (status == PMIX_SUCCESS) return;
    throw LaunchError(fmt::format("launch: {} failed: {} ({})", call, PMIx_Error_string(status),
                                  status));
}

PmixClient::PmixClient() {
    pmix_proc_t self;
    PMIX_PROC_CONSTRUCT(&self);
    pmix_status_t status = PMIx_Init(&self, nullptr, 0);
    // A failed PMIx_Init still leaves its progress thread and sockets until PMIx_Finalize.
    if (status != PMIX_SUCCESS) PMIx_Finalize(nullptr, 0);
    check_pmix(status, "PMIx_Init");
    initialized_ = true;
    nspace_ = self.nspace;
    rank_ = static_cast<int>(self.rank);
}

void PmixClient::finalize() noexcept {
    if (!initialized_) return;
    initialized_ = false;
    PMIx_Finalize(nullptr, 0);
}

std::int64_t PmixClient::job_number(const char* key) const {
    return number(PMIX_RANK_WILDCARD, key);
}

std::int64_t PmixClient::proc_number(int rank, const char* key) const {
    return number(static_cast<pmix_rank_t>(rank), key);
}

std::int64_t PmixClient::number(std::uint32_t rank, const char* key) const {
    ValuePtr value = get_value(nspace_, rank, key, false);
    std::int64_t result = 0;
    pmix_status_t status = PMIX_SUCCESS;
    PMIX_VALUE_GET_NUMBER(status, value.get(), result, std::int64_t);
    check_pmix(status, fmt::format("reading {} as a number", key));
    return result;
}

std::optional<std::string> PmixClient::get_string(int rank, const std::string& key) const {
    ValuePtr value = get_value(nspace_, static_cast<pmix_rank_t>(rank), key.c_str(), true);
    if (!value) return std::nullopt;
    if (value->type != PMIX_STRING)
        throw LaunchError(fmt::format("launch: PMIx value {} of rank {} is not a string", key,
                                      rank));
    return std::string(value->data.string ? value->data.string : "");
}

namespace {

struct FreeChars {
    void operator()(char* text) const noexcept { std::free(text); }
};

std::vector<std::string> split_commas(const char* list) {
    std::vector<std::string> items;
    std::string item;
    for (const char* c = list; ; ++c) {
        if (*c == ',' || *c == '\0') {
            if (!item.empty()) items.push_back(std::move(item));
            item.clear();
            if (*c == '\0') break;
        } else {
            item.push_back(*c);
        }
    }
    return items;
}

// The ranks of `nspace` that PMIx places on node `name`.
std::vector<pmix_rank_t> ranks_on(const std::string& name, const std::string& nspace) {
    pmix_proc_t* procs = nullptr;
    std::size_t count = 0;
    check_pmix(PMIx_Resolve_peers(name.c_str(), nspace.c_str(), &procs, &count),
               fmt::format("PMIx_Resolve_peers({})", name));
    std::vector<pmix_rank_t> ranks;
    for (std::size_t i = 0; i < count; ++i) ranks.push_back(procs[i].rank);
    if (procs) PMIX_PROC_FREE(procs, count);
    return ranks;
}

}  // namespace

std::vector<int> PmixClient::node_of_rank(int world_size) const {
    char* raw = nullptr;
    check_pmix(PMIx_Resolve_nodes(nspace_.c_str(), &raw), "PMIx_Resolve_nodes");
    std::unique_ptr<char, FreeChars> nodes(raw);
    std::vector<int> node(static_cast<std::size_t>(world_size), -1);
    int index = 0;
    for (const auto& name : split_commas(nodes ? nodes.get() : "")) {
        for (pmix_rank_t rank : ranks_on(name, nspace_))
            if (rank < static_cast<pmix_rank_t>(world_size)) node[rank] = index;
        ++index;
    }
    for (int rank = 0; rank < world_size; ++rank)
        if (node[static_cast<std::size_t>(rank)] < 0)
            throw LaunchError(fmt::format("launch: PMIx's node map ({}) places rank {} of {} on no node",
                                          nodes ? nodes.get() : "empty", rank, world_size));
    return node;
}

void PmixClient::put_global(const std::string& key, const std::string& value) {
    if (key.size() > PMIX_MAX_KEYLEN)
        throw LaunchError(fmt::format("launch: PMIx key '{}' is longer than {} characters", key,
                                      PMIX_MAX_KEYLEN));
    pmix_value_t data;
    PMIX_VALUE_CONSTRUCT(&data);
    data.type = PMIX_STRING;
    data.data.string = const_cast<char*>(value.c_str());  // PMIx_Put copies it
    check_pmix(PMIx_Put(PMIX_GLOBAL, key.c_str(), &data), fmt::format("PMIx_Put({})", key));
}

void PmixClient::commit() { check_pmix(PMIx_Commit(), "PMIx_Commit"); }

void PmixClient::fence_collect() {
    pmix_proc_t all = proc_of(nspace_, PMIX_RANK_WILDCARD);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t status = PMIx_Fence(&all, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    check_pmix(status, "PMIx_Fence(collect data)");
}

void PmixClient::abort(int exit_code, const std::string& message) {
    check_pmix(PMIx_Abort(exit_code, message.c_str(), nullptr, 0), "PMIx_Abort");
}

}  // namespace trainrt::launch
