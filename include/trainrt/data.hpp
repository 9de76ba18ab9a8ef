#pragma once
// Datasets (hdf5_schemas/dataset.md): splits of named columns of any numeric type, read by each
// rank as a stream of batches (Ray Data's iter_batches), or as one whole part (dataset_shard).
//
// The split contract. An epoch has an order of the split's N samples: 0..N-1, or a permutation
// drawn from (run.seed, epoch) (`Shuffle`), the same on every rank and for every world size.
// Global batch k is positions [k * B, min((k + 1) * B, N)) of that order; rank r of n holds the
// positions p with p % n == r (PyTorch's DistributedSampler), so its part of every global batch
// differs from the other ranks' by at most one sample and may be empty (`batch_part`). Global
// batch k means the same samples on any number of ranks: a position saved on N ranks resumes on M.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "trainrt/checkpoint.hpp"
#include "trainrt/config.hpp"

namespace trainrt {

// ---- column types ----

enum class ColumnType { u8, i8, i16, i32, i64, f16, f32, f64 };

// IEEE 754 binary16, as stored (C++20 has no half type): convert with to_float / from_float.
struct float16 {
    std::uint16_t bits = 0;
    float to_float() const;
    static float16 from_float(float value);  // round to nearest even
};

std::size_t column_type_size(ColumnType type);
const char* column_type_name(ColumnType type);  // "u8", "f32", ...

template <class T> constexpr ColumnType column_type_of();
template <> constexpr ColumnType column_type_of<std::uint8_t>() { return ColumnType::u8; }
template <> constexpr ColumnType column_type_of<std::int8_t>() { return ColumnType::i8; }
template <> constexpr ColumnType column_type_of<std::int16_t>() { return ColumnType::i16; }
template <> constexpr ColumnType column_type_of<std::int32_t>() { return ColumnType::i32; }
template <> constexpr ColumnType column_type_of<std::int64_t>() { return ColumnType::i64; }
template <> constexpr ColumnType column_type_of<float16>() { return ColumnType::f16; }
template <> constexpr ColumnType column_type_of<float>() { return ColumnType::f32; }
template <> constexpr ColumnType column_type_of<double>() { return ColumnType::f64; }

// ---- how a global batch splits over the ranks ----

// Rank `rank`'s part of global batch `k`: positions [k * batch, min((k + 1) * batch, real)) of the
// epoch's order that its strided shard holds. `mean_over` = the block's samples / ranks: a sum over
// the local samples divided by it, then averaged over the ranks, is the block's mean (a rank with
// more samples weighs more). With `ranks` dividing `batch` and `real`, count == mean_over ==
// batch / ranks for every full block: the even split.
struct BatchPart {
    std::size_t first = 0;  // index into this rank's shard (its positions r, r + n, ...)
    std::size_t count = 0;  // samples; 0 when the block has fewer samples than there are ranks
    double mean_over = 0.0;
};

// Global batches per epoch: ceil(real / batch). DataError when `batch` is 0.
std::size_t global_batches(std::size_t real, std::size_t batch);

// Rank `rank`'s part of global batch `k` (k < global_batches(real, batch)); DataError otherwise.
BatchPart batch_part(std::size_t k, std::size_t real, std::size_t batch, int ranks, int rank);

// ---- streaming: session.dataset(split) ----

enum class Shuffle {
    none,    // positions in file order: each rank reads one strided run per batch
    global,  // a true permutation of the split; reads grouped per prefetch window, in file order
    blocks,  // chunk-sized blocks of consecutive samples permuted, then samples shuffled inside a
             // window of `shuffle_buffer` samples: long sequential reads, less randomness
};
const char* shuffle_name(Shuffle shuffle);

struct ColumnInfo {
    std::string name;
    ColumnType type = ColumnType::u8;
    std::vector<std::size_t> sample_shape;  // {} for a scalar per sample
    std::size_t chunk_rows = 0;             // rows per HDF5 chunk (0: contiguous)
    std::string source;                     // where the importer got it
    std::vector<double> mean, std;          // per sample element over the split ({} when not recorded)
    std::int64_t num_classes = 0;           // integer labels: max + 1 (0 when not recorded)
    std::size_t sample_bytes() const;
};

// One column of a batch: this rank's samples, row-major, shape {count, sample_shape...}.
class BatchColumn {
public:
    BatchColumn() = default;
    BatchColumn(ColumnType type, std::vector<std::size_t> shape);
    ColumnType type() const { return type_; }
    const std::vector<std::size_t>& shape() const { return shape_; }
    std::size_t bytes() const { return bytes_.size(); }
    const std::byte* data() const { return bytes_.data(); }
    std::byte* data() { return bytes_.data(); }
    // Typed views: DataError naming the column's type when T is not it.
    template <class T> std::span<const T> view() const {
        check_type(column_type_of<T>());
        return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
    }
    template <class T> std::span<T> view() {
        check_type(column_type_of<T>());
        return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
    }
    // Reshapes in place, keeping the allocation when it is large enough.
    void reset(ColumnType type, std::vector<std::size_t> shape);
    // Every element converted to another type (values as C++ converts them), into `out`
    // (elements() long): for code that takes any numeric column.
    std::size_t elements() const { return bytes_.size() / column_type_size(type_); }
    void copy_to(float* out) const;
    void copy_to(double* out) const;
    void copy_to(std::int64_t* out) const;

private:
    void check_type(ColumnType wanted) const;
    ColumnType type_ = ColumnType::u8;
    std::vector<std::size_t> shape_;
    std::vector<std::byte> bytes_;
};

// This rank's part of one global batch.
class Batch {
public:
    std::size_t index = 0;         // the global batch k in its epoch
    std::size_t first = 0;         // position of its first sample in this rank's part of the epoch
    std::size_t count = 0;         // samples in this part (may be 0)
    double mean_over = 0.0;        // see BatchPart
    std::size_t padded = 0;        // trailing samples that repeat earlier ones (BatchOptions::pad)
    std::vector<std::uint64_t> rows;  // each sample's row in the split

