"""Ray's HorovodTrainer after the port is one ImportError line naming why and what to use
(docs/guides/horovod.md), not a bare ModuleNotFoundError."""
import pytest


@pytest.mark.parametrize("statement", ["from trainrt.horovod import HorovodTrainer",
                                       "from trainrt.horovod import HorovodConfig", "import trainrt.horovod"])
def test_horovod_is_one_line_on_import(statement):
    with pytest.raises(ImportError) as raised:
        exec(statement, {})
    message = str(raised.value)
    assert "not provided" in message and "C++17" in message and "TorchTrainer" in message and "\n" not in message
