"""Ray Tune names trainrt does not provide fail on import with one line that says what to use
instead, not with a bare ModuleNotFoundError (Ray's examples import them: the conformance
table shows the line)."""
import importlib

import pytest


@pytest.mark.parametrize("statement, says", [
    ("from trainrt.tune.schedulers import ASHAScheduler, ResourceChangingScheduler", "tune.with_resources"),
    ("from trainrt.tune.schedulers.resource_changing_scheduler import ResourceChangingScheduler", "with_resources"),
    ("from trainrt.tune.execution.placement_groups import PlacementGroupFactory", "tune.with_resources"),
    ("from trainrt.tune.examples.pbt_function import pbt_function", "port it with the same sed"),
    ("from trainrt.tune.search.ax import AxSearch", "use OptunaSearch"),
    ("from trainrt.tune.search.hebo import HEBOSearch", "BayesOptSearch"),
    ("from trainrt.tune.search.zoopt import ZOOptSearch", "NevergradSearch"),
])
def test_a_name_not_provided_is_one_line_on_import(statement, says):
    with pytest.raises(ImportError) as raised:
        exec(statement, {})
    message = str(raised.value)
    assert "not provided" in message or "not part of trainrt" in message
    assert says in message and "\n" not in message


def test_the_schedulers_trainrt_has_still_import_and_unknown_names_are_attribute_errors():
    schedulers = importlib.import_module("trainrt.tune.schedulers")
    assert schedulers.ASHAScheduler and schedulers.PopulationBasedTraining and schedulers.PB2
    assert importlib.import_module("trainrt.tune.schedulers.pb2").PB2 is schedulers.PB2
    with pytest.raises(AttributeError):
        schedulers.NoSuchScheduler  # noqa: B018
