"""trainrt.tune's search-space functions: the [space] text each writes for `trainrt tune`, and the
values it refuses."""
import pytest

from trainrt import tune


@pytest.mark.parametrize("domain, text", [
    (tune.choice([32, 64, "adam", True]), "choice(32, 64, adam, true)"),
    (tune.grid_search([0.1, 0.01]), "grid(0.1, 0.01)"),
    (tune.uniform(0.0, 1.0), "uniform(0.0, 1.0)"),
    (tune.quniform(0, 1, 0.25), "quniform(0, 1, 0.25)"),
    (tune.loguniform(1e-4, 1e-1), "loguniform(0.0001, 0.1)"),
    (tune.randint(1, 10), "randint(1, 10)"),
    (tune.qrandint(0, 100, 5), "qrandint(0, 100, 5)"),
    (tune.randn(), "randn(0.0, 1.0)"),
])
def test_domain_text(domain, text):
    assert repr(domain) == text


def test_grid_search_counts_its_points():
    assert tune.grid_search(range(3)).points == 3
    assert tune.choice([1, 2, 3]).points is None


@pytest.mark.parametrize("value", [None, [1, 2], {"a": 1}, 1j])
def test_non_scalar_values_are_refused(value):
    with pytest.raises(TypeError, match="cannot be a search value"):
        tune.choice([1, value])


def test_trial_values_come_back_typed_and_named_as_the_function_sees_them():
    assert tune._config_key("train.lr") == "lr"
    assert tune._config_key("scaling.num_workers") == "scaling.num_workers"
    assert [tune._parsed(text) for text in ("3", "0.5", "adam", "1e-3")] == [3, 0.5, "adam", 0.001]


def test_a_pbt_mutation_function_is_a_function_domain_drawn_with_the_sweeps_seed():
    import random
    from trainrt import _pbt_mutation
    pbt = tune.PopulationBasedTraining(hyperparam_mutations={"lr": lambda: random.uniform(1e-4, 2e-2),
                                                             "factor": [1, 2]})
    domains, started = pbt._sweep_space({}, tune._Domain, tune.choice)
    assert started == [] and repr(domains["factor"]) == "choice(1, 2)"
    text = repr(domains["lr"])
    assert text.startswith("function(") and text.endswith(")")
    request = '{"function": "%s", "seed": 7}' % text[len("function("):-1]
    first = float(_pbt_mutation.draw(request))
    assert 1e-4 <= first <= 2e-2
    assert float(_pbt_mutation.draw(request)) == first  # the same seed, the same value
    assert float(_pbt_mutation.draw(request.replace('"seed": 7', '"seed": 8'))) != first


def test_a_pbt_mutation_function_must_return_a_scalar():
    from trainrt import _entry, _pbt_mutation
    request = '{"function": "%s", "seed": 1}' % _pbt_mutation.pickled(lambda: [1, 2])
    with pytest.raises(_entry.LoadError, match="draws a number, a string or a boolean"):
        _pbt_mutation.draw(request)
