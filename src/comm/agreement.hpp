#pragma once
// One way for the ranks to agree on the outcome of a step that may fail on some of them: each
// rank runs its part and keeps what it threw (attempt), then all agree (agree). c10d's Work keeps
// an exception_ptr and rethrows it in wait(); this is the same idea across ranks. Collective
// agreement is what keeps ranks from splitting into failing ones and ones left waiting in the
// next collective.
#include <exception>
#include <string>

#include "trainrt/comm.hpp"

namespace trainrt::comm {

// Runs `step` and returns what it threw; nullptr when it returned.
template <class Step>
std::exception_ptr attempt(Step&& step) noexcept {
    try {
        step();
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

// Collective. Returns on every rank when every rank's `local` is nullptr. Otherwise every rank
// throws the error of the lowest failing rank, with its class, domain and exit code intact
// (ConfigError stays ConfigError, exit 2; H5Error stays H5Error...), marked on_all_ranks(), and
// the same message on every rank:
//   "<what> failed on rank R: <message>"  when `what` is given;
//   "on rank R: <message>"                when not and R > 0;  "<message>" when R = 0.
// An exception outside trainrt::Error travels as an internal error (exit 1).
void agree(Communicator& comm, const std::exception_ptr& local, const std::string& what = "");

}  // namespace trainrt::comm
