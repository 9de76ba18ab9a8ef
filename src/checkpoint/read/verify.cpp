#include "checkpoint/read/verify.hpp"

#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/read/schema_check.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {
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

}  // namespace trainrt::checkpoint
