#pragma once
// Whether this node's page cache can hold bytes of a file that another node has since replaced.
//
// Why: a client of a network filesystem without cache coherence (NFS between opens, FUSE-based
// ones such as GlusterFS, SMB, 9p) keeps the pages it wrote or read, and a read of bytes another
// client wrote later may come from them. Seen on GlusterFS (FUSE), 2 ranks each through its own
// client (tests/checkpoint/test_glusterfs.sh): in the `shared` layout each rank hashed HDF5's
// metadata that the other rank had written at close from its own stale pages, so every checkpoint was committed
// with a checksum that the file's bytes do not have, and a verification through a client that
// had written the file reported good checkpoints as corrupted. Lustre, GPFS and the kernel's
// CephFS keep clients coherent (locks or capabilities), and a local filesystem has one cache.
//
// Rule: a filesystem is trusted as coherent only when it is known to be; any other one has this
// node's clean cached pages of a file dropped before bytes that another process may have written
// are read from it (the reads then come from the filesystem's servers).
//
// The same list stands for coherent lookups: on an untrusted filesystem a client may also keep a
// "no such file" answer after another node created the file (NFS lookupcache=all, a FUSE negative
// timeout), so the `shared` layout's rank 0 creates data.h5 before ROMIO's collective open, which
// looks it up on every rank first (checkpoint/write/shared_file.cpp). Two more choices follow the list:
// checkpoint data is written with O_DIRECT only on a trusted filesystem (storage/direct_writer.hpp:
// a ceph-fuse client kept stale blocks under its own O_DIRECT writes), and elsewhere a one-node
// restore sends replicated parts from the ranks that verified them instead of reading them through
// another client (checkpoint/read/restore.cpp, replicated_reads = auto).
#include <cstdint>
#include <string>

namespace trainrt::storage {

// Whether a filesystem of this statfs f_type keeps every client's cached pages coherent: local
// disk and memory filesystems, Lustre, GPFS (Spectrum Scale), the kernel's CephFS.
bool coherent_filesystem_type(std::uint64_t statfs_type);

// Whether the open file `fd` (or the file at `path`) lies on such a filesystem; false when
// f/statfs fails.
bool page_cache_coherent(int fd);
bool page_cache_coherent(const std::string& path);

// Drops this node's clean cached pages of bytes [offset, offset + length) of the open file `fd`
// (length 0: to the end) where the filesystem is not coherent (posix_fadvise DONTNEED); nothing
// on a coherent one, whose cache stays useful. Dirty pages stay: they hold this node's writes.
void forget_foreign_pages(int fd, std::uint64_t offset = 0, std::uint64_t length = 0);
// The same for the whole file at `path`, for readers that open it themselves (HDF5): on a
// coherent filesystem a statfs and nothing else; a file that cannot be opened is left for the
// reader to report.
void forget_foreign_pages(const std::string& path);

}  // namespace trainrt::storage
