#pragma once
// What every `trainrt data import` shares: the output options, and how rows are assigned to
// splits (--split train=0.8,test=0.2 with --seed, or --split train=a.csv,test=b.csv).
#include <cstdint>
#include <string>
#include <vector>

#include "data/epoch_order.hpp"

namespace trainrt::data {

class ColumnWriter;

struct ImportOptions {
    std::string out;
    std::string name;           // the dataset's name attribute ("" = the importer's default: dataset_name)
    std::string split = "";     // "" = every row in "train"
    std::uint64_t seed = 0;
    int compression = 0;        // gzip level, 0 = none
    std::string label;          // the label column ("" = none)
};

// Splits by fraction of the rows, or by input file.
struct SplitPlan {
    std::vector<std::string> names;         // in the order given
    std::vector<double> fractions;          // fraction mode: one per name
    std::vector<std::size_t> file_split;    // file mode: the split of each input file
    bool by_file() const { return !file_split.empty(); }
};

// Parses --split for `inputs` (the input files, in order). DataError (exit 6) on a bad spec:
// unknown form, fractions that do not sum to 1, a file in no split or named twice, bad names.
SplitPlan parse_split(const std::string& spec, const std::vector<std::string>& inputs);

// Fraction mode: row r (0-based over all inputs) goes to the split that its position in a
// permutation drawn from `seed` falls in; each split gets floor(fraction * N) rows, the
// remainder going to the first splits, and keeps the rows in input order.
class RowAssigner {
public:
    RowAssigner(const SplitPlan& plan, std::uint64_t rows, std::uint64_t seed);
    std::size_t split_of(std::uint64_t row) const;
    const std::vector<std::uint64_t>& counts() const { return counts_; }

private:
    EpochOrder order_;
    std::vector<std::uint64_t> counts_, ends_;
};

// Rows of each split for a plan: fractions of `total`, or the sum of each split's files' rows.
// DataError naming the split when one would be empty.
std::vector<std::uint64_t> split_counts(const SplitPlan& plan, const std::vector<std::uint64_t>& file_rows,
                                        std::uint64_t seed);

// A name HDF5 and users can both use: letters, digits, '_', '-', '.'; not "." or "..".
bool valid_name(const std::string& name);

// The dataset's name attribute: --name, else `fallback`, else the output file's stem.
std::string dataset_name(const ImportOptions& options, const std::string& fallback = "");

// The items of a list, empty ones kept ("a,,b" is a, "", b; "" is one empty item), so that the
// caller can refuse them with its option's name.
std::vector<std::string> split_list(const std::string& text, char separator = ',');

// "NAME=VALUE" as {NAME, VALUE}; text without '=' as {"", text}.
struct NamedValue {
    std::string name;
    std::string value;
};
NamedValue split_named(const std::string& text);

// A column an importer is about to write, for the checks every importer of arrays makes.
struct PlannedColumn {
    std::string name;
    std::string where;      // where it comes from, for messages: FILE, FILE[key], FILE:/path
    std::string rename;     // how a user renames it: "NAME=FILE.npy", "NAME=/path", ...
    std::uint64_t rows = 0; // its first dimension
    std::size_t split = 0;  // columns are compared within a split (by-file mode); else all are 0
};

// DataError (exit 6) naming the column for a name that is not valid_name, no rows, a name twice
// in a split, or a split whose columns differ in rows.
void check_columns(const std::vector<PlannedColumn>& columns);

// Appends `count` rows of `row_bytes` each, input rows first_row..first_row + count - 1, each to
// the writer of the split `assigner` gives it (runs of one split in one append).
void append_rows(const std::vector<ColumnWriter*>& writers, const RowAssigner& assigner, std::uint64_t first_row,
                 const std::byte* rows, std::uint64_t count, std::size_t row_bytes);

}  // namespace trainrt::data
