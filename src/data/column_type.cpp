// Column types of the public API (trainrt/data.hpp): sizes, names, binary16 conversion.
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "trainrt/data.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

std::size_t column_type_size(ColumnType type) {
    switch (type) {
        case ColumnType::u8: case ColumnType::i8: return 1;
        case ColumnType::i16: case ColumnType::f16: return 2;
        case ColumnType::i32: case ColumnType::f32: return 4;
        case ColumnType::i64: case ColumnType::f64: return 8;
    }
    return 0;
}

const char* column_type_name(ColumnType type) {
    switch (type) {
        case ColumnType::u8: return "u8";
        case ColumnType::i8: return "i8";
        case ColumnType::i16: return "i16";
        case ColumnType::i32: return "i32";
        case ColumnType::i64: return "i64";
        case ColumnType::f16: return "f16";
        case ColumnType::f32: return "f32";
        case ColumnType::f64: return "f64";
    }
    return "?";
}

float float16::to_float() const {
    const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu, mantissa = bits & 0x3FFu;
    if (exponent == 0x1F)  // infinity or NaN
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    if (exponent != 0)
        return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal or zero
    return sign ? -magnitude : magnitude;
}

float16 float16::from_float(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return {static_cast<std::uint16_t>(sign | 0x7E00u)};  // NaN
    if (magnitude >= 0x477FF000u) return {static_cast<std::uint16_t>(sign | 0x7C00u)}; // overflow: inf
    if (magnitude < 0x38800000u) {  // below the smallest normal half: a subnormal, rounded
        const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // 2^24
        return {static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)))};
    }
    // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
    std::uint32_t half = ((magnitude - 0x38000000u) >> 13);
    const std::uint32_t rest = magnitude & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return {static_cast<std::uint16_t>(sign | half)};
}

std::size_t ColumnInfo::sample_bytes() const {
    std::size_t bytes = column_type_size(type);
    for (std::size_t d : sample_shape) bytes *= d;
    return bytes;
}

}  // namespace trainrt
