#pragma once
// The manifest (manifest.json, hdf5_schemas/checkpoint.md): written last, after every rank's
// data is durable; its presence under the final directory name is what makes a checkpoint
// committed. It records every file's size and XXH3-64 checksum and where each tensor block lives.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runlog/run_files.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

using runlog::kManifestFile;

inline constexpr const char* kManifestFormat = "trainrt-checkpoint";
inline constexpr int kManifestVersion = 1;

// The XXH3-64 (16 hex digits) of bytes [offset, offset + length) of a file.
struct ChecksumRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string xxh3;
    // The rank that wrote (most of) these bytes, which hashed them and which verifies them at a
    // restore by as many ranks, keeping them to read its blocks from (read/verify.hpp); -1: none
    // (a file one rank wrote, or a manifest from before ranges had writers).
    int rank = -1;
};

struct FileEntry {
    std::string name;  // relative to the checkpoint directory
    std::uint64_t size = 0;
    std::string xxh3;  // XXH3-64 of the whole file; "" when `ranges` hold the checksums
    // A file several ranks wrote (layout shared): one checksum per contiguous byte range, in
    // offset order, covering the file; each rank hashes one range when saving and when verifying,
    // so no rank reads the whole file.
    std::vector<ChecksumRange> ranges;
};

// The file's checksums as ranges: `ranges`, or the whole file as one.
std::vector<ChecksumRange> checksum_ranges(const FileEntry& file);
// The ranges of a `size`-byte file that `ranks` ranks hash, one each (rank r: the r-th, empty
// past the end), contiguous and aligned to 1 MiB so that no two ranks read the same page.
ChecksumRange range_of_rank(std::uint64_t size, int rank, int ranks);

// Bytes [offset, offset + length) of a file, written by `rank`.
struct WrittenSpan {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    int rank = 0;
};
// The checksum ranges of a `size`-byte file that `ranks` ranks wrote together, `spans` being
// where each rank's blocks lie (disjoint; an overlapping one is ignored), each range with the
// rank that hashes and verifies it (ChecksumRange::rank, no xxh3 yet): a rank's own blocks make
// its ranges, so that a restore by as many ranks verifies each block on the rank that reads it
// and reads the file once in all. Bytes no span covers (HDF5's metadata; under 16 MiB) go with
// the range before them (the first range's when at the start); ranges under kMinRangeBytes join their
// neighbours, and a range whose writer holds less than 3/4 of its bytes is hashed by rank
// index % ranks, so that thousands of small blocks neither make thousands of ranges nor all land
// on one rank. Without spans: range_of_rank's split, one range per rank.
inline constexpr std::uint64_t kMinRangeBytes = 1 << 20;
std::vector<ChecksumRange> ranges_of_writers(std::uint64_t size, std::vector<WrittenSpan> spans, int ranks);

// A FileEntry in manifest.json and in what each rank sends to the commit (no "ranges" for a
// file hashed whole, as before ranges existed); from JSON, a CheckpointError naming `where`
// when a checksum is missing. check_ranges: a CheckpointError unless the ranges (if any)
// follow each other from byte 0 to the file's end.
nlohmann::ordered_json file_json(const FileEntry& file);
FileEntry file_from_json(const nlohmann::ordered_json& json, const std::string& where);
void check_ranges(const FileEntry& file, const std::string& where);
// Adds `file` to `files`: a new entry, or more ranges of a file already listed (kept in offset order).
void merge_file(std::vector<FileEntry>& files, FileEntry file);

// One stored block of a tensor: dataset `dataset` in `file` holds the block
// [offset, offset + shape) of the tensor's global index space.
struct PartEntry {
    std::string file;
    std::string dataset;
    Shape offset;
    Shape shape;
};

struct TensorEntry {
    TensorType type = TensorType::f32;
    Shape global_shape;
    bool replicated = false;
    std::vector<PartEntry> parts;
};

// The key of a manifest's metrics that marks a stop's checkpoint saved between two reports: named
// for the next report, which it precedes (Checkpoint::reported_iterations).
inline constexpr const char* kBetweenReportsKey = "_between_reports";

struct Manifest {
    std::string name;          // checkpoint_000042
    std::int64_t iteration = 0;
    int world_size = 1;
    std::string layout;        // file_per_rank | shared
    std::string created;       // ISO time
    nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
    std::vector<std::pair<std::string, AttributeValue>> attributes;
    std::map<std::string, TensorEntry> tensors;
    std::vector<FileEntry> files;
    std::string copied_from;   // the checkpoint this one is a copy of (a PBT exploit); empty if none
};

nlohmann::ordered_json to_json(const Manifest& manifest);
// CheckpointError naming `where` and the field when the JSON is not a valid manifest.
Manifest manifest_from_json(const nlohmann::ordered_json& json, const std::string& where);
// The same from a manifest's text, in time N log N for N tensors; CheckpointError when the
// text is not JSON.
Manifest manifest_from_text(const std::string& text, const std::string& where);
Manifest read_manifest(const std::string& checkpoint_dir);

TensorType parse_tensor_type(const std::string& name, const std::string& where);

}  // namespace trainrt::checkpoint
