#pragma once
// Datatypes: copies of HDF5's predefined types, the types trainrt builds (fixed-length strings,
// binary16, compounds) and what a type says of itself (class, size, sign, enum and compound
// members). A failed call is an H5Error naming the HDF5 call, `what` and HDF5's own text.
#include <cstddef>
#include <string>
#include <vector>

#include "h5/h5.hpp"

namespace trainrt::h5 {

// A modifiable copy of `type` (predefined types such as H5T_NATIVE_INT64 cannot be modified).
Datatype copy_type(hid_t type, const std::string& what);
// A fixed-length C string of `bytes` bytes, NUL-terminated (NUL-padded) in the file.
Datatype string_type(std::size_t bytes, const std::string& what);
// IEEE binary16 (1 sign, 5 exponent bits with bias 15, 10 mantissa bits) in the byte order of
// `float_type`, a floating-point type.
Datatype float16_type(hid_t float_type, const std::string& what);

// One member of a compound type: its name, its byte offset in an element, its type.
struct CompoundMember {
    std::string name;
    std::size_t offset = 0;
    hid_t type = -1;
};
// A compound type of `size` bytes per element holding `members`, which must not overlap and must
// fit in `size`; the member types are copied, so they may be closed afterwards.
Datatype compound_type(std::size_t size, const std::vector<CompoundMember>& members, const std::string& what);

H5T_class_t type_class(hid_t type, const std::string& what);
std::size_t type_size(hid_t type, const std::string& what);  // bytes of one element
H5T_sign_t type_sign(hid_t type, const std::string& what);   // of an integer type
bool same_type(hid_t a, hid_t b, const std::string& what);   // the same type, not only the same class

// The members of an enum or compound type, numbered from 0.
unsigned member_count(hid_t type, const std::string& what);
std::string member_name(hid_t type, unsigned member, const std::string& what);
Datatype member_type(hid_t type, unsigned member, const std::string& what);  // of a compound's member
// Copies the value of an enum's member into `value`, which must hold type_size(type) bytes (the
// value in the enum's base type).
void enum_member_value(hid_t type, unsigned member, void* value, const std::string& what);
// The type an enum is based on (or an array's element type, a variable-length sequence's).
Datatype base_type(hid_t type, const std::string& what);

}  // namespace trainrt::h5
