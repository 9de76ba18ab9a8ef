// Batch and BatchColumn (trainrt/data.hpp): a rank's part of a global batch, column by column.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/data.hpp"
#include "trainrt/error.hpp"

namespace trainrt {
namespace {

std::size_t element_count(const std::vector<std::size_t>& shape) {
    std::size_t count = 1;
    for (std::size_t d : shape) count *= d;
    return count;
}

}  // namespace

BatchColumn::BatchColumn(ColumnType type, std::vector<std::size_t> shape) { reset(type, std::move(shape)); }

void BatchColumn::reset(ColumnType type, std::vector<std::size_t> shape) {
    type_ = type;
    shape_ = std::move(shape);
    bytes_.resize(element_count(shape_) * column_type_size(type));
}

const BatchColumn& Batch::typed(const std::string& name, ColumnType wanted) const {
    const BatchColumn& found = column(name);
    if (found.type() != wanted)
        throw DataError(fmt::format("data: batch column '{}' is {}, viewed as {}; view it as its own type (or "
                                    "copy_to() to convert)", name, column_type_name(found.type()),
                                    column_type_name(wanted)));
    return found;
}

void BatchColumn::check_type(ColumnType wanted) const {
    if (wanted != type_)
        throw DataError(fmt::format("data: a batch column of type {} viewed as {}; view it as its own type",
                                    column_type_name(type_), column_type_name(wanted)));
}

namespace {

template <class In, class Out> void convert(const std::byte* in, std::size_t count, Out* out) {
    for (std::size_t i = 0; i < count; ++i) {
        In value;
        std::memcpy(&value, in + i * sizeof(In), sizeof(In));
        if constexpr (std::is_same_v<In, float16>) out[i] = static_cast<Out>(value.to_float());
        else out[i] = static_cast<Out>(value);
    }
}

template <class Out> void convert_column(ColumnType type, const std::byte* in, std::size_t count, Out* out) {
    switch (type) {
        case ColumnType::u8: return convert<std::uint8_t>(in, count, out);
        case ColumnType::i8: return convert<std::int8_t>(in, count, out);
        case ColumnType::i16: return convert<std::int16_t>(in, count, out);
        case ColumnType::i32: return convert<std::int32_t>(in, count, out);
        case ColumnType::i64: return convert<std::int64_t>(in, count, out);
        case ColumnType::f16: return convert<float16>(in, count, out);
        case ColumnType::f32: return convert<float>(in, count, out);
        case ColumnType::f64: return convert<double>(in, count, out);
    }
}

}  // namespace

void BatchColumn::copy_to(float* out) const { convert_column(type_, bytes_.data(), elements(), out); }
void BatchColumn::copy_to(double* out) const { convert_column(type_, bytes_.data(), elements(), out); }
void BatchColumn::copy_to(std::int64_t* out) const { convert_column(type_, bytes_.data(), elements(), out); }

bool Batch::has(const std::string& name) const {
    return std::any_of(columns_.begin(), columns_.end(), [&](const auto& c) { return c.first == name; });
}

std::vector<std::string> Batch::column_names() const {
    std::vector<std::string> names;
    for (const auto& column : columns_) names.push_back(column.first);
    return names;
}

const BatchColumn& Batch::column(const std::string& name) const {
    for (const auto& column : columns_)
        if (column.first == name) return column.second;
    throw DataError(fmt::format("data: the batch has no column '{}' (it has: {})", name, fmt::join(column_names(), ", ")));
}

BatchColumn& Batch::column(const std::string& name) {
    return const_cast<BatchColumn&>(static_cast<const Batch&>(*this).column(name));
}

BatchColumn& Batch::set(const std::string& name, ColumnType type, std::vector<std::size_t> shape) {
    for (auto& column : columns_)
        if (column.first == name) {
            column.second.reset(type, std::move(shape));
            return column.second;
        }
    columns_.emplace_back(name, BatchColumn(type, std::move(shape)));
    return columns_.back().second;
}

void Batch::erase(const std::string& name) {
    columns_.erase(std::remove_if(columns_.begin(), columns_.end(), [&](const auto& c) { return c.first == name; }),
                   columns_.end());
}

const char* shuffle_name(Shuffle shuffle) {
    switch (shuffle) {
        case Shuffle::none: return "none";
        case Shuffle::global: return "global";
        case Shuffle::blocks: return "blocks";
    }
    return "?";
}

}  // namespace trainrt