    bool has(const std::string& name) const;
    std::vector<std::string> column_names() const;
    const BatchColumn& column(const std::string& name) const;  // DataError naming those it has
    BatchColumn& column(const std::string& name);
    // Typed view of a column; DataError naming the column and both types when T is not its type.
    template <class T> std::span<const T> view(const std::string& name) const {
        return typed(name, column_type_of<T>()).template view<T>();
    }
    // Adds or replaces a column (for transforms) and returns it, sized for `shape`.
    BatchColumn& set(const std::string& name, ColumnType type, std::vector<std::size_t> shape);
    template <class T> std::span<T> set(const std::string& name, std::vector<std::size_t> shape) {
        return set(name, column_type_of<T>(), std::move(shape)).template view<T>();
    }
    void erase(const std::string& name);

private:
    const BatchColumn& typed(const std::string& name, ColumnType wanted) const;
    std::vector<std::pair<std::string, BatchColumn>> columns_;
};

// Runs on the reader's thread, on every batch before the training thread sees it (Ray's advice:
// heavy preprocessing belongs in the pipeline); with prefetch_batches = 0 there is no reader
// thread and it runs inside next(). It may change, add or erase columns. It must not
// call into the Session or communicate; an exception it throws is rethrown by next().
using BatchTransform = std::function<void(Batch&)>;

struct BatchOptions {
    std::size_t batch_size = 64;      // the global batch, split over the ranks (batch_part)
    bool drop_last = false;           // leave out the last global batch when it is partial
    bool pad = false;                 // repeat the first samples so every rank's parts have equal
                                      // counts (DistributedSampler's padding); Batch::padded marks them
    std::optional<std::vector<std::string>> columns;  // unset: every column; {}: none (positions only)
    std::size_t prefetch_batches = 2; // batches the reader keeps ready (0: read in next())
    Shuffle shuffle = Shuffle::none;
    std::size_t shuffle_buffer = 0;   // blocks: samples shuffled together (0: 16 blocks)
    BatchTransform transform;
};

// Where an epoch's stream stands: the next global batch not yet handed out.
struct DataPosition {
    std::int64_t epoch = 0;
    std::int64_t next_batch = 0;
};

// One epoch of one rank's batches, produced by a background reader thread that keeps up to
// `prefetch_batches` batches ready: the memory a rank holds is bounded by that window (plus a
// shuffle window), not by the dataset. Move-only; destroying it stops the reader.
class BatchIterator {
public:
    struct Impl;
    explicit BatchIterator(std::unique_ptr<Impl> impl);
    BatchIterator(BatchIterator&&) noexcept;
    BatchIterator& operator=(BatchIterator&&) noexcept;
    ~BatchIterator();

