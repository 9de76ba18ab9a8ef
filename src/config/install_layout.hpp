#pragma once
// Where this trainrt's own files are: its optional component libraries (LibTorch, Python, CUDA)
// are installed beside libtrainrt, under the same major.minor as libtrainrt's SONAME.
#include <string>

namespace trainrt::config {

// The directory libtrainrt was loaded from ("." if the loader cannot say).
std::string library_dir();

// "libtrainrt_torch" -> "libtrainrt_torch.so.0.1": the file name a component of this version has.
std::string versioned_library(const std::string& base);

}  // namespace trainrt::config
