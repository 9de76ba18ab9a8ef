#include "checkpoint/write/local_level.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/schema_check.hpp"
#include "checkpoint/read/verify.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/local_inventory.hpp"
#include "comm/agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_p2p.hpp"
#include "comm/strings.hpp"
#include "log/log.hpp"
#include "storage/file_image.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"
#include "trainrt/threads.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPartnerTag = 7101;
constexpr int kViewTag = 7102;
constexpr int kLocalKept = 2;  // committed local checkpoints a rank keeps

// local_dir with %h replaced by the hostname, then a directory of this run's own (the run
// directory's absolute path hashed: two runs on a node never share one).
std::string level_root(const std::string& local_dir, const Context& context) {
    std::string dir = local_dir;
    for (std::size_t at; (at = dir.find("%h")) != std::string::npos;) dir.replace(at, 2, context.hostname);
    const std::string run = fs::absolute(context.run_dir).lexically_normal().string();
    return fmt::format("{}/trainrt-{:016x}", dir, XXH3_64bits(run.data(), run.size()));
}

std::vector<char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw StorageError(fmt::format("storage: cannot open {} for reading", path));
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
    storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
    storage::write_all(fd.get(), bytes.data(), bytes.size(), path);
}

// The files of checkpoint directory `dir` present with the manifest's size go into `found` under
// the manifest's key; one of another size is named in a warning and left out. Their checksums are
// verified only for the checkpoint a restore chooses (LocalLevel::Impl::verify_held).
void take_inventory(const std::string& dir, std::map<std::string, Held>& found) {
    Manifest manifest;
    try {
        manifest = read_manifest(dir);
    } catch (const Error& error) {
        log::warn("local checkpoint {} is not used: {}", dir, error.what());
        return;
    }
    const std::string key = manifest.name + "@" + manifest.created;
    Held& held = found[key];
    held.key = key, held.name = manifest.name;
    held.iteration = manifest.iteration, held.world_size = manifest.world_size;
    held.manifest_path = dir + "/" + kManifestFile;
    held.files.clear();
    for (const FileEntry& file : manifest.files) {
        held.files.push_back(file.name);
        std::error_code error;
        const std::uint64_t size = fs::file_size(dir + "/" + file.name, error);
        if (held.held.count(file.name) || error) continue;
        if (size == file.size)
            held.held[file.name] = dir + "/" + file.name;
        else
            log::warn("local checkpoint {}: {} has {} bytes, the manifest says {} (damaged): not used", dir, file.name,
                      size, file.size);
    }
}

// The XXH3-64 of each of `listed`'s checksum ranges in the file at `path` (the listed file or a
// copy of it), its bytes kept in `keep->image` when `keep` is given (a mapping of them in a memory
// filesystem, else a copy). StorageError when it cannot be read or its size is not the listed one.
std::vector<std::string> digests_of_held(const std::string& path, const FileEntry& listed, KeptImage* keep) {
    const std::string dir = fs::path(path).parent_path().string(), name = fs::path(path).filename().string();
    const std::uint64_t size = fs::file_size(path);
    if (size != listed.size)
        throw StorageError(fmt::format("{} has {} bytes, the manifest says {}", path, size, listed.size));
    FileEntry here = listed;
    here.name = name;
    if (keep != nullptr) return describe_file_image(dir, here, keep->image);
    std::vector<std::string> digests;
    for (const ChecksumRange& range : checksum_ranges(here)) digests.push_back(describe_range(dir, name, range));
    return digests;
}

// "" when the file at `path` has the checksums `manifest` gives it, else why it is not used.
// `keep`: its bytes are kept there when they verify.
std::string check_held_file(const Manifest& manifest, const std::string& file, const std::string& path,
                            KeptImage* keep) {
    const std::string dir = fs::path(path).parent_path().string();
    const auto entry = std::find_if(manifest.files.begin(), manifest.files.end(),
                                    [&](const FileEntry& listed) { return listed.name == file; });
    if (entry == manifest.files.end()) return fmt::format("local checkpoint {}: {} is not in its manifest", dir, file);
    try {
        KeptImage* kept = keep != nullptr && entry->size <= keep->max_bytes ? keep : nullptr;
        const std::vector<std::string> actual = digests_of_held(path, *entry, kept);
        const std::vector<ChecksumRange> ranges = checksum_ranges(*entry);
        for (std::size_t j = 0; j < ranges.size(); ++j) {
            if (actual[j] == ranges[j].xxh3) continue;
            if (kept != nullptr) kept->image.reset();
            const std::string where = ranges.size() == 1 ? "" : fmt::format(" of bytes {}-{}", ranges[j].offset,
                                                                               ranges[j].offset + ranges[j].length);
            return fmt::format("local checkpoint {}: {} has checksum {}{}, the manifest says {} (damaged): not used", dir,
                               file, actual[j], where, ranges[j].xxh3);
        }
        return "";
    } catch (const Error& error) {
        return fmt::format("local checkpoint {}: {} cannot be read ({}): not used", dir, file, error.what());
    } catch (const fs::filesystem_error& error) {
        return fmt::format("local checkpoint {}: {} cannot be read ({}): not used", dir, file, error.what());
    }
}

}  // namespace

