// The checkpoint module's pieces that need no MPI: the manifest (JSON round trip, malformed
// input), names and listing of a run's checkpoints, leftovers, verification, retention, and the
// validation a CheckpointState does as tensors are added.
#include <catch2/catch.hpp>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checkpoint/clone.hpp"
#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/schema_check.hpp"
#include "checkpoint/read/verify.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;
using Catch::Matchers::Contains;
using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// A fresh run directory, removed with everything in it at the end of the test.
class TempRunDir {
public:
    TempRunDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/trainrt-catalog-XXXXXX";
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path_ = pattern;
    }
    ~TempRunDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempRunDir(const TempRunDir&) = delete;
    TempRunDir& operator=(const TempRunDir&) = delete;
    const std::string& path() const { return path_; }
    std::string checkpoints() const { return checkpoints_dir(path_); }

private:
    std::string path_;
};

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    REQUIRE(out.good());
    out << text;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A manifest with every field set: two tensors (one sharded over two parts, one replicated),
// attributes of the three kinds, nested metrics, two files.
Manifest sample_manifest() {
    Manifest m;
    m.name = "checkpoint_000042";
    m.iteration = 42;
    m.world_size = 2;
    m.layout = "file_per_rank";
    m.created = "2024-05-01T12:00:00Z";
    m.copied_from = "/runs/sweep/trial_0001/checkpoints/checkpoint_000040";
    m.metrics = Json{{"loss", 0.125}, {"acc", 0.9375}, {"epoch", 3}, {"tag", "warm"},
                     {"nested", {{"a", 1}, {"b", {1, 2, 3}}}}};
    m.attributes = {{"epoch", std::int64_t{3}},
                    {"big", std::int64_t{-(std::int64_t{1} << 60)}},
                    {"lr", 0.001},
                    {"whole", 2.0},
                    {"note", std::string("hello \"quoted\" ✓")}};
    TensorEntry weights{TensorType::f64, {7, 3}, false, {}};
    weights.parts.push_back({"rank_00000.h5", "/tensors/weights", {0, 0}, {4, 3}});
    weights.parts.push_back({"rank_00001.h5", "/tensors/weights", {4, 0}, {3, 3}});
    m.tensors["weights"] = weights;
    TensorEntry bias{TensorType::f32, {5}, true, {}};
    bias.parts.push_back({"rank_00000.h5", "/tensors/bias", {0}, {5}});
    m.tensors["bias"] = bias;
    TensorEntry step{TensorType::i64, {}, true, {}};
    step.parts.push_back({"rank_00000.h5", "/tensors/step", {}, {}});
    m.tensors["step"] = step;
    m.files = {{"rank_00000.h5", 1234, "0123456789abcdef"}, {"rank_00001.h5", 987, "fedcba9876543210"}};
    return m;
}

void check_same(const Manifest& a, const Manifest& b) {
    CHECK(a.name == b.name);
    CHECK(a.iteration == b.iteration);
    CHECK(a.world_size == b.world_size);
    CHECK(a.layout == b.layout);
    CHECK(a.created == b.created);
    CHECK(a.metrics == b.metrics);
    CHECK(a.copied_from == b.copied_from);
    REQUIRE(a.attributes.size() == b.attributes.size());
    for (std::size_t i = 0; i < a.attributes.size(); ++i) {
        INFO("attribute " << a.attributes[i].first);
        CHECK(a.attributes[i].first == b.attributes[i].first);
        CHECK(a.attributes[i].second.index() == b.attributes[i].second.index());
        CHECK(a.attributes[i].second == b.attributes[i].second);
    }
    REQUIRE(a.tensors.size() == b.tensors.size());
    for (const auto& [name, tensor] : a.tensors) {
        INFO("tensor " << name);
        REQUIRE(b.tensors.count(name) == 1);
        const TensorEntry& other = b.tensors.at(name);
        CHECK(tensor.type == other.type);
        CHECK(tensor.global_shape == other.global_shape);
        CHECK(tensor.replicated == other.replicated);
        REQUIRE(tensor.parts.size() == other.parts.size());
        for (std::size_t p = 0; p < tensor.parts.size(); ++p) {
            CHECK(tensor.parts[p].file == other.parts[p].file);
            CHECK(tensor.parts[p].dataset == other.parts[p].dataset);
            CHECK(tensor.parts[p].offset == other.parts[p].offset);
            CHECK(tensor.parts[p].shape == other.parts[p].shape);
        }
    }
    REQUIRE(a.files.size() == b.files.size());
    for (std::size_t i = 0; i < a.files.size(); ++i) {
        CHECK(a.files[i].name == b.files[i].name);
        CHECK(a.files[i].size == b.files[i].size);
        CHECK(a.files[i].xxh3 == b.files[i].xxh3);
        REQUIRE(a.files[i].ranges.size() == b.files[i].ranges.size());
        for (std::size_t j = 0; j < a.files[i].ranges.size(); ++j) {
            CHECK(a.files[i].ranges[j].offset == b.files[i].ranges[j].offset);
            CHECK(a.files[i].ranges[j].length == b.files[i].ranges[j].length);
            CHECK(a.files[i].ranges[j].xxh3 == b.files[i].ranges[j].xxh3);
        }
    }
}

// The exception text of manifest_from_json, or "" when it did not throw a CheckpointError.
std::string manifest_error(const Json& json, const std::string& where = "test/manifest.json") {
    try {
        manifest_from_json(json, where);
    } catch (const CheckpointError& error) {
        return error.what();
    } catch (const std::exception& error) {
        FAIL("manifest_from_json threw something other than a CheckpointError: " << error.what());
    }
    return "";
}

// checkpoints/<name>/manifest.json only (no data files, so it verifies), with these metrics.
void make_committed(const TempRunDir& run, std::int64_t iteration, const Json& metrics) {
    Manifest m;
    m.name = checkpoint_name(iteration);
    m.iteration = iteration;
    m.layout = "file_per_rank";
    m.created = "2024-05-01T12:00:00Z";
    m.metrics = metrics;
    const std::string dir = run.checkpoints() + "/" + m.name;
    fs::create_directories(dir);
    write_text(dir + "/" + kManifestFile, to_json(m).dump(2));
}

std::vector<std::string> sorted(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> names_of(std::initializer_list<std::int64_t> iterations) {
    std::vector<std::string> names;
    for (std::int64_t i : iterations) names.push_back(checkpoint_name(i));
    return sorted(names);
}

RetentionPolicy policy(std::int64_t keep, const std::string& attribute, bool max) {
    RetentionPolicy p;
    p.num_to_keep = keep;
    p.score_attribute = attribute;
    p.higher_is_better = max;
    return p;
}

}  // namespace

// ------------------------------------------------------------------------------ manifest

