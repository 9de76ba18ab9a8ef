"""PyTorch helpers (Ray Train's ray.train.torch): DDP and data set up for the user, and
checkpoints of state_dicts with no pickle.

    model = trainrt.torch.prepare_model(MyNet())        # DDP over the default process group
    loader = trainrt.torch.prepare_data_loader(loader)  # DistributedSampler; set_epoch for you
    ckpt = trainrt.torch.state_dict_checkpoint(model=model, optimizer=opt, loader=loader, epoch=e)
    values = trainrt.torch.load_state(ckpt, model=model, optimizer=opt, loader=loader)  # {"epoch": e}

A state_dict checkpoint holds every tensor of each object's state_dict as an HDF5 dataset named
"<object>.<state_dict key>" (e.g. "model.fc1.weight", "optimizer.state.0.momentum_buffer"), the
rest of each state_dict as JSON attributes, plain values as attributes, and this rank's torch,
numpy and Python RNG states, so a resume continues bitwise where the saved run was.
"""
import weakref

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

from . import _rng, _state
from ._trainer import DataParallelTrainer
from .checkpoint import Checkpoint, leaves_to

LOADER_PREFIX = "_loader."
PER_RANK_PREFIX = "_per_rank."


class TorchTrainer(DataParallelTrainer):
    """Ray's TorchTrainer: the function runs on every rank with torch.distributed set up over
    trainrt's world (scaling.backend; docs/guides/python.md), DDP by prepare_model."""


def get_device():
    return torch.device(_state.device())


def prepare_model(model, move_to_device=True, **ddp_kwargs):
    """The model on this rank's device and, with more than one rank, wrapped in
    DistributedDataParallel over the default process group (one rank is not wrapped, as Ray).
    On 3 or more ranks gradients are averaged parameter by parameter (see _reduce_by_parameter),
    so a resumed run reduces exactly as the uninterrupted one."""
    device = get_device()
    if move_to_device:
        model = model.to(device)
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return model
    if device.type == "cuda":
        ddp_kwargs.setdefault("device_ids", [device.index])
    ddp = torch.nn.parallel.DistributedDataParallel(model, **ddp_kwargs)
    if dist.get_world_size() > 2:
        ddp.register_comm_hook(None, _reduce_by_parameter)
    return ddp


def _reduce_by_parameter(state, bucket):
    """DDP's averaging, one allreduce per parameter's slice of the bucket. PyTorch rebuilds DDP's
    buckets after the first iteration, so the first step after a resume has another bucket layout
    than the same step of an uninterrupted run; gloo's summation order depends on an element's
    position in the reduced buffer, and on 3 or more ranks (a + b + c is not associative in float)
    the two runs would drift apart. Per parameter, an element's position never changes."""
    buffer = bucket.buffer()
    world = dist.get_world_size()
    buffer.div_(world)
    futures, offset = [], 0
    for grad in bucket.gradients():
        piece = buffer[offset:offset + grad.numel()]
        futures.append(dist.all_reduce(piece, async_op=True).get_future())
        offset += grad.numel()
    return torch.futures.collect_all(futures).then(lambda _: buffer)


