"""trainrt.Result.from_path on a run directory: its rows (read where C++'s layout says they are),
its last row as metrics, a dataframe of every row, and no checkpoint when none was committed."""
import json

from trainrt import Result
from trainrt._trainrt import layout


def test_rows_metrics_and_dataframe(tmp_path):
    rows = [{"epoch": 1, "loss": 2.0}, {"epoch": 2, "loss": 1.5}]
    with open(layout.results(str(tmp_path)), "w") as file:
        file.writelines(json.dumps(row) + "\n" for row in rows)
    result = Result.from_path(str(tmp_path))
    assert result.metrics == rows[-1]
    assert result.metrics_dataframe["loss"].tolist() == [2.0, 1.5]
    assert list(result.metrics_dataframe.columns) == ["epoch", "loss"]  # no autofilled fields: no Ray names
    assert result.checkpoint is None and result.best_checkpoints == []
    assert result.path == str(tmp_path)


def test_a_run_directory_without_rows(tmp_path):
    result = Result.from_path(str(tmp_path))
    assert result.metrics == {} and result.checkpoint is None


def test_layout_names_the_run_files(tmp_path):
    assert layout.results("/r") == "/r/result.jsonl" and layout.events("/r") == "/r/events.jsonl"
    assert layout.checkpoints(str(tmp_path)) == []


def test_rays_names_for_the_autofilled_fields(tmp_path):
    """Ray Tune's names beside trainrt's own: results_df["time_total_s"] works as in Ray's docs."""
    row = {"loss": 1.0, "_training_iteration": 3, "_timestamp": 1795813348.75, "_time_this_iter_s": 0.5,
           "_time_total_s": 1.5}
    with open(layout.results(str(tmp_path)), "w") as file:
        file.write(json.dumps(row) + "\n" + '{"loss": 2.0, "_training_it')  # a torn last line is left out
    result = Result.from_path(str(tmp_path))
    assert result.metrics["training_iteration"] == 3 and result.metrics["_training_iteration"] == 3
    assert result.metrics["time_this_iter_s"] == 0.5 and result.metrics["time_total_s"] == 1.5
    assert result.metrics["timestamp"] == 1795813348 and isinstance(result.metrics["timestamp"], int)
    assert len(result.metrics["date"]) == len("2026-11-27_20-55-48")
    assert result.metrics_dataframe["time_total_s"].min() == 1.5
