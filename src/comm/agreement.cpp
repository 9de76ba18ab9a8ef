#include "comm/agreement.hpp"

#include <limits>

#include <fmt/format.h>

#include "comm/strings.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {
namespace {

// A trainrt::Error subclass this table does not know (a plugin's own): its domain and exit code
// survive, its C++ type cannot.
class ForeignError final : public Error {
public:
    ForeignError(const std::string& message, int code, std::string domain)
        : Error(message), code_(code), domain_(std::move(domain)) {}
    int exit_code() const noexcept override { return code_; }
    const char* domain() const noexcept override { return domain_.c_str(); }

private:
    int code_;
    std::string domain_;
};

template <class E>
[[noreturn]] void throw_agreed(const std::string& message) {
    E error(message);
    error.set_on_all_ranks();
    throw error;
}

// Throws the error class whose domain is `domain` (error.hpp's table).
[[noreturn]] void rethrow_as(const std::string& domain, int code, const std::string& message) {
    if (domain == ConfigError::kDomain) throw_agreed<ConfigError>(message);
    if (domain == LaunchError::kDomain) throw_agreed<LaunchError>(message);
    if (domain == CommError::kDomain) throw_agreed<CommError>(message);
    if (domain == H5Error::kDomain) throw_agreed<H5Error>(message);
    if (domain == StorageError::kDomain) throw_agreed<StorageError>(message);
    if (domain == DataError::kDomain) throw_agreed<DataError>(message);
    if (domain == WorkloadError::kDomain) throw_agreed<WorkloadError>(message);
    if (domain == CheckpointError::kDomain) throw_agreed<CheckpointError>(message);
    if (domain == FailureLimitError::kDomain) throw_agreed<FailureLimitError>(message);
    if (domain == Error::kDomain && code == Error::kExitCode) throw_agreed<Error>(message);
    ForeignError error(message, code, domain);
    error.set_on_all_ranks();
    throw error;
}

// "CODE|DOMAIN|MESSAGE" of what `local` holds.
std::string encode(const std::exception_ptr& local) {
    try {
        std::rethrow_exception(local);
    } catch (const Error& error) {
        return fmt::format("{}|{}|{}", error.exit_code(), error.domain(), error.what());
    } catch (const std::exception& error) {
        return fmt::format("{}|{}|internal error: {}", Error::kExitCode, Error::kDomain, error.what());
    } catch (...) {
        return fmt::format("{}|{}|internal error: an exception that is not a std::exception", Error::kExitCode,
                           Error::kDomain);
    }
}

}  // namespace

void agree(Communicator& comm, const std::exception_ptr& local, const std::string& what) {
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    const std::int64_t first = comm.allreduce_value<std::int64_t>(local ? comm.rank() : none, ReduceOp::min);
    if (first == none) return;
    const std::string agreed = broadcast_string(comm, comm.rank() == first ? encode(local) : "", static_cast<int>(first));
    const auto bar = agreed.find('|'), second = agreed.find('|', bar + 1);
    const std::string message = agreed.substr(second + 1);
    rethrow_as(agreed.substr(bar + 1, second - bar - 1), std::stoi(agreed.substr(0, bar)),
               !what.empty() ? fmt::format("{} failed on rank {}: {}", what, first, message)
               : first == 0  ? message
                             : fmt::format("on rank {}: {}", first, message));
}

}  // namespace trainrt::comm
