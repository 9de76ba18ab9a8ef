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

}  // namespace trainrt::comm