struct LocalLevel::Impl {
    CheckpointLevels levels;
    std::string root;
    const Context& context;
    Communicator& comm;
    comm::MpiComm mpi{MPI_COMM_WORLD};
    std::vector<int> node_of;   // by rank
    std::vector<int> local_of;  // by rank

    bool leader() const { return context.local_rank == 0; }
    int leader_of(int node) const {
        for (std::size_t r = 0; r < node_of.size(); ++r)
            if (node_of[r] == node && local_of[r] == 0) return static_cast<int>(r);
        return -1;
    }
    // The rank that keeps `rank`'s file: same local index (modulo its rank count) on the next node.
    int partner_of(int rank) const {
        const int node = (node_of[rank] + 1) % context.num_nodes;
        std::vector<int> on_node;
        for (std::size_t r = 0; r < node_of.size(); ++r)
            if (node_of[r] == node) on_node.push_back(static_cast<int>(r));
        return on_node[static_cast<std::size_t>(local_of[rank]) % on_node.size()];
    }
    std::vector<Held> inventory() const;
    std::vector<std::pair<int, std::string>> verify_held(const Held& chosen, const std::vector<std::vector<Held>>& by_node,
                                                         KeptImage& kept) const;
    std::vector<std::string> owned_on_node() const;
    std::pair<std::string, std::string> assemble(const Held& chosen, const std::vector<std::vector<Held>>& by_node);
    std::optional<LocalRestore> open_verified(const Held& chosen, const std::vector<Held>& all, const std::string& view,
                                              const std::string& manifest_text, KeptImage kept) const;
    void build_views(const Held& chosen, const std::vector<std::vector<Held>>& by_node, const std::string& view);
};

LocalLevel::LocalLevel(CheckpointLevels levels, const std::string& local_dir, const Context& context,
                       Communicator& comm)
    : impl_(new Impl{levels, level_root(local_dir, context), context, comm}) {
    Impl& m = *impl_;
    std::vector<int> mine{context.node_rank, context.local_rank}, all(2 * context.world_size);
    comm.allgather(mine.data(), all.data(), sizeof(int) * 2);
    for (int r = 0; r < context.world_size; ++r) m.node_of.push_back(all[2 * r]), m.local_of.push_back(all[2 * r + 1]);
}

LocalLevel::~LocalLevel() = default;

std::string LocalLevel::own_dir() const { return fmt::format("{}/rank_{:05d}", impl_->root, impl_->context.world_rank); }

void LocalLevel::begin(const std::string& name) const {
    fs::remove_all(pending(name));
    storage::make_dirs(pending(name));
}

void LocalLevel::exchange(const std::string& name) {
    Impl& m = *impl_;
    if (m.levels != CheckpointLevels::partner || m.context.num_nodes < 2) return;
    // Pairs in rank order, each blocking only its two ranks: the lowest unfinished pair always
    // has both ranks at it, so the loop cannot deadlock.
    fault_point("before_partner", m.context.world_rank);
    for (int rank = 0; rank < m.context.world_size; ++rank) {
        const int partner = m.partner_of(rank);
        if (rank == m.context.world_rank)
            comm::send_bytes(m.mpi.get(), partner, kPartnerTag, read_bytes(pending(name) + "/" + rank_file_name(rank)));
        else if (partner == m.context.world_rank)
            write_bytes(pending(name) + "/" + rank_file_name(rank), comm::recv_bytes(m.mpi.get(), rank, kPartnerTag));
    }
}

void LocalLevel::commit(const Manifest& manifest) const {
    const int rank = impl_->context.world_rank;
    fault_point_at("local_before_manifest", rank, manifest.iteration);
    storage::write_file_atomic(pending(manifest.name) + "/" + kManifestFile, nlohmann::ordered_json(to_json(manifest)).dump(2) + "\n");
    const std::string final_dir = own_dir() + "/" + manifest.name;
    fs::remove_all(final_dir);
    fault_point_at("local_before_rename", rank, manifest.iteration);
    fs::rename(pending(manifest.name), final_dir);
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(own_dir()))
        if (iteration_of_name(entry.path().filename().string()) >= 0) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return iteration_of_name(a) < iteration_of_name(b); });
    for (std::size_t i = 0; i + kLocalKept < names.size(); ++i) {
        fault_point_at("local_retention", rank, manifest.iteration);
        fs::remove_all(own_dir() + "/" + names[i]);
    }
    if (impl_->leader() && fs::exists(impl_->root))
        for (const auto& entry : fs::directory_iterator(impl_->root))
            if (entry.path().filename().string().rfind(".view_", 0) == 0) fs::remove_all(entry.path());
}

