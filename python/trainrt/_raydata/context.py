"""Ray Data's DataContext, as far as it means something here: execution_options.preserve_order.
trainrt always keeps the order (a plan runs in one process; each rank reads its shard in file or
epoch-shuffle order), so preserve_order = True is what happens, and False changes nothing but is
accepted (Ray only allows itself to reorder then). Other settings are refused by name."""


class ExecutionOptions:
    __slots__ = ("preserve_order", "locality_with_output", "verbose_progress")

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
