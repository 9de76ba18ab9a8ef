#include "h5/io.hpp"

namespace trainrt::h5 {

Dataset create_dataset(hid_t parent, const std::string& name, hid_t type, hid_t space, hid_t dcpl,
                       const std::string& what) {
    return Dataset(
        TRAINRT_H5(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), what));
}

Dataset open_dataset_with(hid_t parent, const std::string& name, hid_t dapl, const std::string& what) {
    return Dataset(TRAINRT_H5(H5Dopen2(parent, name.c_str(), dapl), what));
}

void read_all(hid_t dataset, hid_t memory_type, void* out, const std::string& what) {
    TRAINRT_H5(H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), what);
}

void write_all(hid_t dataset, hid_t memory_type, const void* data, const std::string& what, hid_t transfer) {
    TRAINRT_H5(H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, transfer, data), what);
}

void read_selected(hid_t dataset, hid_t memory_type, hid_t memory_space, hid_t file_space, void* out,
                   const std::string& what) {
    TRAINRT_H5(H5Dread(dataset, memory_type, memory_space, file_space, H5P_DEFAULT, out), what);
}

void read_block(hid_t dataset, hid_t memory_type, const Block& block, void* out, const std::string& what) {
    locked([&] {
        Dataspace file_space = dataset_space(dataset);
        select_block(file_space.get(), block, what);
        Dataspace memory_space = simple_space(block.count, what);
        read_selected(dataset, memory_type, memory_space.get(), file_space.get(), out, what);
        return 0;
    });
}

void write_block(hid_t dataset, hid_t memory_type, const Block& block, const void* data, const std::string& what,
                 hid_t transfer) {
    locked([&] {
        Dataspace file_space = dataset_space(dataset);
        select_block(file_space.get(), block, what);
        Dataspace memory_space = simple_space(block.count, what);
        TRAINRT_H5(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), transfer, data), what);
        return 0;
    });
}

void write_chunk(hid_t dataset, const std::vector<hsize_t>& offset, const void* bytes, std::size_t size,
                 const std::string& what) {
    TRAINRT_H5(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset.data(), size, bytes), what);
}

void set_extent(hid_t dataset, const std::vector<hsize_t>& dims, const std::string& what) {
    TRAINRT_H5(H5Dset_extent(dataset, dims.data()), what);
}

haddr_t data_offset(hid_t dataset) {
    return locked([dataset] { return H5Dget_offset(dataset); });
}

ChunkPlace chunk_place(hid_t dataset, const std::vector<hsize_t>& coords, const std::string& what) {
    unsigned filter_mask = 0;
    ChunkPlace place;
    TRAINRT_H5(H5Dget_chunk_info_by_coord(dataset, coords.data(), &filter_mask, &place.address, &place.bytes),
               what);
    if (place.address == HADDR_UNDEF) place.bytes = 0;
    return place;
}

Datatype dataset_type(hid_t dataset, const std::string& what) {
    return Datatype(TRAINRT_H5(H5Dget_type(dataset), what));
}

H5D_layout_t dataset_layout(hid_t dataset, const std::string& what) {
    PropertyList dcpl(TRAINRT_H5(H5Dget_create_plist(dataset), what));
    return TRAINRT_H5(H5Pget_layout(dcpl.get()), what);
}

std::vector<hsize_t> chunk_dims(hid_t dataset, const std::string& what) {
    PropertyList dcpl(TRAINRT_H5(H5Dget_create_plist(dataset), what));
    if (TRAINRT_H5(H5Pget_layout(dcpl.get()), what) != H5D_CHUNKED) return {};
    const int rank = TRAINRT_H5(H5Pget_chunk(dcpl.get(), 0, nullptr), what);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    TRAINRT_H5(H5Pget_chunk(dcpl.get(), rank, dims.data()), what);
    return dims;
}

int filter_count(hid_t dataset, const std::string& what) {
    PropertyList dcpl(TRAINRT_H5(H5Dget_create_plist(dataset), what));
    return TRAINRT_H5(H5Pget_nfilters(dcpl.get()), what);
}

}  // namespace trainrt::h5
