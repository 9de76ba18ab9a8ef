#pragma once
// Removes directory trees off the caller's thread. Unlinking a large file is slow on ext4 and
// Lustre (100 MiB: ~45 ms here), and a checkpoint that retention retires must not stall the save
// that retired it. The caller first renames what it removes out of sight (a ".deleting_" name that
// the next start cleans up), so a removal cut short by a crash leaves nothing a reader would take.
#include <string>
#include <thread>
#include <vector>

namespace trainrt::storage {

class BackgroundRemover {
public:
    BackgroundRemover() = default;
    ~BackgroundRemover();  // waits for the removal in flight; never throws
    BackgroundRemover(const BackgroundRemover&) = delete;
    BackgroundRemover& operator=(const BackgroundRemover&) = delete;

    // Starts removing `paths` (recursively); waits first for the removal before, so at most one
    // runs. A path that cannot be removed is a warning, never an exception.
    void remove(std::vector<std::string> paths);
    // Waits for the removal in flight, if any.
    void wait() noexcept;

private:
    std::thread thread_;
};

}  // namespace trainrt::storage
