#include "checkpoint/read/replicated_exchange.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"

namespace trainrt::checkpoint {
namespace {

// One replicated part, in manifest order (tensor name, then part): the same list on every rank.
struct SharedPart {
    const PartEntry* part;
    TensorType type;
    int owner;            // the rank whose file holds it
    std::uint64_t bytes;
};

std::vector<SharedPart> replicated_parts(const Manifest& manifest, int world) {
    std::vector<SharedPart> parts;
    for (const auto& [name, tensor] : manifest.tensors) {
        if (!tensor.replicated) continue;
        for (const PartEntry& part : tensor.parts) {
            int owner = -1;
            for (int r = 0; r < world && owner < 0; ++r)
                if (part.file == rank_file_name(r)) owner = r;
            parts.push_back({&part, tensor.type, owner, element_count(part.shape) * tensor_type_size(tensor.type)});
        }
    }
    return parts;
}

// This rank's side: where each of its own parts lies in its verified image (null where it does
// not: no image, another stored type or shape); true when every part can be sent and the
// others' fit in `budget`.
bool prepare(const Checkpoint::Impl& impl, const std::vector<SharedPart>& parts, int rank, std::uint64_t budget,
             std::vector<const char*>& sources) {
    std::uint64_t receive = 0;
    bool ready = true;
    sources.assign(parts.size(), nullptr);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        ready = ready && parts[i].owner >= 0;
        if (parts[i].owner != rank) {
            receive += parts[i].bytes;
            continue;
        }
        sources[i] = image_bytes_of(impl, *parts[i].part, parts[i].type);
        ready = ready && (sources[i] != nullptr || parts[i].bytes == 0);
    }
    return ready && receive <= budget;
}

// MPI counts are ints: large parts go in pieces.
void broadcast_bytes(Communicator& comm, char* data, std::uint64_t bytes, int root) {
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
    for (std::uint64_t at = 0; at < bytes; at += kPiece)
        comm.broadcast(data + at, static_cast<std::size_t>(std::min(kPiece, bytes - at)), root);
}

}  // namespace

std::uint64_t exchange_replicated(Checkpoint::Impl& impl, Communicator& comm, const Context& context, std::uint64_t budget) {
    if (context.world_size < 2 || impl.manifest.world_size != context.world_size || impl.manifest.layout != "file_per_rank")
        return 0;
    const std::vector<SharedPart> parts = replicated_parts(impl.manifest, context.world_size);
    if (parts.empty()) return 0;
    std::vector<const char*> sources;
    double ready = prepare(impl, parts, context.world_rank, budget, sources) ? 1.0 : 0.0;
    if (comm.allreduce_value(ready, ReduceOp::min) < 1.0) return 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const SharedPart& shared = parts[i];
        if (shared.owner == context.world_rank) {
            broadcast_bytes(comm, const_cast<char*>(sources[i]), shared.bytes, shared.owner);  // read only at the root
            continue;
        }
        std::vector<char> bytes(shared.bytes);
        broadcast_bytes(comm, bytes.data(), shared.bytes, shared.owner);
        impl.received_unread += shared.bytes;
        impl.received[{shared.part->file, shared.part->dataset}] = std::move(bytes);
    }
    return impl.received_unread;
}

}  // namespace trainrt::checkpoint
