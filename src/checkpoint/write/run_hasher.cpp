#include "checkpoint/write/run_hasher.hpp"

#include <algorithm>


namespace trainrt::checkpoint {

RunHasher::RunHasher() : thread_([this] { hash_added(); }) {}

RunHasher::~RunHasher() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = abandoned_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void RunHasher::add(const WrittenRegion& region) {
    if (region.length == 0) return;
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.push_back(region);
        waiting_bytes_ += region.length;
        wake = waiting_bytes_ >= kWakeBytes;
    }
    if (wake) changed_.notify_all();
}

std::vector<ChecksumRange> RunHasher::finish() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (run_.length > 0) {
        run_.xxh3 = hex_digest(state_.get());
        runs_.push_back(run_);
        run_.length = 0;
    }
    std::sort(runs_.begin(), runs_.end(), [](const ChecksumRange& a, const ChecksumRange& b) { return a.offset < b.offset; });
    return runs_;
}

// The thread: takes what waits, a batch at a time, until finish() (then the rest) or destruction.
void RunHasher::hash_added() {
    for (;;) {
        std::deque<WrittenRegion> batch;
        bool last = false;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return abandoned_ || closed_ || waiting_bytes_ >= kWakeBytes; });
            if (abandoned_) return;
            batch.swap(waiting_);
            waiting_bytes_ = 0;
            last = closed_;
        }
        for (const WrittenRegion& region : batch) hash(region);
        if (last) return;
    }
}

// One XXH3 state per run; a region that does not continue the run ends it.
void RunHasher::hash(const WrittenRegion& region) {
    if (run_.length > 0 && region.offset != run_.offset + run_.length) {
        run_.xxh3 = hex_digest(state_.get());
        runs_.push_back(run_);
        XXH3_64bits_reset(state_.get());
        run_.length = 0;
    }
    if (run_.length == 0) run_.offset = region.offset;
    XXH3_64bits_update(state_.get(), region.data, static_cast<std::size_t>(region.length));
    run_.length += region.length;
}

}  // namespace trainrt::checkpoint
