#pragma once
// Declaring configuration keys: each key once, as one line of a list macro, from which come a
// typed struct, the keys' OptionSpecs (validation with did-you-mean, --help, --print-config, the
// the documentation's key table) and the typed read of a merged JobConfig. trainrt declares its own sections
// this way (src/config/settings.hpp), and a plugin its [train] keys:
//
//   #define MY_TRAIN_KEYS(KEY)                                                              (each
//       KEY(epochs, std::int64_t, "20", trainrt::at_least(1), "passes over the data")        line
//       KEY(lr, double, "0.05", trainrt::between(0, 10), "SGD learning rate")                 ends
//       KEY(init, std::optional<std::string>, "", trainrt::a_path(), "start from these weights") in \)
//   TRAINRT_KEYS(MyTrainKeys, "train", MY_TRAIN_KEYS);
//
//   TRAINRT_WORKLOAD_WITH(my_model, "my model", train, MyTrainKeys::specs, nullptr);
//   void train(trainrt::Session& session) {
//       const MyTrainKeys keys = MyTrainKeys::read(session.config());
//       for (std::int64_t epoch = 0; epoch < keys.epochs.value; ++epoch) ...
//
// A line is KEY(name, C++ type, default as an INI value ("" = unset), accepted values, meaning).
// Types: std::int64_t, int, double, bool, std::string, std::optional of those ("" default:
// unset), and enums with a trainrt::EnumNames specialisation (a choice, aliases allowed).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "trainrt/config.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

// The workload's own section (Ray's train_loop_config): its keys are the workload's declaration.
inline constexpr const char* kTrainSection = "train";
// The progress line's convention: a workload whose [train] keys include `epochs` gets "epoch x/N"
// and an ETA from it.
inline constexpr const char* kTrainEpochsKey = "train.epochs";

// A setting's value with its key and where it came from ("jobs/a.ini:3", "env TRAINRT_X_Y",
// "command line", "default"), for messages that name them.
template <class T> struct Setting {
    T value{};
    std::string key;
    std::string source;
    std::string where() const { return key + " (" + source + ")"; }
    // "data.shuffle = blocks (jobs/a.ini:4)": the setting as it was given, for a refusal.
    std::string stated(const std::string& shown) const { return key + " = " + shown + " (" + source + ")"; }
};

// What a key accepts beyond its type: numeric bounds (inclusive), a choice of words for a
// std::string, or a path / run name.
struct Accepts {
    double min = -1e300;  // OptionSpec's "no bound"
    double max = 1e300;
    std::vector<std::string> choices;
    std::optional<ValueKind> kind;  // path or name instead of the type's kind
};
inline Accepts any_value() { return {}; }
inline Accepts at_least(double min) { return {min, 1e300, {}, {}}; }
inline Accepts between(double min, double max) { return {min, max, {}, {}}; }
inline Accepts one_of(std::vector<std::string> words) { return {-1e300, 1e300, std::move(words), ValueKind::choice}; }
inline Accepts a_path() { return {-1e300, 1e300, {}, ValueKind::path}; }
inline Accepts a_name() { return {-1e300, 1e300, {}, ValueKind::name}; }

// The words of an enum a key takes: {"word", value} pairs; the first word of each value is its
// name (what --print-config and Python show), later ones are aliases.
template <class E> struct EnumNames;  // static const std::vector<std::pair<std::string, E>>& get();

template <class E> const std::string& name_of(E value) {
    for (const auto& [word, named] : EnumNames<E>::get())
        if (named == value) return word;
    throw Error("name_of: an enum value without a name");
}

// How a C++ type is declared and read; specialise it for a type of your own.
template <class T, class Enable = void> struct KeyType;

