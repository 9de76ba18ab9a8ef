#pragma once
// Whether a committed checkpoint holds what its manifest says, before anything is read from it:
// every listed file present with its size and XXH3-64, no file the manifest does not list, and
// the files' HDF5 contents as the schema says (schema_check.hpp). A restore's ranks verify a
// checkpoint together, each a share, and keep the bytes they verified to read from (reader.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/schema_check.hpp"
#include "storage/file_image.hpp"

namespace trainrt::checkpoint {

// The bytes a restoring rank keeps in memory from its verification, to read its blocks from
// (reader.hpp): the one file it wrote itself (or, alone, the first it verifies), when its share
// includes it and it fits; or, in the shared layout, the ranges of the shared file it wrote.
struct KeptImage {
    std::string file;             // "rank_00003.h5"; "": the first file verified (then its name)
    std::uint64_t max_bytes = 0;  // a larger file is verified as any other
    storage::FileImage image;     // its bytes, when kept
    // Where its parts' datasets lie in `image` (or in `ranges_file`), noted by the schema check of
    // the file (verify_schema_share), which opens them anyway: the reader needs no HDF5 open.
    DatasetAddresses addresses;
    // In the shared layout, restored by as many ranks as wrote it: the checksum ranges of the
    // shared file that this rank wrote and verified, each kept in memory within max_bytes in
    // all (its blocks are read from there). `unread`: the bytes of datasets in it not yet read.
    struct Range {
        std::uint64_t offset = 0;  // in the file
        storage::FileImage image;
        std::uint64_t unread = 0;
    };
    std::string ranges_file;
    std::vector<Range> ranges;
    std::uint64_t held_bytes() const;  // of the image and the ranges
};

// "" when the checkpoint verifies: manifest readable, every listed file present with its size
// and XXH3-64, no file that the manifest does not list, and the files hold what the manifest
// says (schema_check.hpp). Otherwise the reason, naming the file.
std::string verify(const std::string& checkpoint_dir);

// verify() in parts, for ranks that verify a checkpoint together (restore.hpp),
// each with the manifest it read (read_manifest_or_reason: "" or why it cannot be read).
// verify_share checks the presence, size and XXH3-64 of this share's checksum ranges (file k,
// numbered in the manifest's order, is share k % shares'; in the shared layout each range of the
// shared file counts as a file, and one with a writer (ChecksumRange::rank) is that rank's share
// when there are as many shares as the checkpoint's world size; share 0 also looks for files the
// manifest does not list). verify_schema_share, once every share's checksums passed
// (HDF5 never opens a corrupted file), checks the HDF5 contents (metadata only) of the files whose
// first range is this share's, and notes where the kept file's datasets lie (keep->addresses).
// Each "" or the reason, naming the file.
std::string read_manifest_or_reason(const std::string& checkpoint_dir, Manifest& manifest);
std::string verify_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                         KeptImage* keep = nullptr);
std::string verify_schema_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                                KeptImage* keep = nullptr);

struct Selection {
    std::optional<std::string> path;    // the checkpoint to resume from
    std::vector<std::string> warnings;  // one line per checkpoint skipped, naming file and reason
};

// The newest committed checkpoint that verifies; older ones are tried when newer ones fail.
Selection select_latest_valid(const std::string& run_dir);

}  // namespace trainrt::checkpoint
