# Every library trainrt links, all from Debian's packages (tools/packages.txt): found by the full
# build (CMakeLists.txt) and by an environment's build of the Python component against an installed
# trainrt (cmake/environment/CMakeLists.txt), so that both compile src/ alike.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HDF5 REQUIRED IMPORTED_TARGET hdf5-mpich)
# HDF5's high-level library of the same build (libhdf5-mpich-dev): H5LTopen_file_image opens a
# verified checkpoint file from its bytes in memory without copying them (h5::open_image).
find_library(HDF5_HL_LIBRARY NAMES hdf5_hl PATHS ${HDF5_LIBRARY_DIRS} NO_DEFAULT_PATH REQUIRED)
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET pmix)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
# Eigen (header-only): the Gaussian process PB2's scheduler fits (src/tune/pb2.cpp).
find_package(Eigen3 3.3 REQUIRED NO_MODULE)

# trainrt_deps: src/ (the internal headers) and every dependency, for code built with trainrt's internals.
function(trainrt_add_deps_target)
  add_library(trainrt_deps INTERFACE)
  target_include_directories(trainrt_deps INTERFACE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(trainrt_deps INTERFACE
    MPI::MPI_C ${HDF5_HL_LIBRARY} PkgConfig::HDF5 PkgConfig::PMIX PkgConfig::OPENBLAS PkgConfig::XXHASH PkgConfig::LIBZIP
    Boost::program_options nlohmann_json::nlohmann_json fmt::fmt spdlog::spdlog ZLIB::ZLIB Threads::Threads Eigen3::Eigen ${CMAKE_DL_LIBS})
endfunction()
