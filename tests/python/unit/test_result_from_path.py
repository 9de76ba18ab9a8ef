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
    assert result.checkpoint is None and result.best_checkpoints == []
    assert result.path == str(tmp_path)


def test_a_run_directory_without_rows(tmp_path):
    result = Result.from_path(str(tmp_path))
    assert result.metrics == {} and result.checkpoint is None


def test_layout_names_the_run_files(tmp_path):
    assert layout.results("/r") == "/r/result.jsonl" and layout.events("/r") == "/r/events.jsonl"
    assert layout.checkpoints(str(tmp_path)) == []
