#include "config/install_layout.hpp"

#include <dlfcn.h>

#include <filesystem>

#include "trainrt/version.hpp"

namespace trainrt::config {

std::string library_dir() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&library_dir), &info) == 0 || info.dli_fname == nullptr) return ".";
    return std::filesystem::path(info.dli_fname).parent_path().lexically_normal().string();
}

std::string binary_path() {
    const std::filesystem::path lib = library_dir();
    for (const std::filesystem::path& candidate : {lib / ".." / "bin" / "trainrt", lib / ".." / "trainrt"})
        if (std::filesystem::is_regular_file(candidate)) return candidate.lexically_normal().string();
    return "trainrt";
}

std::string versioned_library(const std::string& base) {
    const std::string version = TRAINRT_VERSION;
    return base + ".so." + version.substr(0, version.find('.', version.find('.') + 1));
}

}  // namespace trainrt::config
