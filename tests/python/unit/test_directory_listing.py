"""The directory checkpoint's file listing (trainrt.Checkpoint.from_directory): every regular
file under the root with its size, sorted, links followed; a missing root is refused."""
import os

import pytest

from trainrt import _directory


def test_listing_is_sorted_relative_paths_and_sizes(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "weights.pt").write_bytes(b"x" * 10)
    (tmp_path / "a.json").write_text("{}")
    os.symlink(tmp_path / "a.json", tmp_path / "link.json")
    assert _directory.listing(str(tmp_path)) == [["a.json", 2], ["b/weights.pt", 10], ["link.json", 2]]


def test_a_missing_directory_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        _directory.listing(str(tmp_path / "missing"))
