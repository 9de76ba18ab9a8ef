// The streaming reader behind Dataset::iter_batches: a producer thread that reads spans of
// global batches (a rank's rows of them, in file order) and hands them to next() through a
// bounded queue; batch objects are recycled, so a rank holds at most a span plus the prefetch
// window plus the batch in use.
#include "data/stream.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "data/dataset_file.hpp"
#include "data/epoch_order.hpp"
#include "data/row_reader.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

struct Dataset::Impl {
    std::shared_ptr<const data::DatasetInfo> info;
    const data::SplitInfo* split = nullptr;
    int rank = 0;
    int ranks = 1;
    std::uint64_t seed = 0;
};

namespace data {
namespace {

constexpr std::size_t kDefaultBlockBytes = 1u << 20;  // a block when the column is not chunked
constexpr std::size_t kDefaultShuffleBlocks = 16;
constexpr std::uint64_t kMaxWindow = 1ull << 31;

// One epoch's batches as one rank sees them.
struct Geometry {
    std::uint64_t rows = 0;       // N
    std::uint64_t positions = 0;  // N, or N padded to a multiple of the ranks
    std::uint64_t batch = 1;
    std::uint64_t batches = 0;
    int ranks = 1, rank = 0;
};

Geometry make_geometry(std::uint64_t rows, const BatchOptions& options, int ranks, int rank) {
    if (options.batch_size == 0) throw DataError("data: batch_size 0; a batch needs at least one sample");
    Geometry geometry{rows, rows, options.batch_size, 0, ranks, rank};
    const auto n = static_cast<std::uint64_t>(ranks);
    if (options.pad) geometry.positions = (rows + n - 1) / n * n;
    geometry.batches = options.drop_last ? geometry.positions / geometry.batch
                                         : (geometry.positions + geometry.batch - 1) / geometry.batch;
    return geometry;
}

std::vector<ColumnInfo> selected_columns(const DatasetInfo& info, const SplitInfo& split, const BatchOptions& options) {
    if (!options.columns) return split.columns;
    std::vector<ColumnInfo> columns;
    for (const std::string& name : *options.columns) columns.push_back(find_column(info, split, name));
    return columns;
}

// Rows per shuffle block: a chunk of the column with the largest samples (the one that dominates
// the reads; a scalar label column's chunks span far more rows), or ~1 MiB of it, unchunked.
std::uint64_t block_rows(const std::vector<ColumnInfo>& columns) {
    const ColumnInfo* widest = nullptr;
    for (const ColumnInfo& column : columns)
        if (!widest || column.sample_bytes() > widest->sample_bytes()) widest = &column;
    if (!widest) return 1;
    if (widest->chunk_rows > 0) return widest->chunk_rows;
    return std::max<std::size_t>(1, kDefaultBlockBytes / std::max<std::size_t>(1, widest->sample_bytes()));
}

// Blocks: the shuffle window in positions, a whole number of global batches.
std::uint64_t shuffle_window(const BatchOptions& options, std::uint64_t blocks_rows) {
    std::uint64_t window = options.shuffle_buffer > 0 ? options.shuffle_buffer : kDefaultShuffleBlocks * blocks_rows;
    window = (window + options.batch_size - 1) / options.batch_size * options.batch_size;
    if (window > kMaxWindow)
        throw DataError(fmt::format("data: shuffle_buffer {} is too large (at most {} samples)", window, kMaxWindow));
    return window;
}

using Clock = std::chrono::steady_clock;

}  // namespace
}  // namespace data

struct BatchIterator::Impl {
    Impl(const Dataset::Impl& dataset, const BatchOptions& options, DataPosition from);
    ~Impl();
    const Batch* next();

    // Producer side. A span: the batches read together (a prefetch window when shuffled globally,
    // a shuffle window for blocks, else one batch).
    struct Pending {  // a batch's positions, before its data are read
        std::uint64_t index;
        BatchPart part;
        std::size_t padded;
        std::vector<std::uint64_t> rows;
    };
    Pending plan_batch(std::uint64_t k) const;
    std::vector<Pending> plan_span(std::uint64_t first) const;
    bool stage(const std::vector<Pending>& span);
    void hint(const std::vector<Pending>& span) const;
    std::unique_ptr<Batch> make_batch(Pending& pending, bool staged);
    void run_reader();
    std::unique_ptr<Batch> take_batch();
    std::size_t low_water() const { return options_.prefetch_batches / 2; }