void LocalLevel::discard(const std::string& name) const noexcept {
    std::error_code ignored;
    fs::remove_all(pending(name), ignored);
}

std::string LocalLevel::own_file(const std::string& name) const {
    return own_dir() + "/" + name + "/" + rank_file_name(impl_->context.world_rank);
}

// The node leader's list: every committed local checkpoint in any rank directory on this node.
std::vector<Held> LocalLevel::Impl::inventory() const {
    std::map<std::string, Held> found;
    if (!leader() || !fs::is_directory(root)) return {};
    for (const auto& rank_dir : fs::directory_iterator(root)) {
        if (rank_dir.path().filename().string().rfind("rank_", 0) != 0) continue;
        for (const auto& entry : fs::directory_iterator(rank_dir.path()))
            if (iteration_of_name(entry.path().filename().string()) >= 0 && fs::exists(entry.path() / kManifestFile))
                take_inventory(entry.path().string(), found);
    }
    std::vector<Held> list;
    for (auto& [key, held] : found) list.push_back(std::move(held));
    return list;
}

// The files the node's ranks write, by local rank.
std::vector<std::string> LocalLevel::Impl::owned_on_node() const {
    std::vector<std::string> owned(static_cast<std::size_t>(std::count(node_of.begin(), node_of.end(), context.node_rank)));
    for (std::size_t r = 0; r < node_of.size(); ++r)
        if (node_of[r] == context.node_rank) owned[static_cast<std::size_t>(local_of[r])] = rank_file_name(static_cast<int>(r));
    return owned;
}

// Collective: the ranks of each node checksum the files of `chosen` their node holds, a share
// each (verification_share), so a restore reads each file once and only the checkpoint it uses;
// every rank gets every node's damaged files as (node, file), each named in a warning by the rank
// that found it.
// A rank that verifies its own file (kept.file) keeps its bytes in `kept`, as a restore from the
// run directory does.
std::vector<std::pair<int, std::string>> LocalLevel::Impl::verify_held(
    const Held& chosen, const std::vector<std::vector<Held>>& by_node, KeptImage& kept) const {
    Json damaged = Json::array();
    for (const Held& h : by_node[context.node_rank]) {
        if (h.key != chosen.key) continue;
        Manifest manifest;
        try {
            manifest = read_manifest(fs::path(h.manifest_path).parent_path().string());
        } catch (const Error&) {  // read when the inventory was taken: gone since, so is the checkpoint
        }
        for (const auto& [file, path] : verification_share(h, local_of[context.world_rank], owned_on_node()))
            if (const std::string problem = check_held_file(manifest, file, path, file == kept.file ? &kept : nullptr);
                !problem.empty()) {
                log::warn("{}", problem);
                damaged.push_back(file);
            }
    }
    std::vector<std::pair<int, std::string>> all;
    const std::vector<std::string> lists = comm::allgather_strings(comm, damaged.dump());
    for (int rank = 0; rank < context.world_size; ++rank)
        for (const Json& file : Json::parse(lists[rank])) all.emplace_back(node_of[rank], file.get<std::string>());
    return all;
}

// Every node leader fills `view` with the checkpoint's files: links to the ones on its node, copies
// sent by a node that holds the others. (A workload may read any rank's block: fashion_mlp reads
// every rank's loss_sum.)
void LocalLevel::Impl::build_views(const Held& chosen, const std::vector<std::vector<Held>>& by_node,
                                   const std::string& view) {
    auto path_on = [&](int node, const std::string& file) -> std::string {
        for (const Held& h : by_node[node])
            if (h.key == chosen.key && h.held.count(file)) return h.held.at(file);
        return "";
    };
    if (leader()) {
        fs::remove_all(view);
        storage::make_dirs(view);
        for (const std::string& file : chosen.files)
            if (const std::string path = path_on(context.node_rank, file); !path.empty())
                fs::create_symlink(path, view + "/" + file);
    }
    for (int node = 0; node < context.num_nodes; ++node)
        for (const std::string& file : chosen.files) {
            if (!path_on(node, file).empty()) continue;
            int holder = 0;
            while (path_on(holder, file).empty()) ++holder;
            const int from = leader_of(holder), to = leader_of(node);
            if (context.world_rank == from) comm::send_bytes(mpi.get(), to, kViewTag, read_bytes(path_on(holder, file)));
            if (context.world_rank == to) write_bytes(view + "/" + file, comm::recv_bytes(mpi.get(), from, kViewTag));
        }
}

