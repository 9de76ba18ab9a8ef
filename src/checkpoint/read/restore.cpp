#include "checkpoint/read/restore.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/replicated_exchange.hpp"
#include "comm/agreement.hpp"
#include "comm/strings.hpp"
#include "log/log.hpp"
#include "storage/file_image.hpp"
#include "storage/page_coherence.hpp"
#include "trainrt/error.hpp"
#include "trainrt/threads.hpp"

namespace trainrt::checkpoint {

RunRestore::RunRestore(ReplicatedReads reads, const Context& context, Communicator& comm)
    : reads_(reads), context_(context), comm_(comm) {}

std::optional<Checkpoint> RunRestore::first_valid(const std::vector<std::string>& candidates, bool resume_from) {
    for (const std::string& path : candidates) {
        // Held beside the state it is read into: at most half the memory left, shared with the
        // node's other ranks. A rank alone reads every file it verifies (either layout); among
        // several, its own file_per_rank file.
        const std::string own = context_.world_size == 1 ? "" : rank_file_name(context_.world_rank);
        const std::uint64_t budget = storage::available_memory_bytes() / 2 / std::max(1, context_.local_size);
        KeptImage kept{own, budget, {}, {}};
        Manifest manifest;
        const std::string problem = verify_together(path, manifest, kept);
        if (problem.empty()) return open(path, std::move(manifest), std::move(kept), budget);
        if (resume_from) {
            std::exception_ptr refused;
            if (context_.world_rank == 0)
                refused = std::make_exception_ptr(CheckpointError(
                    fmt::format("checkpoint: resume_from {} does not verify: {}", path, problem)));
            comm::agree(comm_, refused, "checkpoint: restore");
        }
        if (context_.world_rank == 0) log::warn("skipping checkpoint {}: {}", path, problem);
    }
    return std::nullopt;
}

// Collective: every rank reads the manifest and checksums a share of the files (rank 0 alone
// would read every rank's shards, the whole checkpoint, while the others wait), then checks the
// schema of a share; the verdict, the first problem found, is the same on every rank. A rank
// keeps its own file's bytes from its share (`kept`) when the checkpoint verifies.
std::string RunRestore::verify_together(const std::string& path, Manifest& manifest, KeptImage& kept) {
    auto first_of_all = [&](const std::string& mine) {
        for (const std::string& problem : comm::allgather_strings(comm_, mine))
            if (!problem.empty()) return problem;
        return std::string();
    };
    std::string mine = read_manifest_or_reason(path, manifest);
    if (mine.empty()) mine = verify_share(path, manifest, context_.world_rank, context_.world_size, &kept);
    std::string verdict = first_of_all(mine);
    if (verdict.empty())
        verdict = first_of_all(verify_schema_share(path, manifest, context_.world_rank, context_.world_size, &kept));
    if (!verdict.empty()) {
        kept.image.reset();
        kept.ranges.clear();
    }
    return verdict;
}

// Collective. Across nodes the exchange spares the shared filesystem N reads. On a filesystem
// not trusted coherent (storage/page_coherence.hpp) every replicated byte a rank takes then
// comes from bytes a rank verified in memory, not through a client that may serve others (a
// ceph-fuse client served zeros for blocks it had written: test_cephfs.sh); the ranks agree,
// so that none depends on every rank judging the filesystem alike. Otherwise, on one node the
// files and the MPI transfers go through the same memory and disk, and the exchange is the
// slower of the two there.
bool RunRestore::exchanges_replicated(const std::string& path) {
    if (reads_ != ReplicatedReads::automatic) return reads_ == ReplicatedReads::exchange;
    if (context_.num_nodes > 1) return true;
    const double coherent = storage::page_cache_coherent(path) ? 1.0 : 0.0;
    return comm_.allreduce_value(coherent, ReduceOp::min) == 0.0;
}

// Collective: the verified checkpoint at `path`, its replicated parts received from the ranks
// that verified them when exchanges_replicated, within `budget` bytes of memory with `kept`.
Checkpoint RunRestore::open(const std::string& path, Manifest manifest, KeptImage kept, std::uint64_t budget) {
    std::shared_ptr<Checkpoint::Impl> impl =
        open_checkpoint_impl(path, std::move(manifest), std::move(kept), compute_threads(context_));
    const std::uint64_t held = impl->kept.held_bytes();
    if (exchanges_replicated(path)) {
        const std::uint64_t received = exchange_replicated(*impl, comm_, context_, budget > held ? budget - held : 0);
        if (context_.world_rank == 0 && received > 0)
            log::info("restore: {:.1f} MiB of replicated tensors received from the ranks that verified them "
                      "(checkpoint.replicated_reads), not read from their files", received / 1048576.0);
    }
    return Checkpoint(impl);
}

}  // namespace trainrt::checkpoint
