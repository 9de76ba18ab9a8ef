#include "checkpoint/write/commit.hpp"

#include <filesystem>
#include <system_error>

#include "checkpoint/write/fault.hpp"
#include "comm/strings.hpp"
#include "log/log.hpp"
#include "runlog/clock.hpp"
#include "storage/posix.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {

using Json = nlohmann::ordered_json;

Json rank_write_json(const RankWrite& write) {
    Json files = Json::array(), parts = Json::array();
    for (const FileEntry& f : write.files) files.push_back(file_json(f));
    for (const auto& [tensor, p] : write.parts)
        parts.push_back({{"tensor", tensor}, {"file", p.file}, {"dataset", p.dataset},
                         {"offset", p.offset}, {"shape", p.shape}});
    return {{"files", files}, {"parts", parts}};
}

Manifest build_manifest(const WritePlan& plan, const Attributes& attributes, const std::vector<std::string>& writes,
                        const std::string& name, std::int64_t iteration, const Context& context,
                        const std::string& layout, const Json& metrics) {
    Manifest manifest{name, iteration, context.world_size, layout, runlog::time_now(), metrics, attributes, {}, {}};
    for (const TensorPart& part : plan.blocks)
        manifest.tensors[part.name] = {part.type, part.global_shape, part.replicated, {}};
    for (const std::string& text : writes) {
        Json write = Json::parse(text);
        for (const Json& f : write.at("files")) merge_file(manifest.files, file_from_json(f, "a rank's write"));
        for (const Json& p : write.at("parts"))
            manifest.tensors.at(p.at("tensor").get<std::string>())
                .parts.push_back({p.at("file"), p.at("dataset"), p.at("offset").get<Shape>(),
                                  p.at("shape").get<Shape>()});
    }
    for (const FileEntry& file : manifest.files) check_ranges(file, "the ranks' writes of " + name);
    return manifest;
}

CommitProtocol::CommitProtocol(std::unique_ptr<LayoutWriter> writer, RetentionPolicy retention, const Context& context,
                               Communicator& comm)
    : writer_(std::move(writer)), retention_(std::move(retention)), context_(context), comm_(comm) {}

void CommitProtocol::begin(const std::string& name) {
    std::exception_ptr failure;
    if (root())
        failure = attempt_checkpoint([&] {
            storage::make_dirs(dir());
            fs::remove_all(pending(name));
            // No fsync here: a pending directory need not survive a crash, and an fsync of the
            // directory would wait for every dirty page of the filesystem's journal (ext4
            // data=ordered), stalling training in async mode. The commit's rename is fsynced.
            storage::make_dirs(pending(name));
        });
    comm::agree(comm_, failure, "checkpoint: creating " + pending(name));
}

RankWrite CommitProtocol::write(const WritePlan& plan, const std::string& name) {
    fault_point("before_data", context_.world_rank);
    return writer_->write(plan, pending(name), context_);
}

void CommitProtocol::agree_or_discard(const std::exception_ptr& failure, const std::string& name,
                                      const std::string& what) {
    try {
        comm::agree(comm_, failure, what);
    } catch (const CheckpointError&) {
        discard(name);
        throw;
    }
}

void CommitProtocol::discard(const std::string& name) noexcept {
    if (!root()) return;
    std::error_code ignored;
    fs::remove_all(pending(name), ignored);
}

void CommitProtocol::commit(const WritePlan& plan, const Attributes& attributes, const RankWrite& written,
                            const std::string& name, std::int64_t iteration, const Json& metrics) {
    std::vector<std::string> writes = comm::allgather_strings(comm_, rank_write_json(written).dump());
    std::exception_ptr failure;
    if (root())
        failure = attempt_checkpoint([&] {
            publish(build_manifest(plan, attributes, writes, name, iteration, context_, writer_->name(), metrics));
        });
    agree_or_discard(failure, name, "checkpoint: committing " + name);
    if (root()) apply_retention(name, iteration);
}

Manifest CommitProtocol::manifest_of(const Settled& settled) const {
    return build_manifest(settled.plan, settled.attributes, settled.writes, settled.name, settled.iteration, context_,
                          writer_->name(), settled.metrics);
}

void CommitProtocol::publish_and_retain(const Settled& settled) {
    publish(manifest_of(settled));
    apply_retention(settled.name, settled.iteration);
}

void CommitProtocol::publish(const Manifest& manifest) {
    const std::string staging = pending(manifest.name);
    fault_point_at("before_manifest", context_.world_rank, manifest.iteration);
    storage::write_file_atomic(staging + "/" + kManifestFile, to_json(manifest).dump(2) + "\n");
    fault_point_at("before_rename", context_.world_rank, manifest.iteration);
    const std::string final_dir = dir() + "/" + manifest.name;
    if (fs::exists(final_dir)) {
        // A checkpoint of this iteration from a run that crashed after it, which restore skipped
        // (it did not verify, or resume_from chose an older one): set it aside, then replace it.
        const std::string stale = dir() + "/" + runlog::kDeletingPrefix + "stale_" + manifest.name;
        fs::remove_all(stale);
        storage::rename_durable(final_dir, stale);
        storage::rename_durable(staging, final_dir);
        fs::remove_all(stale);
    } else {
        storage::rename_durable(staging, final_dir);
    }
    try {  // committed by the rename; `latest` is a convenience (restore scans the directory)
        write_latest(context_.run_dir, manifest.name);
    } catch (const Error& e) {
        log::warn("{} is committed, but updating checkpoints/latest failed: {}", manifest.name, e.what());
    }
}

// Deletion only after the new checkpoint is committed; a failure here is a warning. The victims
// leave the catalog here; their bytes are removed in the background (the save does not wait).
void CommitProtocol::apply_retention(const std::string& newest, std::int64_t iteration) {
    std::vector<std::string> retired;
    try {
        for (const std::string& victim : retention_victims(context_.run_dir, newest, retention_)) {
            fault_point_at("during_retention", context_.world_rank, iteration);
            retired.push_back(retire_checkpoint(context_.run_dir, victim));
        }
    } catch (const std::exception& e) {
        log::warn("checkpoint retention: {}", e.what());
    }
    remover_.remove(std::move(retired));
}

}  // namespace trainrt::checkpoint
