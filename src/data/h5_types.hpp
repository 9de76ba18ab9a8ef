#pragma once
// Column types <-> HDF5 types. Files hold little-endian standard types (binary16 as an IEEE
// float type of 2 bytes, the way h5py writes numpy's float16); memory holds native ones.
#include <optional>
#include <string>

#include "h5/h5.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

h5::Datatype memory_type(ColumnType type);  // native byte order
h5::Datatype file_type(ColumnType type);    // little-endian

// The column type that holds `type`'s values exactly: the type itself, or a wider one for the
// unsigned integers trainrt does not store (u16 -> i32, u32 -> i64; bool -> u8). nullopt with
// `why` set for anything else (u64, strings, compounds, ...).
std::optional<ColumnType> column_type_for(hid_t type, std::string& why);

}  // namespace trainrt::data
