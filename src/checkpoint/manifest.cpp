#include "checkpoint/manifest.hpp"

#include <fstream>

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
        tensors[name] = {{"type", tensor_type_name(tensor.type)},
                         {"global_shape", tensor.global_shape},
                         {"replicated", tensor.replicated},
                         {"parts", parts}};
    }
    Json attributes = Json::object();
    for (const auto& [name, value] : manifest.attributes) attributes[name] = attribute_json(value);
    Json files = Json::array();
    for (const FileEntry& file : manifest.files)
        files.push_back({{"name", file.name}, {"size", file.size}, {"xxh3", file.xxh3}});
    return {{"format", kManifestFormat}, {"format_version", kManifestVersion},
            {"name", manifest.name},     {"iteration", manifest.iteration},
            {"world_size", manifest.world_size}, {"layout", manifest.layout},
            {"created", manifest.created}, {"metrics", manifest.metrics},
            {"attributes", attributes},  {"tensors", tensors}, {"files", files}};
}

Manifest manifest_from_json(const Json& json, const std::string& where) {
    try {
        if (json.at("format").get<std::string>() != kManifestFormat)
            throw CheckpointError(fmt::format("checkpoint: {} is not a trainrt manifest", where));
        if (json.at("format_version").get<int>() != kManifestVersion)
            throw CheckpointError(fmt::format("checkpoint: {} has format_version {}, this trainrt "
                                              "reads {}", where, json.at("format_version").dump(),
                                              kManifestVersion));
        Manifest manifest;
        manifest.name = json.at("name").get<std::string>();
        manifest.iteration = json.at("iteration").get<std::int64_t>();
        manifest.world_size = json.at("world_size").get<int>();
        manifest.layout = json.at("layout").get<std::string>();
        manifest.created = json.at("created").get<std::string>();
        manifest.metrics = json.at("metrics");
        for (const auto& [name, value] : json.at("attributes").items())
            manifest.attributes.emplace_back(name, attribute_value(value));
        for (const auto& [name, tensor] : json.at("tensors").items()) {
            TensorEntry entry{parse_tensor_type(tensor.at("type").get<std::string>(), where),
                              tensor.at("global_shape").get<Shape>(),
                              tensor.at("replicated").get<bool>(), {}};
            for (const Json& part : tensor.at("parts"))
                entry.parts.push_back({part.at("file").get<std::string>(),
                                       part.at("dataset").get<std::string>(),
                                       part.at("offset").get<Shape>(), part.at("shape").get<Shape>()});
            manifest.tensors.emplace(name, std::move(entry));
        }
        for (const Json& file : json.at("files"))
            manifest.files.push_back({file.at("name").get<std::string>(),
                                      file.at("size").get<std::uint64_t>(),
                                      file.at("xxh3").get<std::string>()});
        return manifest;
    } catch (const Json::exception& error) {
        throw CheckpointError(fmt::format("checkpoint: {} is malformed: {}", where, error.what()));
    }
}

Manifest read_manifest(const std::string& checkpoint_dir) {
    const std::string path = checkpoint_dir + "/" + kManifestFile;
    std::ifstream in(path);
    if (!in) throw CheckpointError(fmt::format("checkpoint: {} is missing", path));
    Json json;
    try {
        json = Json::parse(in);
    } catch (const Json::exception& error) {
        throw CheckpointError(fmt::format("checkpoint: {} is not valid JSON: {}", path, error.what()));
    }
    return manifest_from_json(json, path);
}

}  // namespace trainrt::checkpoint
