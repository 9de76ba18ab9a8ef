#include "checkpoint/catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "checkpoint/layout.hpp"
#include "checkpoint/schema_check.hpp"
#include "storage/posix.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {
namespace {

constexpr const char* kPrefix = "checkpoint_";

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

}  // namespace

std::int64_t iteration_of_name(const std::string& name) {
    if (!starts_with(name, kPrefix)) return -1;
    const std::string digits = name.substr(std::string(kPrefix).size());
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
        return -1;
    return std::stoll(digits);
}

namespace {

// The units of verification, numbered across files in manifest order: unit k is verified by
// share k % shares. A unit is a whole file (all its ranges: a file_per_rank file's ranges are
// its data runs and the metadata between them, read once by one rank), except in the shared
// layout, where each range of the shared file is one, spread over the ranks that verify it: the
// range's writer when it has one and as many ranks verify as wrote (it then keeps the bytes it
// reads its blocks from), else by k.
struct RangeUnit {
    std::size_t file;   // index in manifest.files
    std::size_t range;  // index in checksum_ranges(that file)
    bool own = false;   // verified by its writer
};

std::vector<RangeUnit> ranges_of_share(const Manifest& manifest, int share, int shares) {
    const bool by_range = manifest.layout == "shared";
    const bool by_writer = by_range && shares == manifest.world_size;
    std::vector<RangeUnit> mine;
    std::size_t k = 0;
    for (std::size_t i = 0; i < manifest.files.size(); ++i) {
        const std::vector<ChecksumRange> ranges = checksum_ranges(manifest.files[i]);
        for (std::size_t j = 0; j < ranges.size(); ++j) {
            const int writer = by_writer && ranges[j].rank < shares ? ranges[j].rank : -1;
            if (writer >= 0 ? writer == share : k % static_cast<std::size_t>(shares) == static_cast<std::size_t>(share))
                mine.push_back({i, j, writer >= 0});
            if (by_range || j + 1 == ranges.size()) ++k;
        }
    }
    return mine;
}

std::string corrupted(const std::string& dir, const FileEntry& file, const ChecksumRange& range, const std::string& actual) {
    if (file.ranges.empty())
        return fmt::format("{}/{}: checksum {} differs from the manifest's {} (corrupted)", dir, file.name, actual, range.xxh3);
    return fmt::format("{}/{}: checksum {} of bytes {}-{} differs from the manifest's {} (corrupted)", dir, file.name,
                       actual, range.offset, range.offset + range.length, range.xxh3);
}

// Verifies every range of `file` from one read of it into keep->image; "" or the problem. The
// image is dropped when a checksum differs.
std::string check_kept(const std::string& dir, const FileEntry& file, KeptImage& keep) {
    keep.file = file.name;
    const std::vector<std::string> actual = describe_file_image(dir, file, keep.image);
    const std::vector<ChecksumRange> ranges = checksum_ranges(file);
    for (std::size_t j = 0; j < ranges.size(); ++j)
        if (actual[j] != ranges[j].xxh3) {
            keep.image.reset();
            return corrupted(dir, file, ranges[j], actual[j]);
        }
    return "";
}

// Verifies `range` of `file` from one read of it, kept in keep.ranges when it is right.
std::string check_kept_range(const std::string& dir, const FileEntry& file, const ChecksumRange& range, KeptImage& keep) {
    KeptImage::Range held{range.offset, {}, 0};
    const std::string actual = describe_range_image(dir, file.name, range, held.image);
    if (actual != range.xxh3) return corrupted(dir, file, range, actual);
    keep.ranges_file = file.name;
    keep.ranges.push_back(std::move(held));
    return "";
}

// This share's checksum ranges: presence and size of their files first (cheap: a truncation is
// reported as such), then the checksums (every byte read). No rank stats every file: on a
// parallel filesystem N ranks x N files of metadata calls would add up. A file all of whose
// ranges are this share's may be kept in memory (`keep`).
std::string check_files(const std::string& dir, const Manifest& manifest, int share, int shares, KeptImage* keep) {
    const std::vector<RangeUnit> mine = ranges_of_share(manifest, share, shares);
    for (std::size_t u = 0; u < mine.size(); ++u) {
        if (u > 0 && mine[u].file == mine[u - 1].file) continue;
        const FileEntry& file = manifest.files[mine[u].file];
        const std::string path = dir + "/" + file.name;
        if (!fs::exists(path)) return fmt::format("{}: listed in the manifest but missing", path);
        auto size = fs::file_size(path);
        if (size != file.size) return fmt::format("{}: size {} bytes, the manifest says {}", path, size, file.size);
    }
    for (std::size_t u = 0; u < mine.size(); ++u) {
        const FileEntry& file = manifest.files[mine[u].file];
        const std::vector<ChecksumRange> ranges = checksum_ranges(file);
        const bool whole = mine[u].range == 0 && u + ranges.size() <= mine.size() &&
                           mine[u + ranges.size() - 1].file == mine[u].file;  // every range of it is mine
        const bool kept = whole && keep != nullptr && keep->image.data() == nullptr && file.size > 0 &&
                          file.size <= keep->max_bytes && (keep->file.empty() || file.name == keep->file);
        if (kept) {
            if (std::string problem = check_kept(dir, file, *keep); !problem.empty()) return problem;
            u += ranges.size() - 1;
            continue;
        }
        const ChecksumRange& range = ranges[mine[u].range];
        if (mine[u].own && keep != nullptr && keep->image.data() == nullptr &&
            keep->held_bytes() + range.length <= keep->max_bytes) {
            if (std::string problem = check_kept_range(dir, file, range, *keep); !problem.empty()) return problem;
            continue;
        }
        const std::string actual = file.ranges.empty() ? describe_file(dir, file.name).xxh3 : describe_range(dir, file.name, range);
        if (actual != range.xxh3) return corrupted(dir, file, range, actual);
    }
    if (share != 0) return "";
    std::set<std::string> listed = {kManifestFile};
    for (const FileEntry& file : manifest.files) listed.insert(file.name);
    for (const auto& entry : fs::directory_iterator(dir))
        if (!listed.count(entry.path().filename().string()))
            return fmt::format("{}: a file the manifest does not list", entry.path().string());
    return "";
}

double score_of(const Manifest& manifest, const std::string& attribute, bool higher_is_better) {
    const double worst = higher_is_better ? -1e308 : 1e308;
    if (attribute.empty()) return static_cast<double>(manifest.iteration);
    auto found = manifest.metrics.find(attribute);
    if (found == manifest.metrics.end() || !found->is_number()) return worst;
    return found->get<double>();
}

}  // namespace

