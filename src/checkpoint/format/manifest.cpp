#include "checkpoint/format/manifest.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

using Json = nlohmann::ordered_json;

Json attribute_json(const AttributeValue& value) {
    return std::visit([](const auto& v) { return Json(v); }, value);
}

AttributeValue attribute_value(const Json& json) {
    if (json.is_number_integer()) return json.get<std::int64_t>();
    if (json.is_number()) return json.get<double>();
    return json.get<std::string>();
}

Json part_json(const PartEntry& part) {
    return {{"file", part.file}, {"dataset", part.dataset}, {"offset", part.offset},
            {"shape", part.shape}};
}

// A stored block must have the tensor's rank and lie inside its global shape: the reader
// indexes parts by dimension.
void check_part(const TensorEntry& tensor, const PartEntry& part, const std::string& name,
                const std::string& where) {
    const std::size_t rank = tensor.global_shape.size();
    bool ok = part.offset.size() == rank && part.shape.size() == rank;
    for (std::size_t d = 0; ok && d < rank; ++d)
        ok = part.offset[d] <= tensor.global_shape[d] &&
             part.shape[d] <= tensor.global_shape[d] - part.offset[d];
    if (!ok)
        throw CheckpointError(fmt::format("checkpoint: {}: a part of tensor '{}' in {} does not lie "
                                          "inside its global shape", where, name, part.file));
}

}  // namespace

TensorType parse_tensor_type(const std::string& name, const std::string& where) {
    for (TensorType type : {TensorType::f32, TensorType::f64, TensorType::i32, TensorType::i64,
                            TensorType::u8})
        if (name == tensor_type_name(type)) return type;
    throw CheckpointError(fmt::format("checkpoint: {}: unknown tensor type '{}'", where, name));
}

Json to_json(const Manifest& manifest) {
    Json tensors = Json::object();
    for (const auto& [name, tensor] : manifest.tensors) {
        Json parts = Json::array();
        for (const PartEntry& part : tensor.parts) parts.push_back(part_json(part));
        // Names from a std::map are unique: appended without ordered_json's linear search for one.
        tensors.get_ref<Json::object_t&>().emplace_back(
            name, Json{{"type", tensor_type_name(tensor.type)},
                       {"global_shape", tensor.global_shape},
                       {"replicated", tensor.replicated},
                       {"parts", parts}});
    }
    Json attributes = Json::object();
    for (const auto& [name, value] : manifest.attributes) attributes[name] = attribute_json(value);
    Json files = Json::array();
    for (const FileEntry& file : manifest.files) files.push_back(file_json(file));
    Json json = {{"format", kManifestFormat}, {"format_version", kManifestVersion},
                 {"name", manifest.name},     {"iteration", manifest.iteration},
                 {"world_size", manifest.world_size}, {"layout", manifest.layout},
                 {"created", manifest.created}, {"metrics", manifest.metrics},
                 {"attributes", attributes},  {"tensors", tensors}, {"files", files}};
    if (!manifest.copied_from.empty()) json["copied_from"] = manifest.copied_from;
    return json;
}