TEST_CASE("manifest: to_json and manifest_from_json round trip every field", "[checkpoint]") {
    const Manifest original = sample_manifest();
    const Json json = to_json(original);
    CHECK(json.at("format") == kManifestFormat);
    CHECK(json.at("format_version") == kManifestVersion);

    SECTION("in memory") { check_same(original, manifest_from_json(json, "memory")); }
    SECTION("through the text a manifest.json holds") {
        const Json parsed = Json::parse(json.dump(2));
        const Manifest back = manifest_from_json(parsed, "text");
        check_same(original, back);
        CHECK(to_json(back) == json);
    }
    SECTION("through read_manifest") {
        TempRunDir dir;
        write_text(dir.path() + "/" + kManifestFile, json.dump(2) + "\n");
        check_same(original, read_manifest(dir.path()));
    }
}

TEST_CASE("manifest: the text of a manifest of many tensors reads back whole, metrics in their order", "[checkpoint]") {
    Manifest many = sample_manifest();
    many.tensors.clear();
    for (int t = 0; t < 5000; ++t) {
        TensorEntry entry{TensorType::f32, {2, static_cast<std::uint64_t>(t + 1)}, t % 3 == 0, {}};
        entry.parts.push_back({"rank_00000.h5", fmt::format("/tensors/t{}", t), {0, 0}, {1, static_cast<std::uint64_t>(t + 1)}});
        entry.parts.push_back({"rank_00001.h5", fmt::format("/tensors/t{}", t), {1, 0}, {1, static_cast<std::uint64_t>(t + 1)}});
        many.tensors[fmt::format("layer{}.weight", 4999 - t)] = entry;
    }
    const Manifest back = manifest_from_text(to_json(many).dump(), "many");
    check_same(many, back);
    CHECK(back.tensors.size() == 5000);
    CHECK(back.metrics.begin().key() == "loss");  // as reported, not sorted ("acc" first)
    CHECK(back.attributes.front().first == "epoch");
}

TEST_CASE("manifest: text that is not JSON is a CheckpointError naming where it came from", "[checkpoint]") {
    const std::string text = to_json(sample_manifest()).dump();
    CHECK_THROWS_AS(manifest_from_text(text.substr(0, text.size() / 2), "cut/manifest.json"), CheckpointError);
    CHECK_THROWS_WITH(manifest_from_text(text.substr(0, text.size() / 2), "cut/manifest.json"),
                      Contains("cut/manifest.json") && Contains("not valid JSON"));
    CHECK_THROWS_WITH(manifest_from_text("[1, 2]", "list/manifest.json"), Contains("not a trainrt manifest"));
    Json no_tensors = to_json(sample_manifest());
    no_tensors.erase("tensors");
    CHECK_THROWS_WITH(manifest_from_text(no_tensors.dump(), "x"), Contains("'tensors'") && Contains("missing"));
}

TEST_CASE("schema: a tensor part in a file the manifest does not list is a problem", "[checkpoint]") {
    Manifest m = sample_manifest();
    m.files.clear();
    TempRunDir dir;
    const std::vector<std::string> problems = schema_problems(dir.path(), m);
    REQUIRE(problems.size() == 4);  // weights twice, bias, step: no file is opened
    CHECK_THAT(problems.front(), Contains("a file it does not list"));
}

TEST_CASE("manifest: every tensor type name parses back", "[checkpoint]") {
    for (TensorType type : {TensorType::f32, TensorType::f64, TensorType::i32, TensorType::i64,
                            TensorType::u8})
        CHECK(parse_tensor_type(tensor_type_name(type), "here") == type);
    CHECK_THROWS_AS(parse_tensor_type("float16", "here"), CheckpointError);
    CHECK_THROWS_WITH(parse_tensor_type("float16", "here"), Contains("float16") && Contains("here"));
}

TEST_CASE("a non-finite double attribute is refused when it is set", "[checkpoint]") {
    // manifest.json is JSON text, which has no NaN or infinity: such an attribute would come back
    // as null and make the whole checkpoint unreadable, so CheckpointState refuses it up front.
    for (double value : {std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()}) {
        INFO("value " << value);
        CheckpointState state;
        CHECK_THROWS_WITH(state.attribute("best_loss", value),
                          Contains("best_loss") && Contains("finite"));
        CHECK(state.attributes().empty());
    }
}

TEST_CASE("manifest: a missing field is a CheckpointError naming the file and the field",
          "[checkpoint]") {
    const Json good = to_json(sample_manifest());
    CHECK(manifest_error(good).empty());
    for (const char* field : {"format", "format_version", "name", "iteration", "world_size",
                              "layout", "created", "metrics", "attributes", "tensors", "files"}) {
        INFO("field " << field);
        Json bad = good;
        bad.erase(field);
        const std::string message = manifest_error(bad);
        CHECK_THAT(message, Contains("test/manifest.json") && Contains(field));
    }
    for (const char* field : {"type", "global_shape", "replicated", "parts"}) {
        INFO("tensor field " << field);
        Json bad = good;
        bad["tensors"]["weights"].erase(field);
        CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains(field));
    }
    for (const char* field : {"file", "dataset", "offset", "shape"}) {
        INFO("part field " << field);
        Json bad = good;
        bad["tensors"]["weights"]["parts"][1].erase(field);
        CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains(field));
    }
    for (const char* field : {"name", "size", "xxh3"}) {
        INFO("file field " << field);
        Json bad = good;
        bad["files"][0].erase(field);
        CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains(field));
    }
}

TEST_CASE("manifest: a field of the wrong type is a CheckpointError naming the field",
          "[checkpoint]") {
    const Json good = to_json(sample_manifest());
    struct Case {
        const char* field;
        Json value;
    };
    const std::vector<Case> cases = {{"name", 42},          {"iteration", "forty-two"},
                                     {"world_size", "two"}, {"layout", Json::array()},
                                     {"created", 7},        {"tensors", Json::array({1, 2})},
                                     {"files", "none"}};
    SECTION("top-level fields") {
        for (const Case& c : cases) {
            INFO("field " << c.field << " = " << c.value.dump());
            Json bad = good;
            bad[c.field] = c.value;
            CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains(c.field));
        }
    }
    SECTION("a part's offset that is not a list of sizes") {
        Json bad = good;
        bad["tensors"]["weights"]["parts"][0]["offset"] = "zero";
        CHECK_THAT(manifest_error(bad), Contains("offset"));
    }
    SECTION("a file size that is not a number") {
        Json bad = good;
        bad["files"][1]["size"] = "big";
        CHECK_THAT(manifest_error(bad), Contains("size"));
    }
    SECTION("an attribute that is neither number nor string") {
        Json bad = good;
        bad["attributes"]["epoch"] = Json::array({1, 2});
        CHECK_THAT(manifest_error(bad), Contains("epoch"));
    }
}

