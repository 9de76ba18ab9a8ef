"""Ray Train's Keras callback (`ray.train.tensorflow.keras.ReportCheckpointCallback`):

    model.fit(dataset, epochs=E, callbacks=[ReportCheckpointCallback()])

At each `report_metrics_on` event (default: an epoch's end) Keras's logs go to trainrt.report();
at each `checkpoint_on` event they go with the model, saved as model.keras in a directory
checkpoint (TensorflowCheckpoint.get_model reads it back). `metrics`: None (all of Keras's logs),
a name, a list of names, or {reported name: Keras's name}. Events are Keras's hooks less "on_"
("epoch_end", "train_batch_end", "test_end", ...), as Ray's.
"""
import types

import tensorflow as tf

from . import _report_model
from .. import _state

__all__ = ["ReportCheckpointCallback"]

_EVENTS = ("epoch_begin", "epoch_end", "train_batch_begin", "train_batch_end", "test_batch_begin",
           "test_batch_end", "predict_batch_begin", "predict_batch_end", "train_begin", "train_end",
           "test_begin", "test_end", "predict_begin", "predict_end")


def _events(argument, value):
    events = [value] if isinstance(value, str) else list(value)
    unknown = [event for event in events if event not in _EVENTS]
    if unknown:
        raise ValueError(f"trainrt.tensorflow.keras.ReportCheckpointCallback: {argument}={value!r} names "
                         f"{', '.join(unknown)}, not a Keras event; events: {', '.join(_EVENTS)}")
    return events


class ReportCheckpointCallback(tf.keras.callbacks.Callback):
    def __init__(self, checkpoint_on="epoch_end", report_metrics_on="epoch_end", metrics=None):
        super().__init__()
        self._checkpoint_on = _events("checkpoint_on", checkpoint_on)
        self._report_on = _events("report_metrics_on", report_metrics_on)
        if metrics is not None and not isinstance(metrics, (str, list, tuple, dict)):
            raise TypeError(f"trainrt.tensorflow.keras.ReportCheckpointCallback: metrics= is a "
                            f"{type(metrics).__name__}; pass a name, a list of names or {{reported: Keras name}}")
        self._metrics = metrics
        for event in set(self._checkpoint_on + self._report_on):
            setattr(self, f"on_{event}", types.MethodType(_hook(event), self))

    def _selected(self, logs):
        logs = logs or {}
        if self._metrics is None:
            chosen = dict(logs)
        elif isinstance(self._metrics, str):
            chosen = {self._metrics: logs[self._metrics]}
        elif isinstance(self._metrics, dict):
            chosen = {reported: logs[name] for reported, name in self._metrics.items()}
        else:
            chosen = {name: logs[name] for name in self._metrics}
        return {name: float(value) if hasattr(value, "__float__") else value for name, value in chosen.items()}

    def _handle(self, event, logs):
        if event in self._checkpoint_on:
            _report_model(self.model, self._selected(logs))
        else:
            _state.report(self._selected(logs))


def _hook(event):
    """The callback's handler of one Keras event. Only the events asked for get one, on the
    instance: Keras synchronises each batch's logs for a callback with batch hooks."""
    def on_event(self, *args, logs=None):
        if logs is None and args and isinstance(args[-1], dict):
            logs = args[-1]
        self._handle(event, logs)
    return on_event
