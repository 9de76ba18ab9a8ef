"""Ray Data's DataContext, as far as it means something here: execution_options.preserve_order.
trainrt always keeps the order (a plan runs in one process; each rank reads its shard in file or
epoch-shuffle order), so preserve_order = True is what happens, and False changes nothing but is
accepted (Ray only allows itself to reorder then). locality_with_output and verbose_progress
change nothing here: setting either true is one warning line. Other settings are refused by name."""
import warnings


def _unused(name, why):
    """A property that holds what it is given and warns once per call site when it is set true."""
    slot = "_" + name

    def set_value(self, value):
        if value:
            warnings.warn(f"trainrt.data.DataContext: execution_options.{name} = {value!r} is not used: {why} "
                          f"(leave it unset)", stacklevel=2)
        setattr(self, slot, value)
    return property(lambda self: getattr(self, slot), set_value)


class ExecutionOptions:
    __slots__ = ("preserve_order", "_locality_with_output", "_verbose_progress")

    locality_with_output = _unused("locality_with_output", "each rank reads its own shard of the run's dataset "
                                                           "file where it runs (Ray's is a no-op too)")
    verbose_progress = _unused("verbose_progress", "trainrt.data shows no progress per operator: a plan runs in "
                                                   "rank 0's process when the run starts")

    def __init__(self, preserve_order=False, locality_with_output=False, verbose_progress=False):
        self.preserve_order = preserve_order
        self.locality_with_output = locality_with_output
        self.verbose_progress = verbose_progress


class DataContext:
    __slots__ = ("execution_options",)
    _current = None

    def __init__(self):
        self.execution_options = ExecutionOptions()

    @classmethod
    def get_current(cls):
        if cls._current is None:
            cls._current = cls()
        return cls._current
