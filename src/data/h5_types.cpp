#include "data/h5_types.hpp"

#include <fmt/format.h>

#include "h5/types.hpp"

namespace trainrt::data {
namespace {

hid_t native_id(ColumnType type) {
    switch (type) {
        case ColumnType::u8: return H5T_NATIVE_UINT8;
        case ColumnType::i8: return H5T_NATIVE_INT8;
        case ColumnType::i16: return H5T_NATIVE_INT16;
        case ColumnType::i32: return H5T_NATIVE_INT32;
        case ColumnType::i64: return H5T_NATIVE_INT64;
        case ColumnType::f16: return H5T_NATIVE_FLOAT;
        case ColumnType::f32: return H5T_NATIVE_FLOAT;
        case ColumnType::f64: return H5T_NATIVE_DOUBLE;
    }
    return H5T_NATIVE_UINT8;
}

hid_t little_endian_id(ColumnType type) {
    switch (type) {
        case ColumnType::u8: return H5T_STD_U8LE;
        case ColumnType::i8: return H5T_STD_I8LE;
        case ColumnType::i16: return H5T_STD_I16LE;
        case ColumnType::i32: return H5T_STD_I32LE;
        case ColumnType::i64: return H5T_STD_I64LE;
        case ColumnType::f16: return H5T_IEEE_F32LE;
        case ColumnType::f32: return H5T_IEEE_F32LE;
        case ColumnType::f64: return H5T_IEEE_F64LE;
    }
    return H5T_STD_U8LE;
}

std::optional<ColumnType> integer_column(std::size_t size, bool is_signed, std::string& why) {
    if (is_signed) {
        switch (size) {
            case 1: return ColumnType::i8;
            case 2: return ColumnType::i16;
            case 4: return ColumnType::i32;
            case 8: return ColumnType::i64;
        }
    } else {
        switch (size) {
            case 1: return ColumnType::u8;
            case 2: return ColumnType::i32;
            case 4: return ColumnType::i64;
        }
    }
    why = fmt::format("{}-bit {}signed integers are not stored (u8, i8, i16, i32, i64 are; u16 and u32 are "
                      "widened); convert them to int64 or float64 first", size * 8, is_signed ? "" : "un");
    return std::nullopt;
}

// h5py's bool (numpy's, as .npy bools are stored): an enum over a 1-byte integer whose members are
// FALSE = 0 and TRUE = 1. Stored as u8 like an .npy bool, so a bool column has one type whichever
// importer wrote it; other enums keep their base type.
bool is_bool_enum(hid_t type) {
    if (h5::member_count(type, "enum members") != 2) return false;
    if (h5::type_size(type, "enum") != 1) return false;
    const char* const names[] = {"FALSE", "TRUE"};
    for (unsigned member = 0; member < 2; ++member) {
        unsigned char value = 0;
        h5::enum_member_value(type, member, &value, "enum member");
        if (value > 1 || h5::member_name(type, member, "enum member") != names[value]) return false;
    }
    return true;
}

}  // namespace

h5::Datatype memory_type(ColumnType type) {
    if (type == ColumnType::f16) return h5::float16_type(H5T_NATIVE_FLOAT, "float16");
    return h5::copy_type(native_id(type), column_type_name(type));
}

h5::Datatype file_type(ColumnType type) {
    if (type == ColumnType::f16) return h5::float16_type(H5T_IEEE_F32LE, "float16");
    return h5::copy_type(little_endian_id(type), column_type_name(type));
}

std::optional<ColumnType> column_type_for(hid_t type, std::string& why) {
    const H5T_class_t kind = h5::type_class(type, "type class");
    const std::size_t size = h5::type_size(type, "type size");
    if (kind == H5T_INTEGER) {
        const H5T_sign_t sign = h5::type_sign(type, "type sign");
        return integer_column(size, sign == H5T_SGN_2, why);
    }
    if (kind == H5T_FLOAT) {
        if (size == 2) return ColumnType::f16;
        if (size == 4) return ColumnType::f32;
        if (size == 8) return ColumnType::f64;
        why = fmt::format("{}-byte floats are not stored (f16, f32, f64 are)", size);
        return std::nullopt;
    }
    if (kind == H5T_ENUM) {
        if (is_bool_enum(type)) return ColumnType::u8;
        h5::Datatype base = h5::base_type(type, "enum base");
        return column_type_for(base.get(), why);
    }
    why = "only numeric columns are stored (integers, floats); this one holds strings, compounds or references";
    return std::nullopt;
}

}  // namespace trainrt::data
