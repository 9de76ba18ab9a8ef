#pragma once
// Where this trainrt's own files are: its optional component libraries (LibTorch, Python, CUDA)
// are installed beside libtrainrt, under the same major.minor as libtrainrt's SONAME.
#include <string>

namespace trainrt::config {

// The directory libtrainrt was loaded from ("." if the loader cannot say).
std::string library_dir();

// The trainrt program of this libtrainrt: PREFIX/bin/trainrt when installed, the build tree's
// trainrt beside lib/ in a build; "trainrt" (found on PATH) when neither is there.
std::string binary_path();

// "libtrainrt_torch" -> "libtrainrt_torch.so.0.1": the file name a component of this version has.
std::string versioned_library(const std::string& base);

}  // namespace trainrt::config