class _ResumableSampler(DistributedSampler):
    """DistributedSampler that can start an epoch past its first `skip` samples (a resume in the
    middle of an epoch) and remembers an epoch the user set (Ray's loader.sampler.set_epoch(e))."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.skip = 0
        self.requested_epoch = None

    def set_epoch(self, epoch):
        self.requested_epoch = int(epoch)
        super().set_epoch(epoch)

    def __iter__(self):
        indices = list(super().__iter__())
        skip, self.skip = self.skip, 0
        return iter(indices[skip:])

    def __len__(self):
        return self.num_samples - self.skip


class TrainrtDataLoader:
    """A DataLoader over this rank's DistributedSampler shard that calls set_epoch for the user
    (each pass over it is the next epoch; an epoch the user sets with loader.sampler.set_epoch(e)
    wins) and knows its position, which every checkpoint passed to report() carries."""

    def __init__(self, loader, sampler, device=None):
        self.loader = loader
        self.sampler = sampler
        self.device = device  # a CUDA device batches are moved to, or None
        self.epoch = 0
        self.batches = 0  # batches of the current epoch already yielded
        self.unrestored = None  # the checkpoint taken that held no position for this loader

    def __len__(self):
        return len(self.loader)

    def _begin_epoch(self):
        requested, self.sampler.requested_epoch = self.sampler.requested_epoch, None
        if requested is not None and requested != self.epoch:
            self.epoch, self.batches = requested, 0
        elif requested is None and self.unrestored is not None and self.sampler.shuffle:
            _state.log("warning", f"trainrt.torch: resumed from {self.unrestored}, which holds no position for "
                       f"a prepared data loader, and the function does not call loader.sampler.set_epoch(epoch): "
                       f"its shuffled order starts again at epoch {self.epoch}'s", once=True)
        self.unrestored = None
        DistributedSampler.set_epoch(self.sampler, self.epoch)

    def __iter__(self):
        self._begin_epoch()
        if self.batches:
            # Resuming mid-epoch: the uninterrupted run drew the DataLoader's base seed from the torch
            # RNG at the epoch's start, not here; keep the restored stream where it was.
            self.sampler.skip = self.batches * self.loader.batch_size
            rng = torch.get_rng_state()
            batches = iter(self.loader)
            torch.set_rng_state(rng)
        else:
            batches = iter(self.loader)
        for batch in batches:
            self.batches += 1
            yield batch if self.device is None else _to_device(batch, self.device)
        self.epoch += 1
        self.batches = 0

    def state_dict(self):
        return {"epoch": self.epoch, "batches": self.batches}

    def load_state_dict(self, state):
        self.epoch, self.batches = int(state["epoch"]), int(state["batches"])


def _prepared_loaders():
    """This session's prepared loaders, in the order the function prepared them (weak: a loader the
    function dropped is not saved)."""
    return _state.session_local("prepared_loaders", list)


def _loader_key(index):
    return f"{LOADER_PREFIX}_prepared{index}."


def _save_loader_positions(checkpoint):
    for index, ref in enumerate(_prepared_loaders()):
        loader = ref()
        if loader is not None:
            for key, number in loader.state_dict().items():
                checkpoint[_loader_key(index) + key] = number


def _restore_loader_position(checkpoint, index, loader):
    prefix = _loader_key(index)
    state = {k[len(prefix):]: v for k, v in checkpoint.attributes.items() if k.startswith(prefix)}
    if state:
        loader.load_state_dict(state)
    else:
        loader.unrestored = checkpoint.path


def _restore_loader_positions(checkpoint):
    for index, ref in enumerate(_prepared_loaders()):
        if (loader := ref()) is not None:
            _restore_loader_position(checkpoint, index, loader)


def _track(prepared):
    """Every checkpoint passed to report() carries the loader's position; a checkpoint the function
    took (get_checkpoint(), before or after preparing it) puts it back."""
    loaders = _prepared_loaders()
    loaders.append(weakref.ref(prepared))
    _state.add_checkpoint_hooks(_save_loader_positions, _restore_loader_positions)
    if (taken := _state.taken_checkpoint()) is not None:
        _restore_loader_position(taken, len(loaders) - 1, prepared)
    return prepared


def _to_device(batch, device):
    """The batch's tensors (also inside lists, tuples and dicts) on `device`, copied without
    waiting (from pinned memory the copy overlaps the host's next work; the stream orders it
    before the kernels that use it)."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        moved = [_to_device(item, device) for item in batch]
        return type(batch)(*moved) if hasattr(batch, "_fields") else type(batch)(moved)
    if isinstance(batch, dict):
        return {key: _to_device(value, device) for key, value in batch.items()}
    return batch


def prepare_data_loader(loader, seed=None, move_to_device=True):
    """`loader` rebuilt over a DistributedSampler (shuffled when it shuffled, with run.seed),
    keeping its batch size, collate_fn, workers and drop_last. Iterate it once per epoch. Its
    position (epoch, batches) travels in every checkpoint passed to report() and comes back when
    the function takes the checkpoint: a resume continues its order even when the function saves
    only `epoch` (load_state(loader=...) and state_dict_checkpoint(loader=...) still work).
    On a GPU run (scaling.use_gpu) batches come in pinned host memory and are moved to this
    rank's device (as Ray's); move_to_device=False leaves them on the host."""
    if not isinstance(loader, DataLoader):
        raise TypeError("trainrt.torch.prepare_data_loader: give a torch.utils.data.DataLoader")
    context = _state.context()
    shuffle = isinstance(loader.sampler, RandomSampler)
    if seed is None:
        seed = _state.settings().run.seed
    device = get_device() if move_to_device else torch.device("cpu")
    on_gpu = device.type == "cuda"
    sampler = _ResumableSampler(loader.dataset, num_replicas=context.world_size, rank=context.world_rank,
                                shuffle=shuffle, seed=seed, drop_last=False)
    workers = {"persistent_workers": loader.persistent_workers, "prefetch_factor": loader.prefetch_factor} \
        if loader.num_workers > 0 else {}
    rebuilt = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                         num_workers=loader.num_workers, collate_fn=loader.collate_fn,
                         pin_memory=loader.pin_memory or on_gpu, drop_last=loader.drop_last,
                         timeout=loader.timeout, worker_init_fn=loader.worker_init_fn, **workers)
    return _track(TrainrtDataLoader(rebuilt, sampler, device if on_gpu else None))


