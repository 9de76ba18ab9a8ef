#pragma once
// What every `trainrt data import` shares: the output options, and how rows are assigned to
// splits (--split train=0.8,test=0.2 with --seed, or --split train=a.csv,test=b.csv).
#include <cstdint>
#include <string>
#include <vector>

#include "data/epoch_order.hpp"

namespace trainrt::data {

struct ImportOptions {
    std::string out;
    std::string name;           // the dataset's name attribute ("" = the output's stem)
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

std::string default_name(const std::string& out);  // the output file's stem

}  // namespace trainrt::data
