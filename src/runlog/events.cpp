#include "runlog/events.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "runlog/clock.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runlog {
namespace {

using Json = nlohmann::ordered_json;

template <class T> constexpr const char* kind_name();
template <> constexpr const char* kind_name<StartEvent>() { return "start"; }
template <> constexpr const char* kind_name<CheckpointEvent>() { return "checkpoint"; }
template <> constexpr const char* kind_name<RestoreEvent>() { return "restore"; }
template <> constexpr const char* kind_name<StopEvent>() { return "stop"; }
template <> constexpr const char* kind_name<RequeueEvent>() { return "requeue"; }
template <> constexpr const char* kind_name<RelaunchEvent>() { return "relaunch"; }
template <> constexpr const char* kind_name<FailureEvent>() { return "failure"; }
template <> constexpr const char* kind_name<FinishEvent>() { return "finish"; }

template <class T> Json optional_json(const std::optional<T>& value) { return value ? Json(*value) : Json(); }

// ------------------------------------------------------------------ writing: one function per kind

Json fields_of(const StartEvent& e) {
    return {{"hosts", e.hosts}, {"launcher", e.launcher}, {"workload", e.workload}, {"reason", e.reason},
            {"step", nullptr}, {"last_end", e.last_end}, {"failures", e.failures}, {"max_failures", e.max_failures},
            {"launched", e.launched ? Json(format_time(*e.launched)) : Json(nullptr)}};
}
Json fields_of(const CheckpointEvent& e) {
    return {{"checkpoint", e.checkpoint}, {"iteration", e.iteration}, {"rank0_bytes", e.rank0_bytes},
            {"stall_s", e.stall_s}, {"async", e.async}};
}
Json fields_of(const RestoreEvent& e) {
    Json fields = {{"checkpoint", e.checkpoint}, {"iteration", e.iteration}, {"step", e.iteration},
                   {"written_by_ranks", e.written_by_ranks}, {"superseded_rows", e.superseded_rows}};
    if (e.copied_from) fields["copied_from"] = *e.copied_from;
    if (e.level) fields["level"] = *e.level;
    return fields;
}
Json fields_of(const StopEvent& e) {
    Json fields = {{"reason", e.reason}, {"step", e.step}, {"checkpoint", optional_json(e.checkpoint)},
                   {"boundary", e.boundary}, {"boundaries_by_rank", e.boundaries_by_rank},
                   {"request_to_commit_s", e.request_to_commit_s}};
    if (e.signal) fields["signal"] = *e.signal;
    if (e.signal_rank) fields["signal_rank"] = *e.signal_rank;
    return fields;
}
Json fields_of(const RequeueEvent& e) { return {{"by", e.by}, {"step", e.step}, {"reason", e.reason}}; }
Json fields_of(const RelaunchEvent& e) {
    Json fields = {{"failures", e.failures}, {"max_failures", e.max_failures}, {"exit_code", e.exit_code},
                   {"excluded_nodes", e.excluded_nodes}, {"reason", e.reason}};
    if (!e.took_over_from.empty()) fields["took_over_from"] = e.took_over_from;
    return fields;
}
Json fields_of(const FailureEvent& e) {
    Json fields = Json::object();
    if (e.rank) fields["rank"] = *e.rank;
    if (e.final) fields["final"] = true;
    fields["reason"] = e.reason;
    if (!e.phase.empty()) fields["phase"] = e.phase;
    if (e.exit_code) fields["exit_code"] = *e.exit_code;
    if (e.failures) fields["failures"] = *e.failures;
    fields["message"] = e.message;
    return fields;
}
Json fields_of(const FinishEvent& e) { return {{"iterations", e.iterations}, {"step", e.iterations}}; }

// ------------------------------------------------------------------ reading

// A record's fields, read with their types checked: a field of the wrong type reads as absent
// and leaves a warning.
class Fields {
public:
    Fields(const Json& object, std::string where, std::vector<std::string>& warnings)
        : object_(object), where_(std::move(where)), warnings_(warnings) {}