def _unwrapped(model):
    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model


# The dtypes a checkpoint stores unconverted (checkpoint.STORED): the only ones whose staged
# array nothing reads before wait().
_STORED_AS_IS = (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8)


class _HostStaging:
    """A checkpoint's tensors as numpy arrays. A CUDA tensor is copied into pinned host memory
    (PyTorch's caching host allocator: reused from one checkpoint to the next) without waiting, so
    all of a checkpoint's copies queue back to back on the current stream; wait() once, before
    any array is read."""

    def __init__(self):
        self.pending = False
        self.private = []  # the staged arrays: private copies (Checkpoint._mark_private)

    def __call__(self, leaf):
        if not isinstance(leaf, torch.Tensor):
            return None
        tensor = leaf.detach()
        if tensor.dtype == torch.bfloat16:
            raise TypeError("trainrt.torch: bfloat16 tensors are not stored yet; convert to float32 first")
        if not tensor.is_cuda or tensor.dtype not in _STORED_AS_IS:  # widened at once: read now
            return tensor.cpu().contiguous().numpy()
        host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        host.copy_(tensor, non_blocking=True)
        self.pending = True
        self.private.append(host.numpy())
        return self.private[-1]

    def wait(self):
        if self.pending:
            torch.cuda.current_stream().synchronize()
            self.pending = False


def _save_rng(checkpoint):
    _rng.save(checkpoint)


def _load_rng(checkpoint, rank):
    return _rng.restore(checkpoint, rank)


def state_dict_checkpoint(per_rank=None, **objects_and_values):
    """A trainrt.Checkpoint of modules (DDP unwrapped), optimizers, LR schedulers, prepared data
    loaders and anything with state_dict(), tensors and arrays, and plain values (epoch=3), plus
    this rank's RNG states. Objects and values are the same on every rank (rank 0's are saved);
    per_rank={"name": number or array} holds those that differ (a rank's running loss sum)."""
    checkpoint = Checkpoint()
    staging = _HostStaging()
    for name, value in (per_rank or {}).items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        checkpoint.per_rank(PER_RANK_PREFIX + name, np.atleast_1d(np.asarray(value)))
        checkpoint[PER_RANK_PREFIX + name + ".scalar"] = int(np.ndim(value) == 0)
    for name, value in objects_and_values.items():
        if isinstance(value, (bool, int, float, str)):
            checkpoint[name] = value
        elif isinstance(value, TrainrtDataLoader):
            for key, number in value.state_dict().items():
                checkpoint[f"{LOADER_PREFIX}{name}.{key}"] = number
        elif hasattr(value, "state_dict"):
            checkpoint.structure(name, _unwrapped(value).state_dict(), staging)
        else:
            checkpoint.structure(name, value, staging)
    staging.wait()
    checkpoint._mark_private(staging.private)
    _save_rng(checkpoint)
    return checkpoint


def _to_torch(leaf):
    return torch.from_numpy(np.array(leaf.array)) if leaf.kind == "torch" else np.array(leaf.array)


def load_state(checkpoint, **objects):
    """Puts a state_dict checkpoint back: each named object's state (model, optimizer, loader, ...)
    and this rank's RNG states. Returns the checkpoint's plain values ({"epoch": 3, ...}), this
    rank's per_rank values, and the saved values of names given as None."""
    for name, target in objects.items():
        if isinstance(target, TrainrtDataLoader):
            prefix = f"{LOADER_PREFIX}{name}."
            target.load_state_dict({k[len(prefix):]: v for k, v in checkpoint.attributes.items()
                                    if k.startswith(prefix)})
        elif target is not None and hasattr(target, "load_state_dict"):
            _unwrapped(target).load_state_dict(leaves_to(checkpoint._read_structure(name), _to_torch))
    rank = _state.context().world_rank
    _load_rng(checkpoint, rank)
    values = {k: v for k, v in checkpoint.attributes.items()
              if not k.startswith(LOADER_PREFIX) and not k.startswith(PER_RANK_PREFIX)}
    for key, scalar in checkpoint.attributes.items():  # this rank's per_rank values (None: no such rank)
        if key.startswith(PER_RANK_PREFIX) and key.endswith(".scalar"):
            value = checkpoint.rank_value(key[:-len(".scalar")], rank)
            values[key[len(PER_RANK_PREFIX):-len(".scalar")]] = value[0].item() if scalar and value is not None else value
    for name, target in objects.items():
        if target is None:
            values[name] = leaves_to(checkpoint._read_structure(name), _to_torch)
    return values
