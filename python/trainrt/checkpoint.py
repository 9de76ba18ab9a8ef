"""trainrt checkpoints from Python (Ray Train's Checkpoint), with no pickle.

Saving: build a Checkpoint and pass it to trainrt.report(metrics, checkpoint=...).
  - arrays (numpy, or anything with __array__) become tensors: HDF5 datasets by their names,
    written once in all, a share by each rank (replicated, as DDP weights are: a large array in
    row ranges, see the manifest's parts), readable with h5py and reshardable like any trainrt
    checkpoint;
  - int, float, bool and str values become attributes;
  - per_rank(name, array): a value that differs between ranks (RNG states), stored as one row per
    rank of a [world_size, ...] tensor;
  - structure(name, obj): a nested dict/list/tuple of arrays and small values (a state_dict):
    its arrays become tensors "name.key.subkey", its shape a JSON attribute "_structure.name".
Restoring: trainrt.get_checkpoint() gives the committed checkpoint: ckpt["w"], ckpt.attributes,
ckpt.rank_value(name), ckpt.structure(name), ckpt.to_dict().

Directories (Ray's way): Checkpoint.from_directory(d) stores d's files (any bytes); on a committed
checkpoint as_directory() (a context manager) and to_directory(path) give them back, in a run or
after it (Checkpoint.open(run_dir_or_checkpoint_dir)). _directory.py holds the layout.

Stored dtypes are trainrt's (float32, float64, int32, int64, uint8); others are stored widened
(bool, int8, int16, uint16 -> int32 or uint8; uint32 -> int64; float16 -> float32; uint64 as int64
bits) with the original dtype recorded, and come back as they were.
"""
import contextlib
import json
import os
import shutil
import tempfile

import numpy as np

from . import _directory

STORED = {np.dtype(t) for t in ("float32", "float64", "int32", "int64", "uint8")}
WIDENED = {"bool": "uint8", "int8": "int32", "int16": "int32", "uint16": "int32", "uint32": "int64",
           "float16": "float32"}
DTYPES_ATTRIBUTE = "_dtypes"
STRUCTURE_PREFIX = "_structure."
RANK_SUFFIX = ".by_rank"
LONG_INT_LIST = 16  # int lists/tuples longer than this are stored as int64 tensors


def _storable(name, value):
    """(array in a stored dtype, original dtype name or None)."""
    array = np.ascontiguousarray(np.asarray(value))
    if array.dtype in STORED:
        return array, None
    original = array.dtype.name
    if original == "uint64":
        return np.ascontiguousarray(array.view(np.int64)), original
    if original not in WIDENED:
        raise TypeError(f"trainrt.Checkpoint: '{name}' has dtype {original}, which trainrt cannot store "
                        f"(numbers only: float, int, uint, bool)")
    return array.astype(WIDENED[original]), original


def _restored(array, original):
    if original is None:
        return array
    if original == "uint64":
        return array.view(np.uint64)
    return array.astype(original)


def _check_name(name):
    if not name or "/" in name:
        raise ValueError(f"trainrt.Checkpoint: bad name {name!r} (non-empty, no '/')")


