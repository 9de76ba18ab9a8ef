"""Ray Data's preprocessors (ray.data.preprocessors after the port): fit() on a dataset, transform()
a dataset lazily, fit_transform() both. The ones Ray's Train guides and examples use:
Concatenator, StandardScaler, MinMaxScaler."""
import numpy as np

from .._raydata import columns as cols


class Preprocessor:
    _fits = True

    def __init__(self):
        self.stats_ = None

    def fit(self, dataset):
        self.stats_ = self._fit(dataset._columns()) if self._fits else {}
        return self

    def transform(self, dataset):
        if self._fits and self.stats_ is None:
            raise RuntimeError(f"trainrt.data.preprocessors.{type(self).__name__}: transform() before fit()")
        return dataset._derive(self._transform)

    def fit_transform(self, dataset):
        return self.fit(dataset).transform(dataset)

    def transform_batch(self, batch):
        return self._transform(dict(batch))

    def _fit(self, columns):
        return {}


def _needs(columns, names, who):
    missing = [name for name in names if name not in columns]
    if missing:
        raise ValueError(f"trainrt.data.preprocessors.{who}: no column {', '.join(map(repr, missing))} (the "
                         f"columns: {', '.join(columns)})")


def _statistics(columns, names, who, **reducers):
    """{"mean(col)": value, ...}: each reducer over each named column (Ray's stats_ names)."""
    _needs(columns, names, who)
    return {f"{kind}({name})": float(reduce(columns[name])) for kind, reduce in reducers.items() for name in names}


class Concatenator(Preprocessor):
    """The columns given (default: all but exclude) side by side in one [n, k] column, the others kept."""
    _fits = False

    def __init__(self, columns=None, output_column_name="concat_out", dtype=None, raise_if_missing=False,
                 exclude=None):
        super().__init__()
        self.columns, self.output_column_name, self.dtype = columns, output_column_name, dtype
        self.exclude = [exclude] if isinstance(exclude, str) else list(exclude or [])

    def _transform(self, columns):
        names = list(self.columns) if self.columns is not None else [n for n in columns if n not in self.exclude]
        _needs(columns, names, "Concatenator")
        parts = [np.asarray(columns[n]).reshape(cols.row_count(columns), -1) for n in names]
        joined = np.concatenate(parts, axis=1)
        out = {n: a for n, a in columns.items() if n not in names}
        out[self.output_column_name] = joined.astype(self.dtype) if self.dtype is not None else joined
        return out


class StandardScaler(Preprocessor):
    """(x - mean) / std per column, the statistics from fit() (population std; a constant column
    becomes 0, as Ray's)."""

    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, columns):
        return _statistics(columns, self.columns, "StandardScaler", mean=np.mean, std=np.std)

    def _transform(self, columns):
        _needs(columns, self.columns, "StandardScaler")
        out = dict(columns)
        for n in self.columns:
            std = self.stats_[f"std({n})"]
            out[n] = (columns[n] - self.stats_[f"mean({n})"]) / std if std else np.zeros(len(columns[n]))
        return out


class MinMaxScaler(Preprocessor):
    """(x - min) / (max - min) per column, from fit() (a constant column becomes 0)."""

    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, columns):
        return _statistics(columns, self.columns, "MinMaxScaler", min=np.min, max=np.max)

    def _transform(self, columns):
        out = dict(columns)
        for n in self.columns:
            low, span = self.stats_[f"min({n})"], self.stats_[f"max({n})"] - self.stats_[f"min({n})"]
            out[n] = (columns[n] - low) / span if span else np.zeros(len(columns[n]))
        return out
