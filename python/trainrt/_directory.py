"""Directory checkpoints (Ray's Checkpoint.from_directory): the files of a directory, any bytes
(torch.save'd model.pt, JSON, tokenizer files), stored inside trainrt's atomic, verified checkpoint.

Layout in the checkpoint (no file is held twice in memory: each rank reads its files straight into
the one buffer it hands to the writer):
  _dir.bytes  uint8 [sum over ranks of 1 + their bytes]: each rank's block is one marker byte,
              then its files' bytes back to back (a block is never empty);
  _dir.index  uint8 [sum over ranks of their index bytes]: each rank's JSON list [[path, size], ...];
  _dir.sizes  int64 [world, 2]: each rank's index and bytes block lengths (replicated).
When several ranks report a directory, they are merged as Ray merges them: every file of every
rank, a path present on several ranks taken from the lowest of them. A rank may report None while
others report a directory: it contributes no files.
"""
import json
import os
import shutil
import tempfile

import numpy as np

PREFIX = "_dir."
BYTES = "_dir.bytes"
INDEX = "_dir.index"
SIZES = "_dir.sizes"


def listing(root):
    """[[relative path, size], ...] of the regular files under root, sorted (symlinks followed)."""
    if not os.path.isdir(root):
        raise FileNotFoundError(f"trainrt.Checkpoint.from_directory: {root} is not a directory")
    found = []
    for folder, _, files in os.walk(root, followlinks=True):
        for name in files:
            path = os.path.join(folder, name)
            found.append([os.path.relpath(path, root), os.path.getsize(path)])
    return sorted(found)


# The last report's buffer, reused by the next one: a training loop reports a directory of about
# the same size every time, and fresh pages cost more than the copy into them. It is free again
# when report() returns (a synchronous save is committed; an async one has copied the state), and
# held between reports as the async save's host copy is; a larger directory replaces it.
_reusable = None


def _buffer(size):
    global _reusable
    if _reusable is None or _reusable.size < size:
        _reusable = None  # the old one is freed before the new one is allocated
        _reusable = np.empty(size, dtype=np.uint8)
    return _reusable[:size]


def read_files(root, files):
    """One buffer: a marker byte, then every file's bytes in `files` order."""
    buffer = _buffer(1 + sum(size for _, size in files))
    buffer[0] = 1
    view = memoryview(buffer)
    at = 1
    for relative, size in files:
        with open(os.path.join(root, relative), "rb") as f:
            got = f.readinto(view[at:at + size])
        if got != size:
            raise OSError(f"trainrt.Checkpoint.from_directory: {relative} changed while it was read "
                          f"({got} of {size} bytes)")
        at += size
    return buffer


def tensor_parts(root, context, allreduce):
    """This rank's (name, array, replicated, global shape, offset) parts for the directory at root
    (None: no files). Collective: every rank of the report calls it."""
    world, rank = context["world_size"], context["world_rank"]
    files = listing(root) if root is not None else []
    index = np.frombuffer(json.dumps(files).encode(), dtype=np.uint8)
    data = read_files(root, files) if root is not None else np.ones(1, dtype=np.uint8)
    sizes = np.zeros((world, 2), dtype=np.int64)
    sizes[rank] = (index.size, data.size)
    allreduce(sizes, "sum")
    starts = np.cumsum(sizes, axis=0) - sizes  # each rank's block offsets in the two tensors
    totals = sizes.sum(axis=0)
    return [(INDEX, index, False, [int(totals[0])], [int(starts[rank, 0])]),
            (BYTES, data, False, [int(totals[1])], [int(starts[rank, 1])]),
            (SIZES, sizes, True, [], [])]


def merged_files(committed):
    """{relative path: (offset in _dir.bytes, size)}: every rank's files, the lowest rank's copy of
    a path several ranks saved."""
    sizes = committed.read(SIZES)
    index = committed.read(INDEX).tobytes()
    files, index_at, bytes_at = {}, 0, 0
    for rank_index, rank_bytes in sizes:
        listed = json.loads(index[index_at:index_at + rank_index].decode())
        at = bytes_at + 1
        for relative, size in listed:
            files.setdefault(relative, (at, size))
            at += size
        index_at += int(rank_index)
        bytes_at += int(rank_bytes)
    return files


def write_files(committed, target):
    """Writes the checkpoint's merged directory into target (made if missing); returns target."""
    os.makedirs(target, exist_ok=True)
    for relative, (offset, size) in sorted(merged_files(committed).items()):
        path = os.path.join(target, relative)
        os.makedirs(os.path.dirname(path) or target, exist_ok=True)
        content = committed.read(BYTES, [offset], [size]) if size else np.empty(0, dtype=np.uint8)
        with open(path, "wb") as f:
            f.write(memoryview(content))
    return target


def temporary_copy(committed):
    """A new temporary directory holding the files; the caller removes it (remove())."""
    return write_files(committed, tempfile.mkdtemp(prefix="trainrt_checkpoint_"))


def remove(path):
    shutil.rmtree(path, ignore_errors=True)