std::string checkpoints_dir(const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kCheckpointsDir); }

std::string checkpoint_name(std::int64_t iteration) {
    return fmt::format("{}{:06d}", kPrefix, iteration);
}

std::vector<std::string> committed_names(const std::string& run_dir) {
    std::vector<std::string> names;
    const std::string dir = checkpoints_dir(run_dir);
    if (!fs::is_directory(dir)) return names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        if (entry.is_directory() && starts_with(name, kPrefix) && iteration_of_name(name) >= 0)
            names.push_back(name);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return iteration_of_name(a) < iteration_of_name(b);
    });
    return names;
}

namespace {

// What `check` returns, or the error it throws (reading the manifest or a file) as the reason.
template <class Check>
std::string reason_of(Check check) {
    try {
        return check();
    } catch (const Error& error) {
        return error.what();
    } catch (const fs::filesystem_error& error) {
        return error.what();
    }
}

}  // namespace

std::string read_manifest_or_reason(const std::string& checkpoint_dir, Manifest& manifest) {
    return reason_of([&] {
        manifest = read_manifest(checkpoint_dir);
        return std::string();
    });
}

std::string verify_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                         KeptImage* keep) {
    return reason_of([&] { return check_files(checkpoint_dir, manifest, share, shares, keep); });
}

std::string verify_schema_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                                KeptImage* keep) {
    std::set<std::string> files;
    for (const RangeUnit& unit : ranges_of_share(manifest, share, shares))
        if (unit.range == 0) files.insert(manifest.files[unit.file].name);
    DatasetAddresses ignored;
    std::optional<FileInMemory> held;
    if (keep != nullptr && keep->image.data() != nullptr) held = FileInMemory{keep->file, keep->image.data(), keep->image.size()};
    if (keep != nullptr && !keep->ranges.empty()) {  // its datasets' places, from the file's metadata
        held = FileInMemory{keep->ranges_file, nullptr, 0};
        files.insert(keep->ranges_file);
    }
    const std::vector<std::string> problems = schema_problems_of(checkpoint_dir, manifest, files, held ? &*held : nullptr,
                                                                 held ? keep->addresses : ignored);
    return problems.empty() ? std::string() : "schema: " + problems.front();
}

