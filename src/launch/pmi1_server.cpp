#include "launch/pmi1_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::launch::pmi1 {
namespace {

int parse_int(const std::string& text, const char* what) {
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        throw LaunchError(fmt::format("PMI-1 {}='{}' is not an integer", what, text));
    return value;
}

std::string reply(std::vector<Field> fields) { return format_line(fields); }

std::string str(int value) { return std::to_string(value); }

}  // namespace

Server::Server(JobFacts facts, Backend& backend, ErrorLog log)
    : facts_(std::move(facts)), backend_(backend), log_(std::move(log)) {
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        throw LaunchError(fmt::format("launch: PMI-1 server: pipe2 failed: {}",
                                      std::strerror(errno)));
    wake_read_ = UniqueFd(fds[0]);
    wake_write_ = UniqueFd(fds[1]);
    if (!log_) {
        log_ = [rank = facts_.rank](const std::string& what) {
            log::error("PMI-1 server of rank {}: {}", rank, what);
        };
    }
}

ServeEnd Server::serve(int fd) {
    LineReader reader(fd);
    for (;;) {
        while (auto line = reader.take_line()) {
            std::string answer = in_spawn_ ? on_spawn_line(*line) : respond(*line);
            if (aborted_) return ServeEnd::aborted;
            if (!answer.empty()) write_all(fd, answer);
        }
        if (!wait_readable(fd)) return ServeEnd::stopped;
        if (!reader.fill()) return ServeEnd::client_closed;
    }
}

void Server::stop() noexcept {
    const char byte = 1;
    // A full pipe already holds a wake-up; nothing else can fail here that we could handle.
    [[maybe_unused]] ssize_t ignored = ::write(wake_write_.get(), &byte, 1);
}

// True when `fd` has data (or end of file, or an error, which the read then reports).
bool Server::wait_readable(int fd) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    for (;;) {
        int ready = ::poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0)
            throw LaunchError(fmt::format("launch: PMI-1 server: poll failed: {}",
                                          std::strerror(errno)));
        if (fds[1].revents != 0) return false;
        if (fds[0].revents != 0) return true;
    }
}

std::string Server::respond(const std::string& line) {
    try {
        std::string answer = dispatch(parse_line(line));
        if (answer.size() > max_client_line)
            throw LaunchError(fmt::format("reply of {} bytes is too long for the client",
                                          answer.size()));
        return answer;
    } catch (const std::exception& error) {
        return error_reply(fmt::format("{} (request: '{}')", error.what(), line));
    }
}

std::string Server::dispatch(const Message& request) {
    const std::string name = request.command();
    if (request.fields.empty()) return {};  // a blank line asks nothing
    if (name == "init") return on_init(request);
    if (name == "initack") return on_initack(request);
    if (name == "get_maxes")
        return reply({{"cmd", "maxes"}, {"kvsname_max", str(kvsname_max)},
                      {"keylen_max", str(keylen_max)}, {"vallen_max", str(vallen_max)}});
    if (name == "get_appnum") return reply({{"cmd", "appnum"}, {"appnum", str(facts_.appnum)}});
    if (name == "get_my_kvsname")
        return reply({{"cmd", "my_kvsname"}, {"kvsname", facts_.kvsname}});
    if (name == "get_universe_size")
        return reply({{"cmd", "universe_size"}, {"size", str(facts_.universe_size)}});
    if (name == "put") return on_put(request);
    if (name == "get") return on_get(request);
    if (name == "barrier_in") return on_barrier(request);
    if (name == "finalize") return on_finalize();
    if (name == "abort") return on_abort(request);
    if (name == "spawn" && request.find("mcmd")) {
        in_spawn_ = true;
        last_spawn_ = false;
        return {};
    }
    throw LaunchError(fmt::format("unsupported PMI-1 command '{}'", name));
}

std::string Server::on_init(const Message& request) {
    const bool supported = request.find("pmi_version") == "1" &&
                           (request.find("pmi_subversion") == "0" ||
                            request.find("pmi_subversion") == "1");
    return reply({{"cmd", "response_to_init"}, {"pmi_version", "1"}, {"pmi_subversion", "1"},
                  {"rc", supported ? "0" : "-1"}});
}

std::string Server::on_initack(const Message&) {
    return reply({{"cmd", "initack"}}) + reply({{"cmd", "set"}, {"size", str(facts_.size)}}) +
           reply({{"cmd", "set"}, {"rank", str(facts_.rank)}}) +
           reply({{"cmd", "set"}, {"debug", "0"}});
}

std::string Server::on_put(const Message& request) {
    check_kvsname(request);
    backend_.put(request.require("key"), request.require("value"));
    return reply({{"cmd", "put_result"}, {"rc", "0"}, {"msg", "success"}});
}

std::string Server::on_get(const Message& request) {
    check_kvsname(request);
    const std::string key = request.require("key");
    auto value = lookup(key);
    if (!value)
        return reply({{"cmd", "get_result"}, {"rc", "-1"},
                      {"msg", wire_safe(fmt::format("key_{}_not_found", key))}});
    return reply({{"cmd", "get_result"}, {"rc", "0"}, {"msg", "success"}, {"value", *value}});
}

// PMI_process_mapping comes from the backend's topology, not from a put. A value the client
// could not take in whole is reported missing (MPICH then falls back to exchanging hostnames).
std::optional<std::string> Server::lookup(const std::string& key) {
    auto value = key == "PMI_process_mapping" ? backend_.process_mapping() : backend_.get(key);
    if (value && value->size() > client_value_limit) return std::nullopt;
    return value;
}

std::string Server::on_barrier(const Message&) {
    backend_.fence();
    return reply({{"cmd", "barrier_out"}});
}

std::string Server::on_finalize() {
    finalized_.store(true);
    return reply({{"cmd", "finalize_ack"}});
}

std::string Server::on_abort(const Message& request) {
    auto code = request.find("exitcode");
    backend_.abort(code ? parse_int(*code, "exitcode") : 1);
    aborted_ = true;
    return {};
}

// Lines of a spawn request are `key=value` with values that may hold spaces; only the counters
// matter: the client reads one spawn_result after its last block (spawnssofar == totspawns).
std::string Server::on_spawn_line(const std::string& line) {
    if (line.rfind("spawnssofar=", 0) == 0)
        last_spawn_ = line.substr(12) == last_total_spawns_;
    if (line.rfind("totspawns=", 0) == 0) last_total_spawns_ = line.substr(10);
    if (line != "endcmd") return {};
    in_spawn_ = false;
    if (!last_spawn_) return {};
    log_("MPI_Comm_spawn is not supported under the PMIx launcher");
    return reply({{"cmd", "spawn_result"}, {"rc", "-1"}, {"msg", "spawn_not_supported"}});
}

void Server::check_kvsname(const Message& request) const {
    auto name = request.find("kvsname");
    if (name && *name != facts_.kvsname)
        throw LaunchError(fmt::format("unknown kvsname '{}' (this job's is '{}')", *name,
                                      facts_.kvsname));
}

std::string Server::error_reply(const std::string& what) const {
    log_(what);
    std::string msg = wire_safe(what);
    if (msg.size() > 900) msg.resize(900);
    return reply({{"cmd", "error"}, {"rc", "-1"}, {"msg", msg}});
}

}  // namespace trainrt::launch::pmi1