TEST_CASE("manifest: wrong format, version or tensor type is refused with the reason",
          "[checkpoint]") {
    const Json good = to_json(sample_manifest());
    SECTION("format") {
        Json bad = good;
        bad["format"] = "something-else";
        CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains("not a trainrt manifest"));
    }
    SECTION("format_version") {
        Json bad = good;
        bad["format_version"] = 2;
        CHECK_THAT(manifest_error(bad), Contains("format_version") && Contains("2"));
    }
    SECTION("tensor type") {
        Json bad = good;
        bad["tensors"]["bias"]["type"] = "float16";
        CHECK_THAT(manifest_error(bad), Contains("test/manifest.json") && Contains("float16"));
    }
    SECTION("not an object at all") {
        CHECK_THAT(manifest_error(Json::array({1, 2, 3})), Contains("test/manifest.json"));
    }
}

TEST_CASE("manifest: parts that do not fit their tensor are refused", "[checkpoint]") {
    // The reader indexes a part's offset and shape by the tensor's dimensions: a manifest whose
    // parts disagree with their tensor must be refused when read, not crash a restore later.
    const Json good = to_json(sample_manifest());
    SECTION("an offset with fewer dimensions than the tensor") {
        Json bad = good;
        bad["tensors"]["weights"]["parts"][1]["offset"] = Json::array({4});
        CHECK_THAT(manifest_error(bad), Contains("weights"));
    }
    SECTION("a shape with more dimensions than the tensor") {
        Json bad = good;
        bad["tensors"]["weights"]["parts"][1]["shape"] = Json::array({3, 3, 1});
        CHECK_THAT(manifest_error(bad), Contains("weights"));
    }
    SECTION("a block outside the global shape") {
        Json bad = good;
        bad["tensors"]["weights"]["parts"][1]["offset"] = Json::array({6, 0});
        CHECK_THAT(manifest_error(bad), Contains("weights"));
    }
}

TEST_CASE("read_manifest: missing and unparsable files are CheckpointErrors naming the path",
          "[checkpoint]") {
    TempRunDir dir;
    CHECK_THROWS_AS(read_manifest(dir.path()), CheckpointError);
    CHECK_THROWS_WITH(read_manifest(dir.path()), Contains(dir.path() + "/manifest.json"));
    write_text(dir.path() + "/manifest.json", "{\"format\": \"trainrt-checkpoint\", ");
    CHECK_THROWS_AS(read_manifest(dir.path()), CheckpointError);
    CHECK_THROWS_WITH(read_manifest(dir.path()), Contains(dir.path() + "/manifest.json"));
}

// ------------------------------------------------------------------------------ names, listing

TEST_CASE("checkpoint_name pads the iteration to six digits", "[checkpoint]") {
    CHECK(checkpoint_name(0) == "checkpoint_000000");
    CHECK(checkpoint_name(42) == "checkpoint_000042");
    CHECK(checkpoint_name(999999) == "checkpoint_999999");
    CHECK(checkpoint_name(1234567) == "checkpoint_1234567");
    CHECK(checkpoints_dir("/runs/x") == "/runs/x/checkpoints");
}

TEST_CASE("committed_names: numeric order, leftovers and junk ignored", "[checkpoint]") {
    TempRunDir run;
    CHECK(committed_names(run.path()).empty());  // no checkpoints directory yet
    const std::string dir = run.checkpoints();
    for (const char* name : {"checkpoint_000010", "checkpoint_000002", "checkpoint_1000000",
                             "checkpoint_999999", "checkpoint_000001", ".pending_checkpoint_000011",
                             ".deleting_checkpoint_000003", "checkpoint_", "checkpoint_abc",
                             "other_000004", "checkpoint_-00005"})
        fs::create_directories(dir + "/" + name);
    write_text(dir + "/checkpoint_000007", "a file, not a checkpoint directory");
    write_text(dir + "/latest", "checkpoint_1000000\n");
    write_text(dir + "/latest.tmp.123", "checkpoint_000010\n");
    CHECK(committed_names(run.path()) ==
          std::vector<std::string>{"checkpoint_000001", "checkpoint_000002", "checkpoint_000010",
                                   "checkpoint_999999", "checkpoint_1000000"});
}

TEST_CASE("committed_names: names with text after the number are not checkpoints",
          "[checkpoint]") {
    // A copy such as checkpoint_000006.bak must not be taken for checkpoint 6: it would be
    // restored from, and retention would count (and delete) it.
    TempRunDir run;
    const std::string dir = run.checkpoints();
    for (const char* name : {"checkpoint_000005", "checkpoint_000006.bak", "checkpoint_000007_old",
                             "checkpoint_8x"})
        fs::create_directories(dir + "/" + name);
    CHECK(committed_names(run.path()) == std::vector<std::string>{"checkpoint_000005"});
}

TEST_CASE("clean_leftovers removes interrupted saves and deletions only", "[checkpoint]") {
    TempRunDir run;
    CHECK(clean_leftovers(run.path()).empty());  // no checkpoints directory: nothing, no error
    const std::string dir = run.checkpoints();
    fs::create_directories(dir + "/.pending_checkpoint_000003/sub");
    write_text(dir + "/.pending_checkpoint_000003/rank_00000.h5", "partial");
    fs::create_directories(dir + "/.deleting_checkpoint_000001");
    write_text(dir + "/.deleting_checkpoint_000001/manifest.json", "{}");
    write_text(dir + "/latest.tmp.4242", "checkpoint_000002\n");
    make_committed(run, 2, Json::object());
    write_text(dir + "/latest", "checkpoint_000002\n");
    write_text(dir + "/notes.txt", "the user's own file");

    const std::vector<std::string> removed = clean_leftovers(run.path());
    CHECK(sorted(removed) == sorted({dir + "/.pending_checkpoint_000003",
                                     dir + "/.deleting_checkpoint_000001",
                                     dir + "/latest.tmp.4242"}));
    CHECK_FALSE(fs::exists(dir + "/.pending_checkpoint_000003"));
    CHECK_FALSE(fs::exists(dir + "/.deleting_checkpoint_000001"));
    CHECK_FALSE(fs::exists(dir + "/latest.tmp.4242"));
    CHECK(fs::exists(dir + "/checkpoint_000002/manifest.json"));
    CHECK(read_text(dir + "/latest") == "checkpoint_000002\n");
    CHECK(fs::exists(dir + "/notes.txt"));
    CHECK(committed_names(run.path()) == std::vector<std::string>{"checkpoint_000002"});
    CHECK(clean_leftovers(run.path()).empty());
}