template <> struct KeyType<std::int64_t> {
    static constexpr ValueKind kind = ValueKind::integer;
    static std::int64_t read(const JobConfig& config, const std::string& key) { return config.get_int(key); }
};
template <> struct KeyType<int> {
    static constexpr ValueKind kind = ValueKind::integer;
    static int read(const JobConfig& config, const std::string& key) { return static_cast<int>(config.get_int(key)); }
};
template <> struct KeyType<double> {
    static constexpr ValueKind kind = ValueKind::real;
    static double read(const JobConfig& config, const std::string& key) { return config.get_double(key); }
};
template <> struct KeyType<bool> {
    static constexpr ValueKind kind = ValueKind::boolean;
    static bool read(const JobConfig& config, const std::string& key) { return config.get_bool(key); }
};
template <> struct KeyType<std::string> {
    static constexpr ValueKind kind = ValueKind::string;
    static std::string read(const JobConfig& config, const std::string& key) { return config.get_or(key, ""); }
};
template <class T> struct KeyType<std::optional<T>> {
    static constexpr ValueKind kind = KeyType<T>::kind;
    static std::optional<T> read(const JobConfig& config, const std::string& key) {
        if (!config.has(key) || config.get(key).empty()) return std::nullopt;
        return KeyType<T>::read(config, key);
    }
};
template <class E> struct KeyType<E, std::enable_if_t<std::is_enum_v<E>>> {
    static constexpr ValueKind kind = ValueKind::choice;
    static std::vector<std::string> choices() {
        std::vector<std::string> words;
        for (const auto& [word, value] : EnumNames<E>::get()) words.push_back(word);
        return words;
    }
    static E read(const JobConfig& config, const std::string& key) {
        const std::string& text = config.get(key);
        for (const auto& [word, value] : EnumNames<E>::get())
            if (word == text) return value;
        throw ConfigError("config: bad value '" + text + "' for " + key + " (" + config.source(key) + ")");
    }
};

namespace keys_detail {

template <class T, class = void> struct has_choices : std::false_type {};
template <class T> struct has_choices<T, std::void_t<decltype(KeyType<T>::choices())>> : std::true_type {};
template <class T> struct has_choices<std::optional<T>, void> : has_choices<T> {};

template <class T> std::vector<std::string> choices_of() {
    if constexpr (has_choices<T>::value) {
        if constexpr (std::is_enum_v<T>) return KeyType<T>::choices();
        else return KeyType<typename T::value_type>::choices();
    }
    return {};
}

template <class T>
OptionSpec spec(const char* section, const char* name, const char* default_value, const Accepts& accepts,
                const char* meaning) {
    OptionSpec spec{std::string(section) + "." + name, default_value, accepts.kind.value_or(KeyType<T>::kind),
                    meaning, accepts.min, accepts.max, accepts.choices};
    if (spec.choices.empty()) spec.choices = choices_of<T>();
    return spec;
}

template <class T> void read(const JobConfig& config, const char* section, const char* name, Setting<T>& out) {
    out.key = std::string(section) + "." + name;
    out.source = config.has(out.key) ? config.source(out.key) : "default";
    out.value = KeyType<T>::read(config, out.key);
}

// A JobConfig holding the specs' defaults, as a load without any setting would.
inline JobConfig defaults_of(const std::vector<OptionSpec>& specs) {
    std::map<std::string, ConfigValue> values;
    for (const OptionSpec& spec : specs)
        if (!spec.default_value.empty()) values[spec.key] = {spec.default_value, "default"};
    return JobConfig(std::move(values));
}

}  // namespace keys_detail
}  // namespace trainrt

#define TRAINRT_KEY_MEMBER(name, type, default_value, accepts, meaning) ::trainrt::Setting<type> name;
#define TRAINRT_KEY_SPEC(name, type, default_value, accepts, meaning) \
    ::trainrt::keys_detail::spec<type>(section_name, #name, default_value, accepts, meaning),
#define TRAINRT_KEY_READ(name, type, default_value, accepts, meaning) \
    ::trainrt::keys_detail::read(config, section_name, #name, out.name);
#define TRAINRT_KEY_VISIT(name, type, default_value, accepts, meaning) visitor(#name, name);
#define TRAINRT_KEY_NAME(name, type, default_value, accepts, meaning) \
    static std::string name##_key() { return std::string(section_name) + "." #name; }

// Defines struct `Struct` with one Setting<type> member per line of LIST, `specs()` (the keys'
// OptionSpecs, in declaration order), `read(config)` (a loaded, validated JobConfig), `defaults()`
// `visit(visitor)` (visitor("name", setting) per key, in order) and, per key, `<name>_key()`
// ("section.name", for code that must name a key).
#define TRAINRT_KEYS(Struct, section, LIST)                                              \
    struct Struct {                                                                      \
        static constexpr const char* section_name = section;                             \
        LIST(TRAINRT_KEY_MEMBER)                                                         \
        LIST(TRAINRT_KEY_NAME)                                                           \
        static std::vector<::trainrt::OptionSpec> specs() { return {LIST(TRAINRT_KEY_SPEC)}; } \
        static Struct read(const ::trainrt::JobConfig& config) {                         \
            Struct out;                                                                  \
            LIST(TRAINRT_KEY_READ)                                                       \
            return out;                                                                  \
        }                                                                                \
        static Struct defaults() { return read(::trainrt::keys_detail::defaults_of(specs())); } \
        template <class Visitor> void visit(Visitor&& visitor) const { LIST(TRAINRT_KEY_VISIT) } \
    }
