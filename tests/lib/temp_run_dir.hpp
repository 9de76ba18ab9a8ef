#pragma once
// A fresh, empty directory for one unit test (a run directory, a heartbeats folder), removed with
// everything in it when the test ends. Unique per process and per instance.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace trainrt::testing {

class TempRunDir {
public:
    TempRunDir() {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("trainrt_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempRunDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempRunDir(const TempRunDir&) = delete;
    TempRunDir& operator=(const TempRunDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string str() const { return path_.string(); }

private:
    std::filesystem::path path_;
};

}  // namespace trainrt::testing
