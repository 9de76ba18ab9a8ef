#include "comm/strings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::comm {

std::string broadcast_string(Communicator& comm, std::string text, int root) {
    std::int64_t length = static_cast<std::int64_t>(text.size());
    comm.broadcast(&length, sizeof length, root);
    text.resize(static_cast<std::size_t>(length));
    if (length > 0) comm.broadcast(text.data(), text.size(), root);
    return text;
}

std::vector<std::string> allgather_strings(Communicator& comm, const std::string& text) {
    const std::int64_t longest = comm.allreduce_value<std::int64_t>(
        static_cast<std::int64_t>(text.size()), ReduceOp::max);
    const std::size_t slot = static_cast<std::size_t>(longest) + sizeof(std::int64_t);
    std::vector<char> mine(slot, '\0'), all(slot * static_cast<std::size_t>(comm.size()));
    const std::int64_t length = static_cast<std::int64_t>(text.size());
    std::copy_n(reinterpret_cast<const char*>(&length), sizeof length, mine.data());
    std::copy(text.begin(), text.end(), mine.begin() + sizeof length);
    comm.allgather(mine.data(), all.data(), slot);
    std::vector<std::string> strings;
    for (int r = 0; r < comm.size(); ++r) {
        const char* start = all.data() + slot * static_cast<std::size_t>(r);
        std::int64_t size = 0;
        std::copy_n(start, sizeof size, reinterpret_cast<char*>(&size));
        strings.emplace_back(start + sizeof size, static_cast<std::size_t>(size));
    }
    return strings;
}

}  // namespace trainrt::comm