namespace {

// `object`[key] as T; a missing field or one of the wrong type is a CheckpointError naming it.
// J: ordered_json, or nlohmann::json where a manifest's tensors are read (manifest_from_text).
template <class T, class J>
T field(const J& object, const std::string& key, const std::string& where, const std::string& path) {
    try {
        return object.at(key).template get<T>();
    } catch (const nlohmann::json::exception& error) {
        throw CheckpointError(fmt::format("checkpoint: {} is malformed: field '{}{}': {}", where,
                                          path, key, error.what()));
    }
}

template <class J>
const J& member(const J& object, const std::string& key, const std::string& where,
                const std::string& path, nlohmann::json::value_t type) {
    auto found = object.find(key);
    if (found == object.end() || found->type() != type)
        throw CheckpointError(fmt::format("checkpoint: {} is malformed: field '{}{}' is missing or "
                                          "not an {}", where, path, key,
                                          type == Json::value_t::array ? "array" : "object"));
    return *found;
}

template <class J>
TensorEntry tensor_from_json(const J& tensor, const std::string& name, const std::string& where) {
    const std::string path = "tensors." + name + ".";
    TensorEntry entry{parse_tensor_type(field<std::string>(tensor, "type", where, path), where),
                      field<Shape>(tensor, "global_shape", where, path),
                      field<bool>(tensor, "replicated", where, path), {}};
    for (const J& part : member(tensor, "parts", where, path, Json::value_t::array)) {
        const std::string at = path + "parts[].";
        entry.parts.push_back({field<std::string>(part, "file", where, at),
                               field<std::string>(part, "dataset", where, at),
                               field<Shape>(part, "offset", where, at), field<Shape>(part, "shape", where, at)});
        check_part(entry, entry.parts.back(), name, where);
    }
    return entry;
}

// The tensors of a manifest from its "tensors" object.
template <class J>
void add_tensors(Manifest& manifest, const J& json, const std::string& where) {
    for (const auto& [name, tensor] : member(json, "tensors", where, "", Json::value_t::object).items())
        manifest.tensors.emplace(name, tensor_from_json(tensor, name, where));
}

// Every field of a manifest but its tensors.
Manifest manifest_without_tensors(const Json& json, const std::string& where) {
    if (!json.is_object() || field<std::string>(json, "format", where, "") != kManifestFormat)
        throw CheckpointError(fmt::format("checkpoint: {} is not a trainrt manifest", where));
    if (field<int>(json, "format_version", where, "") != kManifestVersion)
        throw CheckpointError(fmt::format("checkpoint: {} has format_version {}, this trainrt reads {}",
                                          where, json.at("format_version").dump(), kManifestVersion));
    Manifest manifest;
    manifest.name = field<std::string>(json, "name", where, "");
    manifest.iteration = field<std::int64_t>(json, "iteration", where, "");
    manifest.world_size = field<int>(json, "world_size", where, "");
    manifest.layout = field<std::string>(json, "layout", where, "");
    manifest.created = field<std::string>(json, "created", where, "");
    manifest.metrics = member(json, "metrics", where, "", Json::value_t::object);
    for (const auto& [name, value] : member(json, "attributes", where, "", Json::value_t::object).items()) {
        if (!value.is_number() && !value.is_string())
            throw CheckpointError(fmt::format("checkpoint: {} is malformed: field 'attributes.{}' is "
                                              "not a number or a string", where, name));
        manifest.attributes.emplace_back(name, attribute_value(value));
    }
    for (const Json& file : member(json, "files", where, "", Json::value_t::array)) {
        manifest.files.push_back(file_from_json(file, where));
        check_ranges(manifest.files.back(), where);
    }
    if (json.contains("copied_from")) manifest.copied_from = field<std::string>(json, "copied_from", where, "");
    return manifest;
}

}  // namespace

Manifest manifest_from_json(const Json& json, const std::string& where) {
    Manifest manifest = manifest_without_tensors(json, where);
    add_tensors(manifest, json, where);
    return manifest;
}

// Parsed twice: for the tensors as nlohmann::json, whose objects are std::maps (an ordered_json
// object finds a key by a linear search, so N tensors would take N²/2 string comparisons:
// seconds for a large model's), and for the rest as ordered_json, which keeps the order of the
// metrics and attributes, with the tensors skipped. (A parser callback that skipped the rest in
// the first pass would cost N² again: the parser then scans an object for skipped members each
// time one of its members ends.)
Manifest manifest_from_text(const std::string& text, const std::string& where) {
    Json rest;
    nlohmann::json tensors;
    try {
        rest = Json::parse(text, [](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
            return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed == "tensors");
        });
        tensors = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        throw CheckpointError(fmt::format("checkpoint: {} is not valid JSON: {}", where, error.what()));
    }
    Manifest manifest = manifest_without_tensors(rest, where);
    add_tensors(manifest, tensors, where);
    return manifest;
}

