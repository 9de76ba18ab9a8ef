#include "storage/remover.hpp"

#include <filesystem>
#include <system_error>

#include "log/log.hpp"

namespace trainrt::storage {

BackgroundRemover::~BackgroundRemover() { wait(); }

void BackgroundRemover::wait() noexcept {
    if (thread_.joinable()) thread_.join();
}

void BackgroundRemover::remove(std::vector<std::string> paths) {
    wait();
    if (paths.empty()) return;
    thread_ = std::thread([paths = std::move(paths)] {
        for (const std::string& path : paths) {
            std::error_code error;
            std::filesystem::remove_all(path, error);
            if (error) log::warn("removing {} failed: {} (the next start removes it)", path, error.message());
        }
    });
}

}  // namespace trainrt::storage
