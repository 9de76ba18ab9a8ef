#include "checkpoint/run_hasher.hpp"

#include <algorithm>

#include "checkpoint/xxh3.hpp"

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
    {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.push_back(region);
    }
    changed_.notify_all();
}

std::vector<ChecksumRange> RunHasher::finish() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::sort(runs_.begin(), runs_.end(), [](const ChecksumRange& a, const ChecksumRange& b) { return a.offset < b.offset; });
    return runs_;
}

// The thread: one XXH3 state per run, its digest taken when a region does not continue it.
void RunHasher::hash_added() {
    Xxh3State state = new_xxh3();
    ChecksumRange run;
    for (;;) {
        WrittenRegion region;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return abandoned_ || closed_ || !waiting_.empty(); });
            if (abandoned_ || waiting_.empty()) break;
            region = waiting_.front();
            waiting_.pop_front();
        }
        if (run.length > 0 && region.offset != run.offset + run.length) {
            run.xxh3 = hex_digest(state.get());
            runs_.push_back(run);
            XXH3_64bits_reset(state.get());
            run.length = 0;
        }
        if (run.length == 0) run.offset = region.offset;
        XXH3_64bits_update(state.get(), region.data, static_cast<std::size_t>(region.length));
        run.length += region.length;
    }
    if (run.length > 0) {
        run.xxh3 = hex_digest(state.get());
        runs_.push_back(run);
    }
}

}  // namespace trainrt::checkpoint