TEST_CASE("write_latest replaces the latest file atomically", "[checkpoint]") {
    TempRunDir run;
    fs::create_directories(run.checkpoints());
    write_latest(run.path(), "checkpoint_000001");
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000001\n");
    write_latest(run.path(), "checkpoint_000002");
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000002\n");
    for (const auto& entry : fs::directory_iterator(run.checkpoints()))
        CHECK(entry.path().filename() == "latest");  // no temporary left behind
}

// ------------------------------------------------------------------------------ verify, select

TEST_CASE("verify: sizes, checksums and unlisted files", "[checkpoint]") {
    TempRunDir run;
    const std::string dir = run.checkpoints() + "/checkpoint_000001";
    fs::create_directories(dir);
    write_text(dir + "/rank_00000.h5", std::string(5000, 'a') + "tail");
    Manifest m = sample_manifest();
    m.name = "checkpoint_000001";
    m.tensors.clear();  // no tensor parts: only the file list is under test (not an HDF5 file)
    m.files = {describe_file(dir, "rank_00000.h5")};
    write_text(dir + "/manifest.json", to_json(m).dump(2));
    CHECK(m.files[0].size == 5004);
    CHECK(m.files[0].xxh3.size() == 16);
    REQUIRE(verify(dir).empty());

    SECTION("a flipped byte, same size") {
        write_text(dir + "/rank_00000.h5", std::string(5000, 'a') + "tAil");
        CHECK_THAT(verify(dir), Contains("rank_00000.h5") && Contains("checksum"));
    }
    SECTION("a truncated file") {
        write_text(dir + "/rank_00000.h5", std::string(5000, 'a'));
        CHECK_THAT(verify(dir), Contains("rank_00000.h5") && Contains("size"));
    }
    SECTION("a missing file") {
        fs::remove(dir + "/rank_00000.h5");
        CHECK_THAT(verify(dir), Contains("rank_00000.h5") && Contains("missing"));
    }
    SECTION("a file the manifest does not list") {
        write_text(dir + "/rank_00001.h5", "stray");
        CHECK_THAT(verify(dir), Contains("rank_00001.h5"));
    }
    SECTION("no manifest") {
        fs::remove(dir + "/manifest.json");
        CHECK_THAT(verify(dir), Contains("manifest.json"));
    }
    SECTION("a manifest that is not JSON") {
        write_text(dir + "/manifest.json", "not json");
        CHECK_THAT(verify(dir), Contains("manifest.json"));
    }
}

TEST_CASE("manifest: a shared file's checksum ranges round trip; a whole-file entry keeps its old form",
          "[checkpoint]") {
    Manifest m = sample_manifest();
    m.layout = "shared";
    m.files = {{"data.h5", 3000, "", {{0, 2048, "0123456789abcdef", 1}, {2048, 952, "fedcba9876543210"}}}};
    check_same(manifest_from_json(to_json(m), "test"), m);
    CHECK(manifest_from_json(to_json(m), "test").files[0].ranges[0].rank == 1);  // its writer
    CHECK(manifest_from_json(to_json(m), "test").files[0].ranges[1].rank == -1);  // none: no "rank"
    CHECK_FALSE(to_json(m)["files"][0]["ranges"][1].contains("rank"));
    CHECK(to_json(m)["files"][0].contains("ranges"));
    CHECK_FALSE(to_json(m)["files"][0].contains("xxh3"));
    const Json whole = to_json(sample_manifest())["files"][0];
    CHECK(whole == Json{{"name", "rank_00000.h5"}, {"size", 1234}, {"xxh3", "0123456789abcdef"}});
    CHECK(checksum_ranges(sample_manifest().files[0]).size() == 1);
    CHECK(checksum_ranges(sample_manifest().files[0])[0].length == 1234);
}

TEST_CASE("manifest: checksum ranges with a gap, an overlap or a short cover are refused, naming the file",
          "[checkpoint]") {
    Json json = to_json(sample_manifest());
    json["files"] = Json::array({{{"name", "data.h5"}, {"size", 3000}, {"ranges", Json::array()}}});
    Json& ranges = json["files"][0]["ranges"];
    SECTION("a gap") {
        ranges = {{{"offset", 0}, {"length", 1000}, {"xxh3", "a"}}, {{"offset", 1500}, {"length", 1500}, {"xxh3", "b"}}};
        CHECK_THAT(manifest_error(json), Contains("data.h5") && Contains("starts at byte 1500, not 1000"));
    }
    SECTION("an overlap") {
        ranges = {{{"offset", 0}, {"length", 2000}, {"xxh3", "a"}}, {{"offset", 1500}, {"length", 1500}, {"xxh3", "b"}}};
        CHECK_THAT(manifest_error(json), Contains("data.h5") && Contains("not 2000"));
    }
    SECTION("short of the file's end") {
        ranges = {{{"offset", 0}, {"length", 2000}, {"xxh3", "a"}}};
        CHECK_THAT(manifest_error(json), Contains("data.h5") && Contains("cover 2000 bytes, the file has 3000"));
    }
    SECTION("no checksum at all") {
        json["files"][0].erase("ranges");
        CHECK_THAT(manifest_error(json), Contains("xxh3"));
    }
}

TEST_CASE("range_of_rank: contiguous 1 MiB-aligned ranges that cover the file, empty past its end", "[checkpoint]") {
    constexpr std::uint64_t MiB = 1 << 20;
    for (std::uint64_t size : {std::uint64_t{1}, MiB - 1, MiB, 3 * MiB + 5, 100 * MiB + 7})
        for (int ranks : {1, 2, 3, 4, 64}) {
            INFO("size " << size << ", ranks " << ranks);
            std::uint64_t next = 0;
            for (int r = 0; r < ranks; ++r) {
                const ChecksumRange range = range_of_rank(size, r, ranks);
                CHECK(range.offset == next);
                if (range.length > 0 && range.offset + range.length < size) CHECK(range.length % MiB == 0);
                next += range.length;
            }
            CHECK(next == size);
        }
    CHECK(range_of_rank(100 * MiB, 0, 4).length == 25 * MiB);  // an even split
    CHECK(range_of_rank(MiB / 2, 1, 2).length == 0);           // small files: rank 0 alone
}

namespace {

// The ranges cover [0, size) one after the other, each with a rank below `ranks`.
void check_cover(const std::vector<ChecksumRange>& ranges, std::uint64_t size, int ranks) {
    std::uint64_t next = 0;
    for (const ChecksumRange& range : ranges) {
        CHECK(range.offset == next);
        CHECK(range.length > 0);
        CHECK(range.rank >= 0);
        CHECK(range.rank < ranks);
        next += range.length;
    }
    CHECK(next == size);
}

}  // namespace