// Collective: the checkpoint `chosen` assembled in a view of its own under the level's root (see
// build_views), with the manifest of the first node that listed it; the view and that manifest's text.
std::pair<std::string, std::string> LocalLevel::Impl::assemble(const Held& chosen,
                                                               const std::vector<std::vector<Held>>& by_node) {
    int source = 0;
    while (!std::any_of(by_node[node_of[source]].begin(), by_node[node_of[source]].end(),
                        [&](const Held& h) { return h.key == chosen.key; }) || local_of[source] != 0)
        ++source;
    std::string manifest_text;
    std::exception_ptr failure = comm::attempt([&] {
        if (context.world_rank != source) return;
        for (const Held& h : by_node[node_of[source]])
            if (h.key == chosen.key) {
                const std::vector<char> bytes = read_bytes(h.manifest_path);
                manifest_text.assign(bytes.begin(), bytes.end());
            }
    });
    comm::agree(comm, failure, "checkpoint: reading local checkpoint " + chosen.name);
    manifest_text = comm::broadcast_string(comm, manifest_text, source);
    const std::string view = root + "/.view_" + chosen.name;
    failure = comm::attempt([&] {
        build_views(chosen, by_node, view);
        if (leader()) storage::write_file_atomic(view + "/" + kManifestFile, manifest_text);
    });
    comm::agree(comm, failure, "checkpoint: assembling local checkpoint " + chosen.name);
    return {view, manifest_text};
}

std::optional<LocalRestore> LocalLevel::restore(std::int64_t at_least) {
    Impl& m = *impl_;
    std::vector<std::vector<Held>> by_node(m.context.num_nodes);
    Json mine = Json::array();
    for (const Held& h : m.inventory()) mine.push_back(to_json(h));
    const std::vector<std::string> lists = comm::allgather_strings(m.comm, mine.dump());
    for (int rank = 0; rank < m.context.world_size; ++rank)
        for (const Json& j : Json::parse(lists[rank])) by_node[m.node_of[rank]].push_back(held_from_json(j));
    // Held beside the state it is read into, as a restore from the run directory (read/restore.hpp) does.
    const std::uint64_t budget = storage::available_memory_bytes() / 2 / std::max(1, m.context.local_size);
    for (;;) {  // each round takes a damaged file or a checkpoint out, or ends
        std::vector<Held> all;
        for (const std::vector<Held>& node : by_node) all.insert(all.end(), node.begin(), node.end());
        const std::optional<Held> chosen = newest_complete(all, at_least);
        if (!chosen) return std::nullopt;
        KeptImage kept{rank_file_name(m.context.world_rank), budget, {}, {}};
        const std::vector<std::pair<int, std::string>> damaged = m.verify_held(*chosen, by_node, kept);
        if (!damaged.empty()) {
            drop_damaged(by_node, chosen->key, damaged);
            continue;
        }
        const auto [view, manifest_text] = m.assemble(*chosen, by_node);
        if (std::optional<LocalRestore> restored = m.open_verified(*chosen, all, view, manifest_text, std::move(kept)))
            return restored;
        for (std::vector<Held>& node : by_node)  // its files disagree with its manifest: not used at all
            node.erase(std::remove_if(node.begin(), node.end(), [&](const Held& h) { return h.key == chosen->key; }),
                       node.end());
    }
}

// Collective: every rank checks the schema of its own file in `view` (in `kept` when it holds its
// bytes, noting where its datasets lie there), and the checkpoint opens when none found a problem;
// nothing when one did, named in a warning by rank 0 (an older one, or the next level, is used).
std::optional<LocalRestore> LocalLevel::Impl::open_verified(const Held& chosen, const std::vector<Held>& all,
                                                            const std::string& view, const std::string& manifest_text,
                                                            KeptImage kept) const {
    Manifest manifest = manifest_from_text(manifest_text, view + "/" + kManifestFile);
    std::optional<FileInMemory> held;
    if (kept.image.data() != nullptr) held = FileInMemory{kept.file, kept.image.data(), kept.image.size()};
    std::string problem;
    if (fs::exists(view + "/" + kept.file)) {
        const std::vector<std::string> problems =
            schema_problems_of(view, manifest, {kept.file}, held ? &*held : nullptr, kept.addresses);
        if (!problems.empty()) problem = "schema: " + problems.front();
    }
    for (const std::string& found : comm::allgather_strings(comm, problem))
        if (!found.empty()) {
            if (context.world_rank == 0) log::warn("local checkpoint {} is not used: {}", chosen.name, found);
            return std::nullopt;
        }
    const std::string level = needs_partner_copies(chosen, all) ? "partner" : "local";
    return LocalRestore{
        Checkpoint(open_checkpoint_impl(view, std::move(manifest), std::move(kept), compute_threads(context))), level};
}

}  // namespace trainrt::checkpoint