    std::string path_, split_;
    BatchOptions options_;
    std::int64_t epoch_;
    data::Geometry geometry_;
    std::vector<ColumnInfo> columns_;
    std::uint64_t span_batches_ = 1;
    data::EpochOrder order_;
    std::unique_ptr<data::RowReader> reader_;
    std::vector<std::vector<std::byte>> staging_;  // per column: the staged rows' samples
    std::vector<std::uint64_t> staged_rows_;       // ascending

    std::mutex mutex_;
    std::condition_variable room_;    // the reader waits for a free place in the queue
    std::condition_variable filled_;  // next() waits for a batch
    bool reader_waiting_ = false, consumer_waiting_ = false;  // notify only a thread that waits
    std::deque<std::unique_ptr<Batch>> ready_;
    std::vector<std::unique_ptr<Batch>> pool_;
    bool stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;

    std::unique_ptr<Batch> current_;
    std::uint64_t next_index_;
    std::uint64_t produced_;  // inline production (prefetch 0): the next span's first batch
    double wait_seconds_ = 0.0;
};

namespace {

data::EpochOrder make_order(const data::Geometry& geometry, const BatchOptions& options, std::uint64_t seed,
                            std::int64_t epoch, const std::vector<ColumnInfo>& columns) {
    const std::uint64_t blocks = data::block_rows(columns);
    const std::uint64_t window = options.shuffle == Shuffle::blocks ? data::shuffle_window(options, blocks) : 1;
    return data::EpochOrder(geometry.rows, options.shuffle, seed, static_cast<std::uint64_t>(epoch), blocks, window);
}

std::uint64_t span_batches(const BatchOptions& options, const std::vector<ColumnInfo>& columns) {
    switch (options.shuffle) {
        case Shuffle::none: return 1;
        case Shuffle::global: return std::max<std::size_t>(1, options.prefetch_batches);
        case Shuffle::blocks: return data::shuffle_window(options, data::block_rows(columns)) / options.batch_size;
    }
    return 1;
}

}  // namespace

BatchIterator::Impl::Impl(const Dataset::Impl& dataset, const BatchOptions& options, DataPosition from)
    : path_(dataset.info->path), split_(dataset.split->name), options_(options), epoch_(from.epoch),
      geometry_(data::make_geometry(dataset.split->rows, options, dataset.ranks, dataset.rank)),
      columns_(data::selected_columns(*dataset.info, *dataset.split, options)),
      span_batches_(span_batches(options, columns_)),
      order_(make_order(geometry_, options, dataset.seed, from.epoch, columns_)),
      next_index_(static_cast<std::uint64_t>(from.next_batch)), produced_(next_index_) {
    if (from.epoch < 0 || from.next_batch < 0 || static_cast<std::uint64_t>(from.next_batch) > geometry_.batches)
        throw DataError(fmt::format("data: no batch {} in epoch {} of split '{}' ({} batches of {})", from.next_batch,
                                    from.epoch, split_, geometry_.batches, options.batch_size));
    if (!columns_.empty()) {
        reader_ = std::make_unique<data::RowReader>(path_, split_, columns_);
        staging_.resize(columns_.size());
    }
    if (options_.prefetch_batches > 0 && next_index_ < geometry_.batches)
        thread_ = std::thread([this] { run_reader(); });
}

BatchIterator::Impl::~Impl() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    room_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::unique_ptr<Batch> BatchIterator::Impl::take_batch() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pool_.empty()) return std::make_unique<Batch>();
    std::unique_ptr<Batch> batch = std::move(pool_.back());
    pool_.pop_back();
    return batch;
}

// Positions of global batch k that this rank holds: p with p % ranks == rank, ascending.
BatchIterator::Impl::Pending BatchIterator::Impl::plan_batch(std::uint64_t k) const {
    const data::Geometry& g = geometry_;
    Pending pending{k, batch_part(k, g.positions, g.batch, g.ranks, g.rank), 0, {}};
    const auto n = static_cast<std::uint64_t>(g.ranks), r = static_cast<std::uint64_t>(g.rank);
    const std::uint64_t begin = k * g.batch;
    const std::uint64_t p0 = begin + (r + n - begin % n) % n;
    pending.rows.resize(pending.part.count);
    for (std::uint64_t i = 0; i < pending.part.count; ++i) {
        const std::uint64_t p = p0 + i * n;
        if (p >= g.rows) ++pending.padded;
        pending.rows[i] = order_.row(p < g.rows ? p : (p - g.rows) % g.rows);
    }
    return pending;
}