std::uint64_t KeptImage::held_bytes() const {
    std::uint64_t bytes = image.size();
    for (const Range& range : ranges) bytes += range.image.size();
    return bytes;
}

std::string verify(const std::string& checkpoint_dir) {
    Manifest manifest;
    std::string problem = read_manifest_or_reason(checkpoint_dir, manifest);
    if (problem.empty()) problem = verify_share(checkpoint_dir, manifest, 0, 1);
    return problem.empty() ? verify_schema_share(checkpoint_dir, manifest, 0, 1) : problem;
}

std::vector<std::string> clean_leftovers(const std::string& run_dir) {
    std::vector<std::string> removed;
    const std::string dir = checkpoints_dir(run_dir);
    if (!fs::is_directory(dir)) return removed;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        if (starts_with(name, ".pending_") || starts_with(name, ".deleting_") ||
            starts_with(name, "latest.tmp.")) {
            fs::remove_all(entry.path());
            removed.push_back(entry.path().string());
        }
    }
    return removed;
}

Selection select_latest_valid(const std::string& run_dir) {
    Selection selection;
    std::vector<std::string> names = committed_names(run_dir);
    for (auto name = names.rbegin(); name != names.rend(); ++name) {
        const std::string path = checkpoints_dir(run_dir) + "/" + *name;
        std::string problem = verify(path);
        if (problem.empty()) {
            selection.path = path;
            break;
        }
        selection.warnings.push_back(fmt::format("skipping checkpoint {}: {}", path, problem));
    }
    return selection;
}

void write_latest(const std::string& run_dir, const std::string& name) {
    storage::write_file_atomic(checkpoints_dir(run_dir) + "/latest", name + "\n");
}

std::vector<std::string> retention_victims(const std::string& run_dir, const std::string& newest,
                                           const RetentionPolicy& policy) {
    if (policy.num_to_keep <= 0) return {};
    std::vector<std::pair<double, std::string>> ranked;
    for (const std::string& name : committed_names(run_dir)) {
        // Ranked by `badness` (ascending): recency ignores score_order; unreadable is worst.
        const bool by_recency = policy.score_attribute.empty();
        double badness = 1e308;
        try {
            double score = score_of(read_manifest(checkpoints_dir(run_dir) + "/" + name),
                                    policy.score_attribute, policy.higher_is_better);
            badness = by_recency || policy.higher_is_better ? -score : score;
        } catch (const Error&) {
        }
        ranked.emplace_back(badness, name);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> victims;
    for (std::size_t i = 0; i < ranked.size(); ++i)
        if (i >= static_cast<std::size_t>(policy.num_to_keep) && ranked[i].second != newest)
            victims.push_back(ranked[i].second);
    return victims;
}

void clone_checkpoint(const std::string& from_run, const std::string& name, const std::string& to_run) {
    const std::string source = checkpoints_dir(from_run) + "/" + name;
    if (const std::string problem = verify(source); !problem.empty())
        throw CheckpointError(fmt::format("checkpoint: {} does not verify: {}", source, problem));
    const std::int64_t iteration = read_manifest(source).iteration;
    const std::string dir = checkpoints_dir(to_run);
    storage::make_dirs(dir);
    for (const std::string& own : committed_names(to_run))
        if (read_manifest(dir + "/" + own).iteration >= iteration) fs::remove_all(retire_checkpoint(to_run, own));
    const std::string pending = dir + "/.pending_" + name;
    fs::remove_all(pending);
    std::error_code error;
    fs::copy(source, pending, fs::copy_options::recursive, error);
    if (error) throw StorageError(fmt::format("storage: copying {} to {} failed: {}", source, pending, error.message()));
    Manifest copy = read_manifest(pending);
    copy.copied_from = source;
    storage::write_file_atomic(pending + "/" + kManifestFile, to_json(copy).dump(2) + "\n");
    for (const auto& entry : fs::directory_iterator(pending)) storage::fsync_path(entry.path().string());
    storage::fsync_path(pending);
    storage::rename_durable(pending, dir + "/" + name);
    write_latest(to_run, name);
}

std::string retire_checkpoint(const std::string& run_dir, const std::string& name) {
    const std::string dir = checkpoints_dir(run_dir);
    const std::string doomed = dir + "/.deleting_" + name;
    storage::rename_durable(dir + "/" + name, doomed);
    return doomed;
}

}  // namespace trainrt::checkpoint