TEST_CASE("ranges_of_writers: each rank's large blocks are its ranges, HDF5's metadata goes with the range before",
          "[checkpoint]") {
    constexpr std::uint64_t MiB = 1 << 20;
    // A header, then two tensors split by rows between 2 ranks, then metadata at the end.
    const std::vector<WrittenSpan> spans = {
        {4096 + 64 * MiB, 64 * MiB, 1}, {4096, 64 * MiB, 0}, {4096 + 128 * MiB, 64 * MiB, 0}, {4096 + 192 * MiB, 64 * MiB, 1}};
    const std::uint64_t size = 4096 + 256 * MiB + 2000;
    const std::vector<ChecksumRange> ranges = ranges_of_writers(size, spans, 2);
    check_cover(ranges, size, 2);
    REQUIRE(ranges.size() == 4);
    CHECK(ranges[0].offset == 0);  // the header goes with the first block
    CHECK(ranges[0].length == 4096 + 64 * MiB);
    const std::vector<int> writers = {ranges[0].rank, ranges[1].rank, ranges[2].rank, ranges[3].rank};
    CHECK(writers == std::vector<int>{0, 1, 0, 1});
    CHECK(ranges[3].length == 64 * MiB + 2000);  // the trailing metadata with the last block
}

TEST_CASE("ranges_of_writers: adjacent blocks of one rank make one range; an overlapping span is ignored",
          "[checkpoint]") {
    constexpr std::uint64_t MiB = 1 << 20;
    const std::vector<WrittenSpan> spans = {{0, 8 * MiB, 1}, {8 * MiB, 8 * MiB, 1}, {16 * MiB, 8 * MiB, 0}, {20 * MiB, 8 * MiB, 1}};
    const std::vector<ChecksumRange> ranges = ranges_of_writers(24 * MiB, spans, 2);
    check_cover(ranges, 24 * MiB, 2);
    REQUIRE(ranges.size() == 2);
    CHECK(ranges[0].rank == 1);
    CHECK(ranges[0].length == 16 * MiB);
    CHECK(ranges[1].rank == 0);
}

TEST_CASE("ranges_of_writers: thousands of small blocks make ranges of at least 1 MiB, shared among the ranks",
          "[checkpoint]") {
    constexpr std::uint64_t KiB = 1024, MiB = 1 << 20;
    std::vector<WrittenSpan> spans;
    std::uint64_t at = 2048;
    for (int tensor = 0; tensor < 2000; ++tensor, at += 512)  // 16 KiB per rank, 512 bytes of metadata between
        for (int rank = 0; rank < 2; ++rank, at += 16 * KiB) spans.push_back({at, 16 * KiB, rank});
    const std::vector<ChecksumRange> ranges = ranges_of_writers(at, spans, 2);
    check_cover(ranges, at, 2);
    CHECK(ranges.size() > 40);
    CHECK(ranges.size() < 70);
    std::uint64_t of_rank[2] = {0, 0};
    for (const ChecksumRange& range : ranges) {
        CHECK(range.length >= MiB);
        of_rank[range.rank] += range.length;
    }
    CHECK(of_rank[0] > at / 3);
    CHECK(of_rank[1] > at / 3);
}

TEST_CASE("ranges_of_writers: no spans split the file as range_of_rank; a long unwritten stretch is shared",
          "[checkpoint]") {
    constexpr std::uint64_t MiB = 1 << 20;
    const std::vector<ChecksumRange> split = ranges_of_writers(10 * MiB, {}, 4);
    check_cover(split, 10 * MiB, 4);
    REQUIRE(split.size() == 4);
    for (int r = 0; r < 4; ++r) {
        CHECK(split[r].rank == r);
        CHECK(split[r].offset == range_of_rank(10 * MiB, r, 4).offset);
    }
    CHECK(ranges_of_writers(1000, {}, 4).size() == 1);  // a small file: rank 0 alone
    // 32 MiB written by rank 1, then 64 MiB no rank wrote from memory (blocks split along columns).
    const std::vector<ChecksumRange> mixed = ranges_of_writers(96 * MiB, {{0, 32 * MiB, 1}}, 2);
    check_cover(mixed, 96 * MiB, 2);
    REQUIRE(mixed.size() == 3);
    CHECK(mixed[0].rank == 1);
    CHECK(mixed[1].length == 32 * MiB);
    CHECK(mixed[1].rank != mixed[2].rank);
}

TEST_CASE("merge_file: ranges from several ranks join one entry in offset order", "[checkpoint]") {
    std::vector<FileEntry> files;
    merge_file(files, {"data.h5", 3000, "", {{2048, 952, "b"}}});
    merge_file(files, {"data.h5", 3000, "", {{0, 2048, "a"}}});
    merge_file(files, {"other.h5", 10, "c", {}});
    REQUIRE(files.size() == 2);
    REQUIRE(files[0].ranges.size() == 2);
    CHECK(files[0].ranges[0].xxh3 == "a");
    CHECK(files[0].ranges[1].xxh3 == "b");
    CHECK_NOTHROW(check_ranges(files[0], "test"));
}

TEST_CASE("verify: a file checksummed in ranges is checked range by range, naming the bytes of a bad one",
          "[checkpoint]") {
    TempRunDir run;
    const std::string dir = run.checkpoints() + "/checkpoint_000001";
    fs::create_directories(dir);
    const std::string bytes = std::string(3000, 'a') + std::string(2000, 'b');
    write_text(dir + "/data.h5", bytes);
    Manifest m = sample_manifest();
    m.name = "checkpoint_000001";
    m.layout = "shared";
    m.tensors.clear();
    FileEntry data{"data.h5", 5000, "", {{0, 3000, ""}, {3000, 2000, ""}}};
    for (ChecksumRange& range : data.ranges) range.xxh3 = describe_range(dir, "data.h5", range);
    CHECK(data.ranges[0].xxh3 != data.ranges[1].xxh3);
    m.files = {data};
    write_text(dir + "/manifest.json", to_json(m).dump(2));
    REQUIRE(verify(dir).empty());
    CHECK(verify_share(dir, read_manifest(dir), 0, 2).empty());
    CHECK(verify_share(dir, read_manifest(dir), 1, 2).empty());
    write_text(dir + "/data.h5", std::string(3000, 'a') + std::string(1999, 'b') + "B");
    CHECK_THAT(verify(dir), Contains("data.h5") && Contains("bytes 3000-5000"));
    CHECK(verify_share(dir, read_manifest(dir), 0, 2).empty());  // the first range is intact: share 0 finds nothing
    CHECK_THAT(verify_share(dir, read_manifest(dir), 1, 2), Contains("bytes 3000-5000"));
    KeptImage kept{"", 1 << 20, {}, {}};  // a rank alone reads the file once into memory for both ranges
    CHECK_THAT(verify_share(dir, read_manifest(dir), 0, 1, &kept), Contains("bytes 3000-5000"));
    CHECK(kept.image.data() == nullptr);
    write_text(dir + "/data.h5", bytes);
    CHECK(verify_share(dir, read_manifest(dir), 0, 1, &kept).empty());
    REQUIRE(kept.image.data() != nullptr);
    CHECK(std::string(kept.image.data(), kept.image.size()) == bytes);
}