std::vector<ChecksumRange> checksum_ranges(const FileEntry& file) {
    if (!file.ranges.empty()) return file.ranges;
    return {{0, file.size, file.xxh3}};
}

ChecksumRange range_of_rank(std::uint64_t size, int rank, int ranks) {
    constexpr std::uint64_t kAlign = 1 << 20;
    const std::uint64_t share = (size + ranks - 1) / static_cast<std::uint64_t>(ranks);
    const std::uint64_t step = std::max(kAlign, (share + kAlign - 1) / kAlign * kAlign);
    const std::uint64_t begin = std::min(size, step * static_cast<std::uint64_t>(rank));
    return {begin, std::min(size, begin + step) - begin, ""};
}

namespace {

// A stretch this long that no rank wrote from memory (blocks split along a later dimension) is
// split as range_of_rank splits a file, so that its hashing is shared too; a shorter one (HDF5's
// metadata, alignment padding) goes with the range before it.
constexpr std::uint64_t kLongGapBytes = 16 << 20;

// The file in offset order: each span's bytes (its rank), and the bytes between spans (rank -1);
// a short stretch at the start (HDF5's superblock) is counted with the block after it.
std::vector<WrittenSpan> pieces_of(std::uint64_t size, std::vector<WrittenSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const WrittenSpan& a, const WrittenSpan& b) { return a.offset < b.offset; });
    std::vector<WrittenSpan> pieces;
    std::uint64_t at = 0;
    for (const WrittenSpan& span : spans) {
        if (span.length == 0 || span.offset < at || span.offset > size || span.length > size - span.offset) continue;
        if (span.offset > at) pieces.push_back({at, span.offset - at, -1});
        pieces.push_back(span);
        at = span.offset + span.length;
    }
    if (at < size) pieces.push_back({at, size - at, -1});
    if (pieces.size() > 1 && pieces[0].rank < 0 && pieces[0].length < kLongGapBytes) {
        pieces[1] = {0, pieces[0].length + pieces[1].length, pieces[1].rank};
        pieces.erase(pieces.begin());
    }
    return pieces;
}

// A range being built: its bytes, and how many of them each writer wrote.
struct RangeGroup {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::map<int, std::uint64_t> written;
    int writer() const {  // the rank that wrote most of it; -1 when none wrote any
        int best = -1;
        for (const auto& [rank, bytes] : written)
            if (best < 0 || bytes > written.at(best)) best = rank;
        return best;
    }
    void add(const WrittenSpan& piece) {
        length += piece.length;
        if (piece.rank >= 0) written[piece.rank] += piece.length;
    }
};

void add_unwritten(std::vector<RangeGroup>& groups, const WrittenSpan& gap, int ranks) {
    for (int r = 0; r < ranks; ++r) {
        const ChecksumRange part = range_of_rank(gap.length, r, ranks);
        if (part.length > 0) groups.push_back({gap.offset + part.offset, part.length, {}});
    }
}

std::vector<RangeGroup> group_pieces(const std::vector<WrittenSpan>& pieces, int ranks) {
    std::vector<RangeGroup> groups;
    for (const WrittenSpan& piece : pieces) {
        const bool gap = piece.rank < 0;
        if (gap && piece.length >= kLongGapBytes) {
            add_unwritten(groups, piece, ranks);
            continue;
        }
        const bool joins = !groups.empty() && (gap || groups.back().length < kMinRangeBytes ||
                                               groups.back().writer() == piece.rank);
        if (!joins) groups.push_back({piece.offset, 0, {}});
        groups.back().add(piece);
    }
    if (groups.size() > 1 && groups.back().length < kMinRangeBytes) {
        const RangeGroup last = groups.back();
        groups.pop_back();
        groups.back().length += last.length;
        for (const auto& [rank, bytes] : last.written) groups.back().written[rank] += bytes;
    }
    return groups;
}

}  // namespace

