"""Columns: a dataset's rows in memory as {name: numpy array}, the first dimension the row, and the
batch formats Ray Data's functions take and return (numpy dicts, pandas DataFrames)."""
import numpy as np


def row_count(columns):
    return len(next(iter(columns.values()))) if columns else 0


def from_rows(rows, where):
    """Rows (dicts, or plain values: one column "item", as Ray's from_items) as columns."""
    rows = list(rows)
    if not rows:
        return {}
    if not all(isinstance(row, dict) for row in rows):
        if any(isinstance(row, dict) for row in rows):
            raise ValueError(f"trainrt.data.{where}: the items mix dicts and other values: give dicts only, or "
                             f"plain values only (one column 'item')")
        return {"item": _stacked([row for row in rows], "item", where)}
    names = list(rows[0])
    for index, row in enumerate(rows):
        if list(row) != names and set(row) != set(names):
            raise ValueError(f"trainrt.data.{where}: row {index} has the keys {sorted(row)}, row 0 has "
                             f"{sorted(names)}: every row needs the same keys")
    return {name: _stacked([row[name] for row in rows], name, where) for name in names}


def _stacked(values, name, where):
    try:
        return np.asarray(values) if not isinstance(values[0], np.ndarray) else np.stack(values)
    except ValueError as error:
        raise ValueError(f"trainrt.data.{where}: column '{name}' has rows of different shapes ({error}): give "
                         f"every row the same shape") from None


def to_rows(columns):
    count = row_count(columns)
    return [{name: array[index] for name, array in columns.items()} for index in range(count)]


def sliced(columns, start, stop):
    return {name: array[start:stop] for name, array in columns.items()}


def taken(columns, indices):
    return {name: array[indices] for name, array in columns.items()}


def joined(parts, where):
    """Column-wise concatenation of several parts with the same columns ({} when there are none)."""
    parts = [part for part in parts if part and row_count(part) > 0]
    if not parts:
        return {}
    names = list(parts[0])
    for part in parts[1:]:
        if set(part) != set(names):
            raise ValueError(f"trainrt.data.{where}: batches with the columns {sorted(part)} and {sorted(names)}: "
                             f"every batch a function returns needs the same columns")
    return {name: np.concatenate([part[name] for part in parts]) for name in names}


BATCH_FORMATS = ("default", "numpy", "pandas")


def check_format(batch_format, where):
    if batch_format not in BATCH_FORMATS:
        raise ValueError(f"trainrt.data.{where}: batch_format={batch_format!r}: use 'numpy' (the default: a dict "
                         f"of numpy arrays) or 'pandas'")


def as_format(columns, batch_format):
    if batch_format != "pandas":
        return dict(columns)
    import pandas
    return pandas.DataFrame({name: list(array) if array.ndim > 1 else array for name, array in columns.items()})


def from_output(output, where):
    """What a batch function returned (a dict of arrays or lists, a DataFrame) as columns."""
    if output is None:
        raise ValueError(f"trainrt.data.{where}: the function returned None: return the batch (a dict of "
                         f"arrays or a pandas DataFrame)")
    if hasattr(output, "to_dict") and hasattr(output, "columns"):  # a pandas DataFrame
        return {str(name): _from_series(output[name]) for name in output.columns}
    if not isinstance(output, dict):
        raise ValueError(f"trainrt.data.{where}: the function returned a {type(output).__name__}: return a dict of "
                         f"arrays or a pandas DataFrame")
    columns = {name: np.asarray(value) if not isinstance(value, np.ndarray) else value
               for name, value in output.items()}
    lengths = {name: len(array) for name, array in columns.items() if array.ndim > 0}
    if len(set(lengths.values())) > 1 or len(lengths) != len(columns):
        raise ValueError(f"trainrt.data.{where}: the returned batch's columns have lengths {lengths}: every column "
                         f"needs one value per row")
    return columns


def _from_series(series):
    values = series.to_numpy()
    if values.dtype == object and len(values) and isinstance(values[0], (np.ndarray, list, tuple)):
        return np.stack([np.asarray(value) for value in values])
    return values


def to_torch(batch, dtypes, device):
    """A numpy batch as torch tensors: dtypes one torch dtype or {column: dtype}; device "auto" is
    the rank's device (trainrt.torch.get_device())."""
    import torch
    if device == "auto":
        from .. import _state
        device = _state.device() if _state._handle is not None else "cpu"
    out = {}
    for name, array in batch.items():
        dtype = dtypes.get(name) if isinstance(dtypes, dict) else dtypes
        out[name] = torch.as_tensor(array, dtype=dtype, device=device)
    return out