TEST_CASE("verify: a shared file's ranges are verified by their writers, who keep them; other counts share them by turns",
          "[checkpoint]") {
    TempRunDir run;
    const std::string dir = run.checkpoints() + "/checkpoint_000001";
    fs::create_directories(dir);
    const std::string bytes = std::string(3000, 'a') + std::string(2000, 'b') + std::string(1000, 'c');
    write_text(dir + "/data.h5", bytes);
    Manifest m = sample_manifest();
    m.name = "checkpoint_000001";
    m.layout = "shared";
    m.world_size = 2;
    m.tensors.clear();
    FileEntry data{"data.h5", 6000, "", {{0, 3000, "", 1}, {3000, 2000, "", 0}, {5000, 1000, "", 1}}};
    for (ChecksumRange& range : data.ranges) range.xxh3 = describe_range(dir, "data.h5", range);
    m.files = {data};
    write_text(dir + "/manifest.json", to_json(m).dump(2));
    KeptImage rank0{"rank_00000.h5", 1 << 20, {}, {}}, rank1{"rank_00001.h5", 1 << 20, {}, {}};
    REQUIRE(verify_share(dir, read_manifest(dir), 0, 2, &rank0).empty());
    REQUIRE(verify_share(dir, read_manifest(dir), 1, 2, &rank1).empty());
    CHECK(rank0.image.data() == nullptr);  // not its file: ranges of it
    REQUIRE(rank0.ranges.size() == 1);
    CHECK(rank0.ranges_file == "data.h5");
    CHECK(rank0.ranges[0].offset == 3000);
    CHECK(std::string(rank0.ranges[0].image.data(), rank0.ranges[0].image.size()) == bytes.substr(3000, 2000));
    REQUIRE(rank1.ranges.size() == 2);
    CHECK(std::string(rank1.ranges[1].image.data(), rank1.ranges[1].image.size()) == bytes.substr(5000));
    CHECK(rank1.held_bytes() == 4000);
    // A budget too small for a range: verified all the same, not kept.
    KeptImage small{"rank_00001.h5", 3500, {}, {}};
    CHECK(verify_share(dir, read_manifest(dir), 1, 2, &small).empty());
    CHECK(small.held_bytes() == 3000);
    // A corrupted byte is found by its writer alone, and nothing of that range kept.
    write_text(dir + "/data.h5", bytes.substr(0, 5500) + "C" + bytes.substr(5501));
    CHECK(verify_share(dir, read_manifest(dir), 0, 2).empty());
    KeptImage bad{"rank_00001.h5", 1 << 20, {}, {}};
    CHECK_THAT(verify_share(dir, read_manifest(dir), 1, 2, &bad), Contains("bytes 5000-6000"));
    // Three ranks restoring a checkpoint two wrote: the ranges go by turns (range k to rank k % 3).
    CHECK(verify_share(dir, read_manifest(dir), 0, 3).empty());
    CHECK(verify_share(dir, read_manifest(dir), 1, 3).empty());
    CHECK_THAT(verify_share(dir, read_manifest(dir), 2, 3), Contains("bytes 5000-6000"));
}

TEST_CASE("select_latest_valid skips newer checkpoints that fail verification", "[checkpoint]") {
    TempRunDir run;
    CHECK_FALSE(select_latest_valid(run.path()).path.has_value());
    make_committed(run, 1, Json::object());
    make_committed(run, 2, Json::object());
    make_committed(run, 3, Json::object());
    fs::remove(run.checkpoints() + "/checkpoint_000003/manifest.json");
    write_text(run.checkpoints() + "/checkpoint_000002/extra.h5", "not listed");
    const Selection selection = select_latest_valid(run.path());
    REQUIRE(selection.path.has_value());
    CHECK(*selection.path == run.checkpoints() + "/checkpoint_000001");
    REQUIRE(selection.warnings.size() == 2);
    CHECK_THAT(selection.warnings[0], Contains("checkpoint_000003"));
    CHECK_THAT(selection.warnings[1], Contains("checkpoint_000002") && Contains("extra.h5"));
}

// ------------------------------------------------------------------------------ retention

TEST_CASE("retention: num_to_keep 0 keeps everything", "[checkpoint]") {
    TempRunDir run;
    for (int i = 1; i <= 4; ++i) make_committed(run, i, Json{{"acc", 0.1 * i}});
    CHECK(retention_victims(run.path(), checkpoint_name(4), policy(0, "", true)).empty());
    CHECK(retention_victims(run.path(), checkpoint_name(4), policy(0, "acc", false)).empty());
}

TEST_CASE("retention: by recency keeps the newest num_to_keep", "[checkpoint]") {
    TempRunDir run;
    for (int i = 1; i <= 5; ++i) make_committed(run, i, Json{{"acc", 1.0 / i}});
    for (bool max : {true, false}) {  // score_order has no meaning without a score attribute
        INFO("higher_is_better " << max);
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(5), policy(2, "", max))) ==
              names_of({1, 2, 3}));
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(5), policy(1, "", max))) ==
              names_of({1, 2, 3, 4}));
        CHECK(retention_victims(run.path(), checkpoint_name(5), policy(5, "", max)).empty());
        CHECK(retention_victims(run.path(), checkpoint_name(5), policy(9, "", max)).empty());
    }
}

TEST_CASE("retention: by score, max and min", "[checkpoint]") {
    TempRunDir run;
    const double acc[] = {0.5, 0.9, 0.7, 0.3};  // iterations 1..4
    for (int i = 1; i <= 4; ++i) make_committed(run, i, Json{{"acc", acc[i - 1]}, {"loss", 1.0}});
    SECTION("max: the best two are 2 and 3; 4 is newest and stays") {
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(2, "acc", true))) ==
              names_of({1}));
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(1, "acc", true))) ==
              names_of({1, 3}));
    }
    SECTION("min: the best two are 4 and 1") {
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(2, "acc", false))) ==
              names_of({2, 3}));
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(1, "acc", false))) ==
              names_of({1, 2, 3}));
    }
    SECTION("the newest is never a victim, however bad its score") {
        for (std::int64_t keep : {1, 2, 3}) {
            INFO("num_to_keep " << keep);
            for (const auto& victim :
                 retention_victims(run.path(), checkpoint_name(4), policy(keep, "acc", true)))
                CHECK(victim != checkpoint_name(4));
            // Newest named explicitly as 2 (the best under max): still never a victim under min.
            for (const auto& victim :
                 retention_victims(run.path(), checkpoint_name(2), policy(keep, "acc", false)))
                CHECK(victim != checkpoint_name(2));
        }
    }
}

