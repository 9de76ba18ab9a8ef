#pragma once
// Moving strings between ranks (error messages, small JSON records) over any Communicator.
#include <string>
#include <vector>

#include "trainrt/comm.hpp"

namespace trainrt::comm {

// Every rank returns root's `text`.
std::string broadcast_string(Communicator& comm, std::string text, int root);
// Every rank returns all ranks' strings, by rank.
std::vector<std::string> allgather_strings(Communicator& comm, const std::string& text);

// Collective agreement on a step that may fail on some ranks: returns normally when every rank's
// `local_error` is empty; otherwise every rank learns the lowest failing rank and its message and
// throws `Error` (type E) "<what> failed on rank R: <message>".
template <class E>
void agree_or_throw(Communicator& comm, const std::string& local_error, const std::string& what);

}  // namespace trainrt::comm
