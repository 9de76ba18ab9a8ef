"""TensorFlow's op seeds in every checkpoint, as _rng.py keeps numpy's, Python's and torch's.
TensorFlow draws a seed for every random op and dataset made without one (a shuffle, an
initializer) from a Python random.Random that tf.random.set_seed starts; this rank's state of it
is saved with every checkpoint report() saves and put back when the function takes its checkpoint
(get_checkpoint()). A resumed run then makes the same random ops as the uninterrupted one, which
draw the same numbers: a fit() per reported epoch (Ray's guide's loop) resumes exactly.
What TensorFlow cannot save is not resumed exactly: the state of a random op's kernel that lives
on across the checkpoint (a dataset iterated over several epochs of one fit(), Keras 2's dropout
inside the traced train step, Keras 3's seed generators) draws anew after a resume
(docs/guides/tensorflow.md gives the measured difference)."""
import numpy as np
from tensorflow.python.eager import context as tf_context

from .. import _state

OP_SEEDS = "_tensorflow.op_seeds"


def install():
    _state.add_checkpoint_hooks(_save, _restore)


def _op_seed_generator():
    return tf_context.context()._rng  # None until a global seed is set (trainrt sets one)


def _save(checkpoint):
    generator = _op_seed_generator()
    if generator is not None:
        checkpoint.per_rank(OP_SEEDS, np.array(generator.getstate()[1], dtype=np.int64))


def _restore(checkpoint):
    generator = _op_seed_generator()
    if generator is None or OP_SEEDS not in checkpoint._rank_names():
        return
    state = checkpoint.rank_value(OP_SEEDS, _state.context().get_world_rank())
    if state is not None:
        generator.setstate((3, tuple(int(x) for x in state), None))