TEST_CASE("retention: a missing or non-numeric score counts worst", "[checkpoint]") {
    TempRunDir run;
    make_committed(run, 1, Json{{"acc", 0.2}});
    make_committed(run, 2, Json{{"loss", 0.1}});           // no acc
    make_committed(run, 3, Json{{"acc", "excellent"}});    // not a number
    make_committed(run, 4, Json{{"acc", 0.6}});
    make_committed(run, 5, Json{{"acc", 0.4}});
    SECTION("max") {
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(5), policy(2, "acc", true))) ==
              names_of({1, 2, 3}));
    }
    SECTION("min") {
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(5), policy(2, "acc", false))) ==
              names_of({2, 3, 4}));
    }
    SECTION("the newest without a score still stays") {
        make_committed(run, 6, Json{{"loss", 0.0}});
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(6), policy(2, "acc", true))) ==
              names_of({1, 2, 3}));
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(6), policy(2, "acc", false))) ==
              names_of({2, 3, 4}));
    }
}

TEST_CASE("retention: a checkpoint whose manifest is unreadable counts worst, whatever the order",
          "[checkpoint]") {
    TempRunDir run;
    for (int i = 1; i <= 4; ++i) make_committed(run, i, Json{{"acc", 0.1 * i}});
    write_text(run.checkpoints() + "/checkpoint_000003/manifest.json", "garbage");
    // Score: acc 0.1, 0.2, (unreadable), 0.4.
    CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(2, "acc", true))) ==
          names_of({1, 3}));
    CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(2, "acc", false))) ==
          names_of({3}));  // best two: 1 and 2; 4 is the newest
    // Recency: 3 is unreadable, so of 1, 2 and 4 the newest two stay.
    for (bool max : {true, false}) {
        INFO("recency, higher_is_better " << max);
        CHECK(sorted(retention_victims(run.path(), checkpoint_name(4), policy(2, "", max))) ==
              names_of({1, 3}));
    }
}

// ------------------------------------------------------------------------------ CheckpointState

TEST_CASE("CheckpointState: valid tensors and attributes are recorded as given", "[checkpoint]") {
    const std::vector<float> bias{1, 2, 3};
    const std::vector<double> block(6, 0.5);
    const std::vector<std::int64_t> step{7};
    CheckpointState state;
    state.replicated<float>("bias", bias, {3});
    state.sharded<double>("w", block, {5, 3}, {2, 0}, {2, 3});
    state.replicated<std::int64_t>("step", step, {});
    state.attribute("epoch", std::int64_t{3}).attribute("lr", 0.5).attribute("note", std::string("x"));
    state.attribute("epoch", std::int64_t{4});  // replaces
    REQUIRE(state.tensors().size() == 3);
    const TensorPart& w = state.tensors()[1];
    CHECK(w.name == "w");
    CHECK(w.type == TensorType::f64);
    CHECK_FALSE(w.replicated);
    CHECK(w.global_shape == Shape{5, 3});
    CHECK(w.offset == Shape{2, 0});
    CHECK(w.shape == Shape{2, 3});
    CHECK(w.data == block.data());
    CHECK(w.elements() == 6);
    CHECK(w.bytes() == 48);
    const TensorPart& b = state.tensors()[0];
    CHECK(b.replicated);
    CHECK(b.offset == Shape{0});
    CHECK(b.shape == Shape{3});
    CHECK(state.tensors()[2].elements() == 1);  // a scalar holds one element
    REQUIRE(state.attributes().size() == 3);
    CHECK(state.attributes()[0].first == "epoch");
    CHECK(state.attributes()[0].second == AttributeValue{std::int64_t{4}});
    CHECK(tensor_type_size(TensorType::u8) == 1);
    CHECK(tensor_type_size(TensorType::i32) == 4);
    CHECK(tensor_type_size(TensorType::f64) == 8);
}

TEST_CASE("CheckpointState: invalid tensors are CheckpointErrors naming the tensor",
          "[checkpoint]") {
    const std::vector<float> four(4, 1.0f);
    CheckpointState state;
    state.replicated<float>("ok", four, {4});

    SECTION("names") {
        CHECK_THROWS_AS(state.replicated<float>("", four, {4}), CheckpointError);
        CHECK_THROWS_WITH(state.replicated<float>("a/b", four, {4}), Contains("a/b"));
        CHECK_THROWS_WITH(state.sharded<float>("layer/w", four, {8}, {0}, {4}), Contains("layer/w"));
        CHECK_THROWS_WITH(state.replicated<float>(".hidden", four, {4}), Contains(".hidden"));
    }
    SECTION("the same name twice") {
        CHECK_THROWS_WITH(state.replicated<float>("ok", four, {4}), Contains("ok") && Contains("twice"));
        CHECK_THROWS_WITH(state.sharded<float>("ok", four, {8}, {4}, {4}), Contains("ok"));
    }
    SECTION("a block outside the global shape") {
        CHECK_THROWS_WITH(state.sharded<float>("w", four, {6}, {3}, {4}), Contains("'w'") && Contains("outside"));
        CHECK_THROWS_WITH(state.sharded<float>("w", four, {2, 4}, {1, 1}, {1, 4}), Contains("outside"));
        CHECK_THROWS_AS(state.sharded<float>("w", four, {3}, {0}, {4}), CheckpointError);
    }
    SECTION("an offset so large that offset + shape wraps around") {
        const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max() - 1;
        CHECK_THROWS_AS(state.sharded<float>("w", four, {8}, {huge}, {4}), CheckpointError);
    }
    SECTION("dimension counts that differ") {
        CHECK_THROWS_WITH(state.sharded<float>("w", four, {4, 1}, {0}, {4}), Contains("'w'"));
        CHECK_THROWS_AS(state.sharded<float>("w", four, {4}, {0, 0}, {4}), CheckpointError);
        CHECK_THROWS_AS(state.sharded<float>("w", four, {4}, {0}, {4, 1}), CheckpointError);
    }
    SECTION("an element count that differs from the data given") {
        CHECK_THROWS_WITH(state.replicated<float>("w", four, {5}), Contains("'w'") && Contains("4"));
        CHECK_THROWS_AS(state.replicated<float>("w", four, {2, 3}), CheckpointError);
        CHECK_THROWS_AS(state.sharded<float>("w", four, {8}, {0}, {3}), CheckpointError);
        CHECK_THROWS_AS(state.replicated<float>("w", four, {}), CheckpointError);  // scalar: 1
    }
    SECTION("a shape whose element count overflows") {
        const std::uint64_t big = std::uint64_t{1} << 32;
        const std::span<const float> none;
        CHECK_THROWS_AS(state.replicated<float>("w", none, {big, big}), CheckpointError);
    }
    // A failed add leaves the state as it was.
    CHECK(state.tensors().size() == 1);
}

