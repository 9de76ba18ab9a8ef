"""Each rank's random number generators in every checkpoint: Python's random, numpy's global
generator, torch's CPU generator (when the function imported torch) and, on a GPU run, the
generator of this rank's CUDA device, stored per rank. They are
saved with every checkpoint passed to report() and put back when the function takes its checkpoint
(get_checkpoint()), so dropout and shuffles after a resume draw what the uninterrupted run drew,
whatever the function saved itself. A rank the saving run did not have keeps its own streams."""
import random
import sys

import numpy as np

TORCH = "_rng.torch"
TORCH_CUDA = "_rng.torch_cuda"
NUMPY = "_rng.numpy"
NUMPY_GAUSS = "_rng.numpy.gauss"
PYTHON = "_rng.python"


def save(checkpoint):
    kind, keys, position, has_gauss, gauss = np.random.get_state()
    checkpoint.per_rank(NUMPY, np.concatenate([keys.astype(np.int64), [position, has_gauss]]))
    checkpoint.per_rank(NUMPY_GAUSS, np.array([gauss], dtype=np.float64))
    version, state, _ = random.getstate()
    checkpoint.per_rank(PYTHON, np.array(state, dtype=np.int64))
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        checkpoint.per_rank(TORCH, torch.get_rng_state().numpy())
        if torch.cuda.is_initialized():  # the current device's: the one trainrt bound for this rank
            checkpoint.per_rank(TORCH_CUDA, torch.cuda.get_rng_state().numpy())


def restore(checkpoint, rank):
    """False when the checkpoint holds no generators for `rank` (saved by fewer ranks, or before
    trainrt saved them)."""
    numpy_state = checkpoint.rank_value(NUMPY, rank) if NUMPY in checkpoint._rank_names() else None
    if numpy_state is None:
        return False
    gauss = checkpoint.rank_value(NUMPY_GAUSS, rank)
    np.random.set_state(("MT19937", numpy_state[:-2].astype(np.uint32), int(numpy_state[-2]),
                         int(numpy_state[-1]), float(gauss[0])))
    python_state = checkpoint.rank_value(PYTHON, rank)
    random.setstate((3, tuple(int(x) for x in python_state), None))
    torch_state = checkpoint.rank_value(TORCH, rank) if TORCH in checkpoint._rank_names() else None
    if torch_state is not None and "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_rng_state(torch.from_numpy(np.ascontiguousarray(torch_state, dtype=np.uint8)))
    cuda_state = checkpoint.rank_value(TORCH_CUDA, rank) if TORCH_CUDA in checkpoint._rank_names() else None
    if cuda_state is not None and "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
        torch = sys.modules["torch"]
        torch.cuda.set_rng_state(torch.from_numpy(np.ascontiguousarray(cuda_state, dtype=np.uint8)))
    return True