class Checkpoint:
    def __init__(self, values=None):
        self._tensors = {}      # name -> array (replicated)
        self._per_rank = {}     # name -> array (this rank's row)
        self._attributes = {}   # name -> int | float | str
        self._dtypes = {}       # name -> original dtype
        self._committed = None
        self._directory = None  # from_directory(): the directory whose files are saved
        self._private = set()   # names of replicated arrays that are private copies (see _mark_private)
        for name, value in (values or {}).items():
            self[name] = value

    @classmethod
    def from_directory(cls, path):
        """A checkpoint of the files under `path` (read when it is reported: keep the directory until
        report() returns). Ranks may pass one or None: the reported directories are merged."""
        checkpoint = cls()
        checkpoint._directory = os.fspath(path)
        _directory.listing(checkpoint._directory)  # a missing directory fails here, not in report()
        return checkpoint

    @classmethod
    def open(cls, path):
        """A committed checkpoint outside a run: a run directory (its newest valid checkpoint) or a
        checkpoint directory (runs/NAME/checkpoints/checkpoint_NNNNNN), verified first."""
        from . import _trainrt
        return cls._from_committed(_trainrt.open_checkpoint(os.fspath(path)))

    def has_values(self):
        """Tensors, per-rank values or attributes besides a directory."""
        return bool(self._tensors or self._per_rank or self._attributes)

    @contextlib.contextmanager
    def as_directory(self):
        """The checkpoint's files in a directory for the `with` block: the directory itself for an
        unsaved from_directory() checkpoint, else a temporary copy removed afterwards."""
        if self._committed is None:
            yield self._need_directory()
            return
        copy = _directory.temporary_copy(self._need_directory_committed())
        try:
            yield copy
        finally:
            _directory.remove(copy)

    def to_directory(self, path=None):
        """Writes the files into `path` (a new temporary directory when None); returns it."""
        target = os.fspath(path) if path is not None else tempfile.mkdtemp(prefix="trainrt_checkpoint_")
        if self._committed is None:
            shutil.copytree(self._need_directory(), target, dirs_exist_ok=True)
            return target
        return _directory.write_files(self._need_directory_committed(), target)

    def _need_directory(self):
        if self._directory is None:
            raise ValueError("trainrt.Checkpoint: not a directory checkpoint (make one with Checkpoint.from_directory)")
        return self._directory

    def _need_directory_committed(self):
        committed = self._committed
        if _directory.BYTES not in committed.tensor_names():
            raise ValueError(f"trainrt.Checkpoint: {committed.path} holds no directory (it was saved as tensors "
                             f"and values: read them with ckpt[name], to_dict() or trainrt.torch.load_state)")
        return committed

    # --- building ---
    def __setitem__(self, name, value):
        _check_name(name)
        if isinstance(value, (bool, int, float, str)):
            self._attributes[name] = value
        else:
            self._tensors[name], original = _storable(name, value)
            if original:
                self._dtypes[name] = original

    def per_rank(self, name, value):
        """This rank's own value of `name`: every rank contributes one; rank_value() reads it back."""
        _check_name(name)
        self._per_rank[name], original = _storable(name, value)
        if original:
            self._dtypes[name + RANK_SUFFIX] = original
        return self

    def structure(self, name, obj=None, to_array=None):
        """Saves (obj given) or, on a restored checkpoint, returns the nested structure `name`.
        to_array turns a leaf into an array (e.g. a torch tensor); None for leaves it does not take."""
        if obj is None:
            return leaves_to(self._read_structure(name), lambda leaf: leaf.array)
        _check_name(name)
        skeleton = self._flatten(name, obj, to_array or (lambda leaf: None))
        self._attributes[STRUCTURE_PREFIX + name] = json.dumps(skeleton, allow_nan=True)
        return self

    def _flatten(self, path, obj, to_array):
        if obj is None or isinstance(obj, (bool, str)):
            return {"v": obj}
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            return {"v": obj}
        if isinstance(obj, dict):
            return {"d": [[key, self._flatten(f"{path}.{str(key).replace('/', '%2F')}", value, to_array)]
                          for key, value in obj.items()]}
        if isinstance(obj, (list, tuple)):
            kind = "l" if isinstance(obj, list) else "tu"
            if len(obj) > LONG_INT_LIST and all(type(x) is int and -2**63 <= x < 2**63 for x in obj):
                self._tensors[path] = np.asarray(obj, dtype=np.int64)
                return {"ints": path, "seq": kind}
            return {kind: [self._flatten(f"{path}.{i}", value, to_array) for i, value in enumerate(obj)]}
        array = to_array(obj)
        kind = "torch" if array is not None else "numpy"
        if array is None:
            array = obj
        array = np.asarray(array)
        if array.size == 0:
            return {"empty": array.dtype.name, "shape": list(array.shape), "kind": kind}
        self._tensors[path], original = _storable(path, array.reshape(-1) if array.ndim == 0 else array)
        if original:
            self._dtypes[path] = original
        return {"t": path, "shape": list(array.shape), "kind": kind}

    def _mark_private(self, arrays):
        """The tensors held by one of `arrays` are private copies that nothing else holds or
        changes (trainrt.torch's pinned staging of CUDA tensors): a background snapshot may copy
        them after report() returns ([checkpoint] snapshot = background), while the function trains."""
        ids = {id(array) for array in arrays}
        self._private |= {name for name, array in self._tensors.items() if id(array) in ids}

    def _private_names(self):
        return {name for name in self._private if name in self._tensors}

    def _parts(self, context, allreduce=None):
        """(tensors, attributes) for trainrt._trainrt's report(). allreduce (collective, given when
        any rank of this report has a directory): this rank's directory parts, empty without one."""
        tensors = [(name, array, True, [], []) for name, array in self._tensors.items()]
        if allreduce is not None:
            tensors += _directory.tensor_parts(self._directory, context, allreduce)
        world, rank = context["world_size"], context["world_rank"]
        for name, array in self._per_rank.items():
            row = array.reshape((1,) + array.shape)
            tensors.append((name + RANK_SUFFIX, row, False, [world] + list(array.shape), [rank] + [0] * array.ndim))
        attributes = list(self._attributes.items())
        if self._dtypes:
            attributes.append((DTYPES_ATTRIBUTE, json.dumps(self._dtypes)))
        return tensors, attributes

    # --- reading (a committed checkpoint) ---
    @classmethod
    def _from_committed(cls, committed):
        checkpoint = cls()
        checkpoint._committed = committed
        names = committed.attribute_names()
        checkpoint._attributes = {name: committed.attribute(name) for name in names}
        checkpoint._dtypes = json.loads(checkpoint._attributes.pop(DTYPES_ATTRIBUTE, "{}"))
        return checkpoint

    def _need_committed(self):
        if self._committed is None:
            raise RuntimeError("trainrt.Checkpoint: not a saved checkpoint (use trainrt.get_checkpoint())")
        return self._committed

    @property
    def path(self):
        """The checkpoint directory (a from_directory() checkpoint: its source directory)."""
        if self._committed is None and self._directory is not None:
            return self._directory
        return self._need_committed().path

    @property
    def iteration(self):
        return self._need_committed().iteration

    @property
    def world_size(self):
        return self._need_committed().world_size

    @property
    def attributes(self):
        """Small values, without trainrt's own bookkeeping (structures)."""
        return {k: v for k, v in self._attributes.items() if not k.startswith(STRUCTURE_PREFIX)}

    def tensor_names(self):
        if self._committed is None:
            return sorted(self._tensors)
        return [n for n in self._committed.tensor_names()
                if not n.endswith(RANK_SUFFIX) and not n.startswith(_directory.PREFIX)]

    def __contains__(self, name):
        return name in self._attributes or name in self.tensor_names()

    def __getitem__(self, name):
        if name in self._attributes:
            return self._attributes[name]
        if self._committed is None:
            return self._tensors[name]
        if name not in self._committed.tensor_names():
            raise KeyError(f"checkpoint {self._committed.path} has no tensor or attribute '{name}'")
        return _restored(self._committed.read(name), self._dtypes.get(name))

    def _rank_names(self):
        """Names of the per_rank values saved (committed) or added (unsaved)."""
        if self._committed is None:
            return set(self._per_rank)
        return {n[:-len(RANK_SUFFIX)] for n in self._committed.tensor_names() if n.endswith(RANK_SUFFIX)}

    def rank_value(self, name, rank):
        """Rank `rank`'s per_rank value, or None when the saving run had no such rank."""
        committed = self._need_committed()
        stored = name + RANK_SUFFIX
        if stored not in committed.tensor_names():
            return None
        shape = committed.global_shape(stored)
        if rank >= shape[0]:
            return None
        row = committed.read(stored, [rank] + [0] * (len(shape) - 1), [1] + list(shape[1:]))
        return _restored(row.reshape(shape[1:]), self._dtypes.get(stored))

    def _read_structure(self, name):
        text = self._attributes.get(STRUCTURE_PREFIX + name)
        if text is None:
            raise KeyError(f"checkpoint {self._need_committed().path} has no saved structure '{name}'")
        return self._unflatten(json.loads(text))

    def _unflatten(self, node):
        if "v" in node:
            return node["v"]
        if "d" in node:
            return {key: self._unflatten(value) for key, value in node["d"]}
        if "l" in node:
            return [self._unflatten(value) for value in node["l"]]
        if "tu" in node:
            return tuple(self._unflatten(value) for value in node["tu"])
        if "ints" in node:
            values = [int(x) for x in self[node["ints"]]]
            return values if node["seq"] == "l" else tuple(values)
        if "empty" in node:
            return _Leaf(np.zeros(node["shape"], dtype=node["empty"]), node["kind"])
        return _Leaf(self[node["t"]].reshape(node["shape"]), node["kind"])

    def to_dict(self):
        """Every tensor (as numpy arrays) and attribute."""
        out = {name: self[name] for name in self.tensor_names()}
        out.update(self.attributes)
        return out

    def __repr__(self):
        if self._committed is None and self._directory is not None:
            return f"Checkpoint(directory {self._directory})"
        where = self._committed.path if self._committed is not None else "unsaved"
        return f"Checkpoint({where}: tensors {self.tensor_names()}, attributes {sorted(self.attributes)})"


class _Leaf:
    """An array read back from a structure, with the kind it was saved as ("torch" or "numpy")."""

    __slots__ = ("array", "kind")

    def __init__(self, array, kind):
        self.array = array
        self.kind = kind


def leaves_to(obj, convert):
    """obj with every _Leaf replaced by convert(leaf)."""
    if isinstance(obj, _Leaf):
        return convert(obj)
    if isinstance(obj, dict):
        return {key: leaves_to(value, convert) for key, value in obj.items()}
    if isinstance(obj, list):
        return [leaves_to(value, convert) for value in obj]
    if isinstance(obj, tuple):
        return tuple(leaves_to(value, convert) for value in obj)
    return obj