// ------------------------------------------------------------------------------ clone (PBT)

TEST_CASE("clone_checkpoint: the copy becomes the target's newest; its later ones are retired",
          "[checkpoint]") {
    TempRunDir donor, target;
    make_committed(donor, 4, Json{{"epoch", 2}});
    make_committed(target, 2, Json{{"epoch", 1}});
    make_committed(target, 4, Json{{"epoch", 2}});
    make_committed(target, 6, Json{{"epoch", 3}});
    clone_checkpoint(donor.path(), "checkpoint_000004", target.path());
    CHECK(committed_names(target.path()) == names_of({2, 4}));
    CHECK(read_manifest(target.checkpoints() + "/checkpoint_000004").metrics == Json{{"epoch", 2}});
    // The copy names its source, and its checksums still hold with the rewritten manifest.
    CHECK(read_manifest(target.checkpoints() + "/checkpoint_000004").copied_from ==
          donor.checkpoints() + "/checkpoint_000004");
    CHECK(verify(target.checkpoints() + "/checkpoint_000004").empty());
    CHECK_FALSE(to_json(read_manifest(donor.checkpoints() + "/checkpoint_000004")).contains("copied_from"));
    CHECK(read_text(target.checkpoints() + "/latest") == "checkpoint_000004\n");
    CHECK(clean_leftovers(target.path()).empty());  // nothing pending or retired is left behind
    CHECK(*select_latest_valid(target.path()).path == target.checkpoints() + "/checkpoint_000004");
    CHECK(committed_names(donor.path()) == names_of({4}));  // the donor keeps its own
}

TEST_CASE("clone_checkpoint: a source that does not verify is a CheckpointError; the target is untouched",
          "[checkpoint]") {
    TempRunDir donor, target;
    make_committed(donor, 4, Json::object());
    write_text(donor.checkpoints() + "/checkpoint_000004/stray.h5", "not listed");
    make_committed(target, 6, Json::object());
    CHECK_THROWS_AS(clone_checkpoint(donor.path(), "checkpoint_000004", target.path()), trainrt::CheckpointError);
    CHECK(committed_names(target.path()) == names_of({6}));
}

namespace {

// 1 MiB of bytes that no two offsets share by accident, written to dir/name.
std::string write_pattern(const std::string& dir, const std::string& name) {
    std::string bytes(1 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
    write_text(dir + "/" + name, bytes);
    return bytes;
}

}  // namespace

TEST_CASE("describe_written_file: the regions' bytes are hashed from memory, the rest from the file, in file order",
          "[checkpoint]") {
    TempRunDir run;
    const std::string dir = run.path();
    const std::string bytes = write_pattern(dir, "rank_00000.h5");
    const FileEntry whole = describe_file(dir, "rank_00000.h5");
    // Memory equal to the file's bytes: the file's own digest, whatever part of it is in regions.
    const std::string memory = bytes;
    const auto region = [&](std::uint64_t offset, std::uint64_t length) {
        return WrittenRegion{offset, length, memory.data() + offset};
    };
    CHECK(describe_written_file(dir, "rank_00000.h5", {}).xxh3 == whole.xxh3);
    CHECK(describe_written_file(dir, "rank_00000.h5", {region(700000, 300000), region(4096, 65536)}).xxh3 == whole.xxh3);
    CHECK(describe_written_file(dir, "rank_00000.h5", {region(0, bytes.size())}).xxh3 == whole.xxh3);
    CHECK(describe_written_file(dir, "rank_00000.h5", {}).size == bytes.size());
    // The regions' bytes do come from memory: memory that differs from the file changes the digest.
    std::string changed = bytes;
    changed[5000] ^= 1;
    CHECK(describe_written_file(dir, "rank_00000.h5", {{4096, 65536, changed.data() + 4096}}).xxh3 != whole.xxh3);
    CHECK(describe_written_file(dir, "rank_00000.h5", {{70000, 65536, changed.data() + 70000}}).xxh3 == whole.xxh3);
    // A region overlapping another, or past the file's end, is read from the file instead.
    CHECK(describe_written_file(dir, "rank_00000.h5", {region(4096, 65536), {5000, 10, changed.data() + 5000}}).xxh3 ==
          whole.xxh3);
    CHECK(describe_written_file(dir, "rank_00000.h5", {{bytes.size() - 10, 20, changed.data()}}).xxh3 == whole.xxh3);
}

TEST_CASE("describe_written_range: the regions' bytes inside the range from memory, the rest from the file",
          "[checkpoint]") {
    TempRunDir run;
    const std::string dir = run.path();
    const std::string bytes = write_pattern(dir, "data.h5");
    const ChecksumRange range{300000, 400000, ""};
    const std::string expected = describe_range(dir, "data.h5", range);
    const auto region = [&](const std::string& memory, std::uint64_t offset, std::uint64_t length) {
        return WrittenRegion{offset, length, memory.data() + offset};
    };
    CHECK(describe_written_range(dir, "data.h5", range, {}) == expected);
    // Regions inside it, crossing either end, or wholly outside: the range's own digest.
    CHECK(describe_written_range(dir, "data.h5", range, {region(bytes, 400000, 1000), region(bytes, 0, 310000),
                                                        region(bytes, 690000, 100000), region(bytes, 800000, 10)}) ==
          expected);
    CHECK(describe_written_range(dir, "data.h5", range, {region(bytes, 0, bytes.size())}) == expected);
    // Memory inside the range is what is hashed; memory outside it is not looked at.
    std::string changed = bytes;
    changed[350000] ^= 1;
    changed[299999] ^= 1;
    changed[700000] ^= 1;
    CHECK(describe_written_range(dir, "data.h5", range, {region(changed, 340000, 20000)}) != expected);
    CHECK(describe_written_range(dir, "data.h5", range, {region(changed, 200000, 100000)}) == expected);
    CHECK(describe_written_range(dir, "data.h5", range, {region(changed, 700000, 10)}) == expected);
    // A region overlapping the one before it is read from the file.
    CHECK(describe_written_range(dir, "data.h5", range, {region(bytes, 300000, 100000), region(changed, 340000, 20000)}) ==
          expected);
    // The file ending before the range: StorageError.
    CHECK_THROWS_AS(describe_written_range(dir, "data.h5", {1000000, 100000, ""}, {}), StorageError);
}
