#include "h5/props.hpp"

#include "trainrt/error.hpp"

namespace trainrt::h5 {
namespace {

void set_storage(hid_t dcpl, const DatasetLayout& layout, const std::string& what) {
    if (layout.chunk_dims.empty())
        TRAINRT_H5(H5Pset_layout(dcpl, H5D_CONTIGUOUS), what);
    else
        TRAINRT_H5(H5Pset_chunk(dcpl, static_cast<int>(layout.chunk_dims.size()), layout.chunk_dims.data()), what);
}

void set_compression(hid_t dcpl, const DatasetLayout& layout, const std::string& what) {
    if (layout.deflate_level == 0) return;
    if (layout.chunk_dims.empty())
        throw H5Error("HDF5 dataset layout (" + what + "): compression needs a chunked layout");
    if (!deflate_available())
        throw H5Error("HDF5 dataset layout (" + what + "): this HDF5 has no gzip (deflate) filter");
    TRAINRT_H5(H5Pset_shuffle(dcpl), what);
    TRAINRT_H5(H5Pset_deflate(dcpl, layout.deflate_level), what);
}

}  // namespace

PropertyList dataset_create_props(const DatasetLayout& layout, const std::string& what) {
    PropertyList dcpl(TRAINRT_H5(H5Pcreate(H5P_DATASET_CREATE), what));
    set_storage(dcpl.get(), layout, what);
    if (layout.allocate_early) TRAINRT_H5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), what);
    if (layout.never_fill) TRAINRT_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), what);
    set_compression(dcpl.get(), layout, what);
    return dcpl;
}

bool deflate_available() {
    return TRAINRT_H5(H5Zfilter_avail(H5Z_FILTER_DEFLATE), "deflate filter") > 0;
}

PropertyList uncached_dataset_access(const std::string& what) {
    PropertyList dapl(TRAINRT_H5(H5Pcreate(H5P_DATASET_ACCESS), what));
    TRAINRT_H5(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), what);
    return dapl;
}

PropertyList latest_format_file_access() {
    PropertyList fapl = file_access_props();
    TRAINRT_H5(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "latest file format");
    return fapl;
}

PropertyList mpi_file_access(const MpiFileAccess& access) {
    PropertyList fapl = file_access_props();
    TRAINRT_H5(H5Pset_fapl_mpio(fapl.get(), access.comm, access.hints), "MPI-IO driver");
    if (access.alignment > 0)
        TRAINRT_H5(H5Pset_alignment(fapl.get(), access.alignment, access.alignment), "alignment");
    if (access.collective_metadata) {
        TRAINRT_H5(H5Pset_all_coll_metadata_ops(fapl.get(), true), "collective metadata reads");
        TRAINRT_H5(H5Pset_coll_metadata_write(fapl.get(), true), "collective metadata writes");
    }
    return fapl;
}

PropertyList in_memory_file_access(std::size_t increment_bytes) {
    init_library();
    PropertyList fapl(TRAINRT_H5(H5Pcreate(H5P_FILE_ACCESS), "core driver"));
    TRAINRT_H5(H5Pset_fapl_core(fapl.get(), increment_bytes, false), "core driver");
    return fapl;
}

PropertyList independent_transfer() {
    PropertyList dxpl(TRAINRT_H5(H5Pcreate(H5P_DATASET_XFER), "transfer properties"));
    TRAINRT_H5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT), "independent transfer");
    return dxpl;
}

}  // namespace trainrt::h5
