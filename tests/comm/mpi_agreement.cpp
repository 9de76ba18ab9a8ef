// comm::agree: one collective outcome for a step that fails on some ranks. Every error domain
// raised on rank 1 only must leave every rank with that domain's class, domain and exit code.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "comm/agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using Catch::Matchers::Contains;

namespace {

std::unique_ptr<Communicator> world() { return comm::make_mpi_communicator(MPI_COMM_WORLD); }

struct Domain {
    std::function<void(const std::string&)> raise;
    const std::type_info& type;
    int exit_code;
    std::string domain;
};

template <class E>
Domain domain_of(int code, const char* name) {
    return {[](const std::string& message) { throw E(message); }, typeid(E), code, name};
}

// A plugin's own error class: agreement cannot know its C++ type, but keeps domain and code.
class PluginError : public Error {
public:
    using Error::Error;
    int exit_code() const noexcept override { return 42; }
    const char* domain() const noexcept override { return "plugin"; }
};

}  // namespace

TEST_CASE("agree: no rank failed -> every rank returns", "[agreement]") {
    auto comm = world();
    CHECK_NOTHROW(comm::agree(*comm, nullptr));
    CHECK_NOTHROW(comm::agree(*comm, comm::attempt([] {}), "a step"));
}

TEST_CASE("agree: each error domain raised on rank 1 only reaches every rank intact", "[agreement]") {
    auto comm = world();
    REQUIRE(comm->size() >= 2);
    const std::vector<Domain> domains = {
        domain_of<ConfigError>(2, "config"),       domain_of<LaunchError>(3, "launch"),
        domain_of<CommError>(4, "comm"),           domain_of<StorageError>(5, "storage"),
        domain_of<H5Error>(5, "hdf5"),             domain_of<DataError>(6, "data"),
        domain_of<WorkloadError>(7, "workload"),   domain_of<CheckpointError>(8, "checkpoint"),
        domain_of<FailureLimitError>(10, "failure"), domain_of<Error>(1, "error"),
    };
    for (const Domain& d : domains) {
        INFO("domain " << d.domain);
        const std::exception_ptr local =
            comm::attempt([&] { if (comm->rank() == 1) d.raise("the cause, on rank 1 only"); });
        try {
            comm::agree(*comm, local);
            FAIL_CHECK("agree returned although rank 1 failed");
        } catch (const Error& error) {
            CHECK(typeid(error) == d.type);
            CHECK(error.exit_code() == d.exit_code);
            CHECK(std::string(error.domain()) == d.domain);
            CHECK(error.on_all_ranks());
            CHECK(std::string(error.what()) == "on rank 1: the cause, on rank 1 only");
        }
    }
}

TEST_CASE("agree: the lowest failing rank's error wins, with `what` named", "[agreement]") {
    auto comm = world();
    const int last = comm->size() - 1;
    const std::exception_ptr local = comm::attempt([&] {
        if (comm->rank() == 1) throw CheckpointError("checkpoint from rank 1");
        if (comm->rank() == last) throw DataError("data from the last rank");
    });
    try {
        comm::agree(*comm, local, "saving");
        FAIL_CHECK("agree returned");
    } catch (const CheckpointError& error) {
        CHECK(std::string(error.what()) == "saving failed on rank 1: checkpoint from rank 1");
        CHECK(error.exit_code() == 8);
    }
}

TEST_CASE("agree: rank 0's error keeps its message; foreign and non-trainrt exceptions", "[agreement]") {
    auto comm = world();
    try {
        comm::agree(*comm, comm::attempt([&] { if (comm->rank() == 0) throw StorageError("disk full"); }));
        FAIL_CHECK("agree returned");
    } catch (const StorageError& error) {
        CHECK(std::string(error.what()) == "disk full");
    }
    try {
        comm::agree(*comm, comm::attempt([&] { if (comm->rank() == 1) throw PluginError("custom"); }));
        FAIL_CHECK("agree returned");
    } catch (const Error& error) {
        CHECK(error.exit_code() == 42);
        CHECK(std::string(error.domain()) == "plugin");
    }
    try {
        comm::agree(*comm, comm::attempt([&] { if (comm->rank() == 1) throw std::logic_error("a bug"); }));
        FAIL_CHECK("agree returned");
    } catch (const Error& error) {
        CHECK(error.exit_code() == 1);
        CHECK_THAT(std::string(error.what()), Contains("internal error: a bug"));
    }
}