// The batches from `first` to the end of its span (spans are aligned: blocks' windows).
std::vector<BatchIterator::Impl::Pending> BatchIterator::Impl::plan_span(std::uint64_t first) const {
    const std::uint64_t span_first = first - first % span_batches_;
    const std::uint64_t last = std::min(geometry_.batches, span_first + span_batches_);
    std::vector<Pending> span;
    for (std::uint64_t k = first; k < last; ++k) span.push_back(plan_batch(k));
    return span;
}

// A span of one batch whose rows ascend is read straight into the batch; otherwise the span's rows
// are read once, in file order, into staging memory that its batches are filled from.
bool BatchIterator::Impl::stage(const std::vector<Pending>& span) {
    if (columns_.empty()) return false;
    const auto& first_rows = span[0].rows;
    if (span.size() == 1 && std::is_sorted(first_rows.begin(), first_rows.end()) &&
        std::adjacent_find(first_rows.begin(), first_rows.end()) == first_rows.end())
        return false;
    staged_rows_.clear();
    for (const Pending& pending : span) staged_rows_.insert(staged_rows_.end(), pending.rows.begin(), pending.rows.end());
    std::sort(staged_rows_.begin(), staged_rows_.end());
    staged_rows_.erase(std::unique(staged_rows_.begin(), staged_rows_.end()), staged_rows_.end());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        staging_[c].resize(staged_rows_.size() * columns_[c].sample_bytes());
        reader_->read(c, staged_rows_, staging_[c].data());
    }
    return true;
}

void BatchIterator::Impl::hint(const std::vector<Pending>& span) const {
    if (columns_.empty()) return;
    std::vector<std::uint64_t> rows;
    for (const Pending& pending : span) rows.insert(rows.end(), pending.rows.begin(), pending.rows.end());
    std::sort(rows.begin(), rows.end());
    reader_->advise(rows);
}

std::unique_ptr<Batch> BatchIterator::Impl::make_batch(Pending& pending, bool staged) {
    std::unique_ptr<Batch> batch = take_batch();
    batch->index = pending.index, batch->first = pending.part.first, batch->count = pending.part.count;
    batch->mean_over = pending.part.mean_over, batch->padded = pending.padded;
    batch->rows.swap(pending.rows);
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        const ColumnInfo& column = columns_[c];
        std::vector<std::size_t> shape{batch->count};
        shape.insert(shape.end(), column.sample_shape.begin(), column.sample_shape.end());
        BatchColumn& out = batch->set(column.name, column.type, std::move(shape));
        if (!staged) {
            reader_->read(c, batch->rows, out.data());
            continue;
        }
        const std::size_t sample = column.sample_bytes();
        for (std::size_t i = 0; i < batch->count; ++i) {
            const auto at = static_cast<std::size_t>(
                std::lower_bound(staged_rows_.begin(), staged_rows_.end(), batch->rows[i]) - staged_rows_.begin());
            std::memcpy(out.data() + i * sample, staging_[c].data() + at * sample, sample);
        }
    }
    if (options_.transform) options_.transform(*batch);
    return batch;
}

// The next span is planned, and its bytes hinted to the kernel, before this one is read: its
// reads are under way while this span's batches are consumed.
void BatchIterator::Impl::run_reader() {
    try {
        std::vector<Pending> next = next_index_ < geometry_.batches ? plan_span(next_index_) : std::vector<Pending>{};
        for (std::uint64_t k = next_index_; k < geometry_.batches;) {
            std::vector<Pending> span = std::move(next);
            k += span.size();
            if (k < geometry_.batches) hint(next = plan_span(k));
            const bool staged = stage(span);
            for (Pending& pending : span) {
                std::unique_ptr<Batch> batch = make_batch(pending, staged);
                std::unique_lock<std::mutex> lock(mutex_);
                if (ready_.size() >= options_.prefetch_batches) {  // full: sleep until half of it is used
                    reader_waiting_ = true;
                    room_.wait(lock, [&] { return stop_ || ready_.size() <= low_water(); });
                    reader_waiting_ = false;
                }
                if (stop_) return;
                ready_.push_back(std::move(batch));
                if (consumer_waiting_) filled_.notify_one();
            }
        }
    } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::current_exception();
        filled_.notify_one();
    }
}

