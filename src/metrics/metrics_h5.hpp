#pragma once
// <run dir>/metrics.h5 (schema: hdf5_schemas/metrics.md): one compound dataset /metrics that
// grows by one row per report, written by rank 0 in HDF5's SWMR mode so that readers can open it
// while the job runs, and a kill at any instant leaves a file that opens (h5py: swmr=True) and
// holds every row that was flushed; append() returns after its row was flushed to the file.
// The table's layout never changes in place: a row that does not fit is handled by rebuild()
// (temporary file + rename) from result.jsonl, the run's log of record.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrics/table_schema.hpp"

namespace trainrt::metrics {

inline constexpr int metrics_h5_version = 1;
inline constexpr std::size_t tag_bytes = 64;  // fixed-length tag strings (longer ones are cut)

class MetricsH5 {
public:
    ~MetricsH5();
    MetricsH5(const MetricsH5&) = delete;
    MetricsH5& operator=(const MetricsH5&) = delete;

    // Opens an existing file for appending when its table has exactly `schema` and `rows` rows;
    // nullptr otherwise, with the reason in `problem` ("" when it merely differs).
    static std::unique_ptr<MetricsH5> open_matching(const std::string& path, const TableSchema& schema,
                                                    std::size_t rows, std::string& problem);
    // Writes `rows` into a new file that replaces `path` atomically, then opens it for appending.
    static std::unique_ptr<MetricsH5> rebuild(const std::string& path, const TableSchema& schema,
                                              const std::vector<Row>& rows);
    void append(const Arranged& row);  // in the columns of the table's schema
    std::uint64_t rows() const { return rows_; }

    struct Handles;

private:
    MetricsH5(std::unique_ptr<Handles> handles, TableSchema schema, std::uint64_t rows);
    std::unique_ptr<Handles> handles_;
    TableSchema schema_;
    std::uint64_t rows_ = 0;
};

// "" when `path` opens (as a SWMR reader: also while a job writes it or after a crash) and holds
// a /metrics table; otherwise what is wrong, in one line.
std::string metrics_h5_problem(const std::string& path);

}  // namespace trainrt::metrics
