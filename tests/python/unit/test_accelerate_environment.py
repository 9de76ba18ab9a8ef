"""What trainrt sets for Hugging Face Accelerate before a function runs (trainrt._entry): the
rank's device, and on CPU ranks of a multi-rank job ACCELERATE_USE_CPU, unless the job asks for
Accelerate's DeepSpeed plugin (which Accelerate drops from a "cpu" state) or set it itself."""
import pytest

from trainrt import _entry, _state

VARIABLES = ("ACCELERATE_TORCH_DEVICE", "ACCELERATE_USE_CPU", "ACCELERATE_USE_DEEPSPEED")


@pytest.fixture
def cpu_rank(monkeypatch):
    monkeypatch.setattr(_state, "device", lambda: "cpu")
    for name in VARIABLES:  # recorded by monkeypatch, so that what the tests set is undone
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def test_cpu_ranks_are_distributed_for_accelerate(cpu_rank, monkeypatch):
    _entry._accelerate_environment(2)
    assert _entry.os.environ["ACCELERATE_TORCH_DEVICE"] == "cpu"
    assert _entry.os.environ["ACCELERATE_USE_CPU"] == "true"


def test_one_rank_is_left_alone(cpu_rank):
    _entry._accelerate_environment(1)
    assert "ACCELERATE_USE_CPU" not in _entry.os.environ


def test_deepspeed_plugin_jobs_keep_accelerate_off_cpu(cpu_rank, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    _entry._accelerate_environment(2)
    assert "ACCELERATE_USE_CPU" not in _entry.os.environ


def test_the_users_own_setting_wins(cpu_rank, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_CPU", "false")
    _entry._accelerate_environment(2)
    assert _entry.os.environ["ACCELERATE_USE_CPU"] == "false"