// One lock per call, and the reader is woken only once half the queue is used (each wake-up can
// hand the core to the reader). wait_seconds counts only the time spent blocked for a batch.
const Batch* BatchIterator::Impl::next() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (current_) pool_.push_back(std::move(current_));
    if (next_index_ >= geometry_.batches) return nullptr;
    if (!thread_.joinable()) {  // prefetch_batches = 0: read here, on the caller's thread
        lock.unlock();
        if (ready_.empty()) {
            const auto started = data::Clock::now();
            std::vector<Pending> span = plan_span(produced_);
            produced_ += span.size();
            const bool staged = stage(span);
            for (Pending& pending : span) ready_.push_back(make_batch(pending, staged));
            wait_seconds_ += std::chrono::duration<double>(data::Clock::now() - started).count();
        }
        lock.lock();
    } else if (ready_.empty()) {
        const auto started = data::Clock::now();
        consumer_waiting_ = true;
        filled_.wait(lock, [&] { return !ready_.empty() || error_; });
        consumer_waiting_ = false;
        wait_seconds_ += std::chrono::duration<double>(data::Clock::now() - started).count();
        if (ready_.empty()) std::rethrow_exception(error_);
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    const bool wake = reader_waiting_ && ready_.size() <= low_water();
    lock.unlock();
    if (wake) room_.notify_one();
    ++next_index_;
    return current_.get();
}

BatchIterator::BatchIterator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BatchIterator::BatchIterator(BatchIterator&&) noexcept = default;
BatchIterator& BatchIterator::operator=(BatchIterator&&) noexcept = default;
BatchIterator::~BatchIterator() = default;
const Batch* BatchIterator::next() { return impl_->next(); }
std::size_t BatchIterator::batches() const { return impl_->geometry_.batches; }
DataPosition BatchIterator::position() const {
    return {impl_->epoch_, static_cast<std::int64_t>(impl_->next_index_)};
}
double BatchIterator::wait_seconds() const { return impl_->wait_seconds_; }

Dataset::Dataset(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
const std::string& Dataset::path() const { return impl_->info->path; }
const std::string& Dataset::split() const { return impl_->split->name; }
std::size_t Dataset::size() const { return impl_->split->rows; }
const std::vector<ColumnInfo>& Dataset::columns() const { return impl_->split->columns; }
const ColumnInfo& Dataset::column(const std::string& name) const {
    return data::find_column(*impl_->info, *impl_->split, name);
}
const std::string& Dataset::feature_column() const { return impl_->info->feature_column; }
const std::string& Dataset::label_column() const { return impl_->info->label_column; }

std::size_t Dataset::batches(const BatchOptions& options) const {
    return data::make_geometry(impl_->split->rows, options, impl_->ranks, impl_->rank).batches;
}

std::string Dataset::order_key(const BatchOptions& options) const {
    const std::uint64_t rows = impl_->split->rows;
    switch (options.shuffle) {
        case Shuffle::none: return fmt::format("none rows={} batch={}", rows, options.batch_size);
        case Shuffle::global: return fmt::format("global rows={} batch={} seed={}", rows, options.batch_size, impl_->seed);
        case Shuffle::blocks: break;
    }
    const std::uint64_t blocks = data::block_rows(data::selected_columns(*impl_->info, *impl_->split, options));
    return fmt::format("blocks rows={} batch={} seed={} block_rows={} window={}", rows, options.batch_size,
                       impl_->seed, blocks, data::shuffle_window(options, blocks));
}

BatchIterator Dataset::iter_batches(const BatchOptions& options, DataPosition from) const {
    return BatchIterator(std::make_unique<BatchIterator::Impl>(*impl_, options, from));
}

namespace data {

Dataset open_dataset(const std::string& path, const std::string& split, int rank, int ranks, std::uint64_t seed) {
    auto info = std::make_shared<const DatasetInfo>(read_dataset_info(path));
    auto impl = std::make_shared<Dataset::Impl>();
    impl->split = &info->split(split);
    impl->info = std::move(info);
    impl->rank = rank, impl->ranks = ranks, impl->seed = seed;
    return Dataset(std::move(impl));
}

}  // namespace data
}  // namespace trainrt