    // The next batch (valid until the next call), or nullptr after the epoch's last one. Rethrows
    // the reader's error (a DataError or H5Error naming the file, or the transform's exception).
    const Batch* next();
    std::size_t batches() const;      // global batches in this epoch
    DataPosition position() const;    // the next batch next() will return
    double wait_seconds() const;      // time next() has spent waiting for the reader

private:
    std::unique_ptr<Impl> impl_;
};

// One split of the dataset file, as this rank sees it. Cheap to copy.
class Dataset {
public:
    struct Impl;
    explicit Dataset(std::shared_ptr<const Impl> impl);

    const std::string& path() const;
    const std::string& split() const;
    std::size_t size() const;                          // N, samples in the split
    const std::vector<ColumnInfo>& columns() const;    // in name order (HDF5 lists them so)
    const ColumnInfo& column(const std::string& name) const;  // DataError naming the columns
    // The file's default feature and label columns ("" when it names none).
    const std::string& feature_column() const;
    const std::string& label_column() const;

    std::size_t batches(const BatchOptions& options) const;  // global batches per epoch
    // What fixes the samples of global batch k under `options`: the batch size, N, the shuffle
    // and, when shuffled, the seed, and for blocks the block and window sizes (which follow the
    // file's chunking, the columns read and shuffle_buffer). A saved position is only valid under
    // the same key, on any number of ranks.
    std::string order_key(const BatchOptions& options) const;
    // The batches of `from.epoch`, starting at global batch `from.next_batch`.
    BatchIterator iter_batches(const BatchOptions& options, DataPosition from) const;
    BatchIterator iter_batches(const BatchOptions& options, std::int64_t epoch) const {
        return iter_batches(options, DataPosition{epoch, 0});
    }

private:
    std::shared_ptr<const Impl> impl_;
};

// The job's [data] settings as a split's options for a global batch of `global_batch` samples:
// data.shuffle for "train" (every other split in file order), data.prefetch_batches,
// data.shuffle_buffer. What a plugin reading session.dataset(split) starts from.
BatchOptions configured_batch_options(const JobConfig& config, const std::string& split, std::size_t global_batch);

// A stream's position in a checkpoint: attributes data.<split>.epoch, .next_batch, .batch_size,
// .shuffle and .order (Dataset::order_key). load_position returns nullopt when the checkpoint
// holds none for the dataset's split, and throws CheckpointError when it was saved under another
// order key (its batches would be other samples).
void save_position(CheckpointState& state, const Dataset& dataset, const DataPosition& position,
                   const BatchOptions& options);
std::optional<DataPosition> load_position(const Checkpoint& checkpoint, const Dataset& dataset,
                                          const BatchOptions& options);

// ---- a whole part at once (an image dataset: the file's uint8 feature and label columns) ----

// With n ranks and N samples each rank gets ceil(N / n) samples, rank r taking positions r, r + n,
// ... of the epoch's order; when n does not divide N the order is padded by repeating its first
// samples, marked in `padded`. Reads the file's feature and label columns, both uint8.
struct DatasetShard {
    std::string split;                      // "train", "test"
    std::size_t global_count = 0;           // samples in the split
    std::size_t count = 0;                  // samples in this rank's part
    std::vector<std::size_t> sample_shape;  // e.g. {28, 28}
    std::vector<std::uint8_t> features;     // count * product(sample_shape), row-major
    std::vector<std::uint8_t> labels;       // count
    std::vector<std::uint64_t> indices;     // global index of each sample
    std::size_t padded = 0;                 // trailing samples that repeat earlier ones

    std::size_t sample_size() const;
};

}  // namespace trainrt
