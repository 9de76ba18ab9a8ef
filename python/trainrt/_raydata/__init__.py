"""Ray Data's datasets on trainrt (docs/guides/ray-data.md): trainrt.data's constructors build lazy
datasets (dataset.py, readers.py), a Trainer's datasets= lands them in the run's dataset file when
the ranks start (ingest.py), and each rank streams its shard through trainrt's reader
(iterator.py)."""