    const Json* find(const char* key) const {
        auto found = object_.find(key);
        return found == object_.end() || found->is_null() ? nullptr : &*found;
    }
    bool wrong(const char* key, const char* expected) const {
        warnings_.push_back(fmt::format("{}: field '{}' is not {}: skipped", where_, key, expected));
        return false;
    }
    bool read(const char* key, std::string& out) const {
        const Json* value = find(key);
        if (value == nullptr) return false;
        if (!value->is_string()) return wrong(key, "a string");
        out = value->get<std::string>();
        return true;
    }
    template <class T> bool read(const char* key, T& out) const requires std::is_arithmetic_v<T> {
        const Json* value = find(key);
        if (value == nullptr) return false;
        if (std::is_same_v<T, bool> ? !value->is_boolean() : !value->is_number()) return wrong(key, "a number");
        out = value->get<T>();
        return true;
    }
    template <class T> void read(const char* key, std::optional<T>& out) const {
        T value{};
        if (read(key, value)) out = value;
    }
    template <class T> void read(const char* key, std::vector<T>& out) const {
        const Json* value = find(key);
        if (value == nullptr) return;
        try {
            out = value->get<std::vector<T>>();
        } catch (const nlohmann::json::exception&) {
            wrong(key, "a list of the right type");
        }
    }

private:
    const Json& object_;
    std::string where_;
    std::vector<std::string>& warnings_;
};

void read_body(const Fields& f, StartEvent& e) {
    f.read("hosts", e.hosts), f.read("launcher", e.launcher), f.read("workload", e.workload);
    f.read("reason", e.reason), f.read("last_end", e.last_end), f.read("failures", e.failures);
    f.read("max_failures", e.max_failures);
    std::string launched;
    if (f.read("launched", launched)) e.launched = parse_time(launched);
}
void read_body(const Fields& f, CheckpointEvent& e) {
    f.read("checkpoint", e.checkpoint), f.read("iteration", e.iteration), f.read("rank0_bytes", e.rank0_bytes);
    f.read("stall_s", e.stall_s), f.read("async", e.async);
}
void read_body(const Fields& f, RestoreEvent& e) {
    f.read("checkpoint", e.checkpoint), f.read("iteration", e.iteration);
    f.read("written_by_ranks", e.written_by_ranks), f.read("superseded_rows", e.superseded_rows);
    f.read("copied_from", e.copied_from), f.read("level", e.level);
}
void read_body(const Fields& f, StopEvent& e) {
    f.read("reason", e.reason), f.read("step", e.step), f.read("checkpoint", e.checkpoint);
    f.read("boundary", e.boundary), f.read("boundaries_by_rank", e.boundaries_by_rank);
    f.read("request_to_commit_s", e.request_to_commit_s), f.read("signal", e.signal);
    f.read("signal_rank", e.signal_rank);
}
void read_body(const Fields& f, RequeueEvent& e) { f.read("by", e.by), f.read("step", e.step), f.read("reason", e.reason); }
void read_body(const Fields& f, RelaunchEvent& e) {
    f.read("failures", e.failures), f.read("max_failures", e.max_failures), f.read("exit_code", e.exit_code);
    f.read("excluded_nodes", e.excluded_nodes), f.read("reason", e.reason), f.read("took_over_from", e.took_over_from);
}
void read_body(const Fields& f, FailureEvent& e) {
    f.read("rank", e.rank), f.read("message", e.message), f.read("reason", e.reason);
    f.read("exit_code", e.exit_code), f.read("phase", e.phase), f.read("final", e.final);
    f.read("failures", e.failures);
}
void read_body(const Fields& f, FinishEvent& e) { f.read("iterations", e.iterations); }

template <class T>
bool try_kind(const std::string& kind, const Fields& fields, EventBody& body) {
    if (kind != kind_name<T>()) return false;
    T typed;
    read_body(fields, typed);
    body = std::move(typed);
    return true;
}

template <class... T>
bool body_of(const std::string& kind, const Fields& fields, EventBody& body, std::variant<T...>*) {
    return (try_kind<T>(kind, fields, body) || ...);
}

// The common fields; job_id may have been written as a number (kept as its text).
void read_common(const Json& line, const Fields& fields, Event& event) {
    if (fields.read("time", event.time_text)) {
        event.time = parse_time(event.time_text);
        if (!event.time) fields.wrong("time", "a time like 2026-11-22T09:15:00.123Z");
    }
    const Json* job = fields.find("job_id");
    if (job != nullptr) event.job_id = job->is_string() ? job->get<std::string>() : job->dump();
    fields.read("restart_count", event.restart_count);
    fields.read("world_size", event.world_size);
    (void)line;
}

std::optional<Event> parse_line(const Json& line, const std::string& where, std::vector<std::string>& warnings) {
    if (!line.is_object()) {
        warnings.push_back(where + ": not a JSON object (a torn or foreign line): skipped");
        return std::nullopt;
    }
    const auto kind_field = line.find("event");
    if (kind_field == line.end() || !kind_field->is_string()) {
        warnings.push_back(where + ": no event kind (a string 'event' field): skipped");
        return std::nullopt;
    }
    const std::string kind = kind_field->get<std::string>();
    Fields fields(line, where, warnings);
    Event event;
    if (!body_of(kind, fields, event.body, static_cast<EventBody*>(nullptr))) {
        warnings.push_back(fmt::format("{}: unknown event kind '{}': skipped", where, kind));
        return std::nullopt;
    }
    read_common(line, fields, event);
    return event;
}

}  // namespace

