#pragma once
// The streaming XXH3-64 state every checkpoint checksum is computed with, and its digest as the
// manifest writes it (16 hex digits).
#include <xxhash.h>

#include <memory>
#include <string>

#include <fmt/format.h>

namespace trainrt::checkpoint {

using Xxh3State = std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)>;

inline Xxh3State new_xxh3() {
    Xxh3State state(XXH3_createState(), XXH3_freeState);
    XXH3_64bits_reset(state.get());
    return state;
}

inline std::string hex_digest(XXH3_state_t* state) { return fmt::format("{:016x}", XXH3_64bits_digest(state)); }

}  // namespace trainrt::checkpoint
