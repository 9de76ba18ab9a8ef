// h5::open_image: an HDF5 file opened from its bytes in memory (a restore's verified image of a
// checkpoint file), read-only, without a read of the disk.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::vector<char> bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An HDF5 file with dataset "tensors/w" (3 x 4 float32, element i = i / 2), its bytes read back.
std::vector<char> sample_file_bytes(const std::string& path) {
    std::vector<float> values(12);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 2;
    h5::File file = h5::create_file(path);
    h5::Group group = h5::create_group(file.get(), "tensors");
    h5::write_dataset(group.get(), "w", H5T_NATIVE_FLOAT, {3, 4}, values.data());
    group = h5::Group();
    h5::close_file(file, path);
    return bytes_of(path);
}

}  // namespace

TEST_CASE("h5::open_image reads a file's datasets from its bytes in memory, not from the disk", "[h5]") {
    const std::string path = fs::temp_directory_path() / ("trainrt-h5image-" + std::to_string(::getpid()) + ".h5");
    std::vector<char> bytes = sample_file_bytes(path);
    fs::remove(path);  // whatever is read below comes from `bytes`
    REQUIRE(!bytes.empty());
    h5::File image = h5::open_image(bytes.data(), bytes.size(), "sample.h5");
    h5::Dataset dataset = h5::open_dataset(image.get(), "tensors/w");
    CHECK(h5::dataset_shape(dataset.get()) == std::vector<hsize_t>{3, 4});
    std::vector<float> back(12, -1.0f);
    TRAINRT_H5(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), "w");
    for (std::size_t i = 0; i < back.size(); ++i) CHECK(back[i] == static_cast<float>(i) / 2);
    // The dataset's address is its offset in the bytes: the elements lie there.
    const haddr_t at = h5::locked([&] { return H5Dget_offset(dataset.get()); });
    REQUIRE(at != HADDR_UNDEF);
    REQUIRE(at + sizeof(float) * 12 <= bytes.size());
    const float* in_image = reinterpret_cast<const float*>(bytes.data() + at);
    CHECK(std::vector<float>(in_image, in_image + 12) == back);
}

TEST_CASE("h5::open_image of bytes that are not an HDF5 file is an H5Error with HDF5's text", "[h5]") {
    std::vector<char> garbage(4096, 'x');
    CHECK_THROWS_AS(h5::open_image(garbage.data(), garbage.size(), "garbage.h5"), H5Error);
    CHECK_THROWS_WITH(h5::open_image(garbage.data(), garbage.size(), "garbage.h5"),
                      Contains("garbage.h5") && Contains("file signature not found"));
}