const char* Event::kind() const {
    return std::visit([](const auto& typed) { return kind_name<std::decay_t<decltype(typed)>>(); }, body);
}

Json to_json(const EventBody& body, const Context& context, double time) {
    Json line = {{"event", std::visit([](const auto& typed) { return kind_name<std::decay_t<decltype(typed)>>(); }, body)},
                 {"time", format_time(time)},
                 {"job_id", context.job_id},
                 {"restart_count", context.restart_count},
                 {"world_size", context.world_size}};
    line.update(std::visit([](const auto& typed) { return fields_of(typed); }, body));
    return line;
}

void append(const std::string& run_dir, const Context& context, const EventBody& body) {
    storage::append_line(path_in(run_dir, kEvents), to_json(body, context, now_seconds()).dump());
}

EventLog parse_events(const std::vector<nlohmann::json>& lines) {
    EventLog log;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::optional<Event> event = parse_line(Json(lines[i]), fmt::format("{} record {}", kEvents, i + 1), log.warnings);
        if (event) log.events.push_back(std::move(*event));
    }
    return log;
}

EventLog read_events(const std::string& run_dir) {
    EventLog log;
    const std::string path = path_in(run_dir, kEvents);
    if (!storage::path_exists(path)) return log;
    std::ifstream in(path);
    if (!in) throw StorageError(fmt::format("cannot read {}: check its permissions", path));
    std::string text;
    for (std::size_t number = 1; std::getline(in, text); ++number) {
        if (text.empty()) continue;
        const std::string where = fmt::format("{} line {}", kEvents, number);
        Json line = Json::parse(text, nullptr, false);
        if (line.is_discarded()) {
            log.warnings.push_back(where + ": not JSON (torn: written while read, or a crash mid-append): skipped");
            continue;
        }
        std::optional<Event> event = parse_line(line, where, log.warnings);
        if (event) log.events.push_back(std::move(*event));
    }
    return log;
}

EventTail::EventTail(std::string run_dir) : path_(path_in(run_dir, kEvents)) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path_, error);
    offset_ = error ? 0 : size;
}

std::vector<Event> EventTail::read_new() {
    std::ifstream in(path_, std::ios::binary);
    if (!in || !in.seekg(static_cast<std::streamoff>(offset_))) return {};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto complete = text.rfind('\n');
    if (complete == std::string::npos) return {};
    offset_ += complete + 1;
    std::vector<nlohmann::json> lines;
    std::istringstream stream(text.substr(0, complete));
    for (std::string line; std::getline(stream, line);) {
        nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
        if (!line.empty() && !parsed.is_discarded()) lines.push_back(std::move(parsed));
    }
    return parse_events(lines).events;
}

int stop_exit_code(const StopEvent& stop) {
    return stop.reason == "signal" && stop.signal == "INT" ? exit_codes::interrupted : exit_codes::stopped;
}

}  // namespace trainrt::runlog