std::vector<ChecksumRange> ranges_of_writers(std::uint64_t size, std::vector<WrittenSpan> spans, int ranks) {
    std::vector<ChecksumRange> ranges;
    if (spans.empty()) {
        for (int r = 0; r < ranks; ++r)
            if (ChecksumRange range = range_of_rank(size, r, ranks); range.length > 0 || r == 0) {
                range.rank = r;
                ranges.push_back(range);
            }
        return ranges;
    }
    const std::vector<RangeGroup> groups = group_pieces(pieces_of(size, std::move(spans)), ranks);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const RangeGroup& group = groups[i];
        const int writer = group.writer();
        const bool mostly = writer >= 0 && group.written.at(writer) * 4 >= group.length * 3;
        ranges.push_back({group.offset, group.length, "", mostly ? writer : static_cast<int>(i % static_cast<std::size_t>(ranks))});
    }
    return ranges;
}

Json file_json(const FileEntry& file) {
    Json json = {{"name", file.name}, {"size", file.size}};
    if (file.ranges.empty()) json["xxh3"] = file.xxh3;
    for (const ChecksumRange& range : file.ranges) {
        Json entry = {{"offset", range.offset}, {"length", range.length}, {"xxh3", range.xxh3}};
        if (range.rank >= 0) entry["rank"] = range.rank;
        json["ranges"].push_back(std::move(entry));
    }
    return json;
}

FileEntry file_from_json(const Json& json, const std::string& where) {
    FileEntry file{field<std::string>(json, "name", where, "files[]."), field<std::uint64_t>(json, "size", where, "files[]."), "", {}};
    if (!json.contains("ranges")) {
        file.xxh3 = field<std::string>(json, "xxh3", where, "files[].");
        return file;
    }
    for (const Json& range : member(json, "ranges", where, "files[].", Json::value_t::array))
        file.ranges.push_back({field<std::uint64_t>(range, "offset", where, "files[].ranges[]."),
                               field<std::uint64_t>(range, "length", where, "files[].ranges[]."),
                               field<std::string>(range, "xxh3", where, "files[].ranges[]."),
                               range.contains("rank") ? field<int>(range, "rank", where, "files[].ranges[].") : -1});
    return file;
}

void check_ranges(const FileEntry& file, const std::string& where) {
    std::uint64_t next = 0;
    for (const ChecksumRange& range : file.ranges) {
        if (range.offset != next)
            throw CheckpointError(fmt::format("checkpoint: {} is malformed: the checksum ranges of {} do not "
                                              "follow each other (one starts at byte {}, not {})",
                                              where, file.name, range.offset, next));
        next += range.length;
    }
    if (!file.ranges.empty() && next != file.size)
        throw CheckpointError(fmt::format("checkpoint: {} is malformed: the checksum ranges of {} cover {} "
                                          "bytes, the file has {}", where, file.name, next, file.size));
}

void merge_file(std::vector<FileEntry>& files, FileEntry file) {
    auto same = std::find_if(files.begin(), files.end(), [&](const FileEntry& f) { return f.name == file.name; });
    if (same == files.end()) {
        files.push_back(std::move(file));
        return;
    }
    same->ranges.insert(same->ranges.end(), file.ranges.begin(), file.ranges.end());
    std::sort(same->ranges.begin(), same->ranges.end(),
              [](const ChecksumRange& a, const ChecksumRange& b) { return a.offset < b.offset; });
}

Manifest read_manifest(const std::string& checkpoint_dir) {
    const std::string path = checkpoint_dir + "/" + kManifestFile;
    std::ifstream in(path);
    if (!in) throw CheckpointError(fmt::format("checkpoint: {} is missing", path));
    std::ostringstream text;
    text << in.rdbuf();
    return manifest_from_text(text.str(), path);
}

}  // namespace trainrt::checkpoint
