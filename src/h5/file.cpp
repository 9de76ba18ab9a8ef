#include "h5/file.hpp"

namespace trainrt::h5 {

File create_file_with(const std::string& path, hid_t fapl) {
    init_library();
    return File(TRAINRT_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), path));
}

File open_file_with(const std::string& path, unsigned flags, hid_t fapl) {
    init_library();
    return File(TRAINRT_H5(H5Fopen(path.c_str(), flags, fapl), path));
}

void close_file_once(File& file, const std::string& path) {
    const hid_t id = file.release();
    TRAINRT_H5(H5Fclose(id), path);
}

void flush(hid_t file, H5F_scope_t scope, const std::string& what) { TRAINRT_H5(H5Fflush(file, scope), what); }

haddr_t end_of_allocation(hid_t file, const std::string& what) {
    haddr_t end = 0;
    TRAINRT_H5(H5Fget_eoa(file, &end), what);
    return end;
}

std::string file_image(hid_t file, const std::string& what) {
    return locked([&] {  // no change to the file between the size and the copy
        const ssize_t size = TRAINRT_H5(H5Fget_file_image(file, nullptr, 0), what);
        std::string image(static_cast<std::size_t>(size), '\0');
        TRAINRT_H5(H5Fget_file_image(file, image.data(), image.size()), what);
        return image;
    });
}

}  // namespace trainrt::h5
