"""PopulationBasedTraining(hyperparam_mutations={key: function}): Ray calls the function (of no
argument) to draw the key's value. The sweep (C++: the [space] domain function(PICKLE),
tune/search_space.hpp) asks here for each draw, with the function as trainrt.tune pickled it
(cloudpickle, base64, in sweep.ini) and the draw's seed: Python's and NumPy's generators are seeded
from it, so that a requeued sweep draws the same values."""
import base64
import json
import pickle
import random

from trainrt._entry import LoadError


def pickled(function):
    """The function as function(...)'s argument; a function cloudpickle cannot pickle is a TypeError."""
    try:
        import cloudpickle
    except ImportError as error:
        raise LoadError(f"tune: a function in hyperparam_mutations needs cloudpickle, which this Python cannot "
                        f"import ({error}); install it, or give the mutation as a domain (tune.uniform, ...)") from None
    try:
        return base64.b64encode(cloudpickle.dumps(function)).decode("ascii")
    except Exception as error:  # cloudpickle raises what the object's reducer raises
        raise TypeError(f"trainrt.tune.PopulationBasedTraining: hyperparam_mutations function {function!r} cannot be "
                        f"pickled ({error}); give it as a domain (tune.uniform, ...) or a list of values") from None


def draw(request_text):
    """JSON text of one value the function returns, drawn with the request's seed."""
    request = json.loads(request_text)
    function = pickle.loads(base64.b64decode(request["function"]))
    random.seed(request["seed"])
    try:
        import numpy
        numpy.random.seed(request["seed"] % 2**32)
    except ImportError:
        pass
    value = function()
    if hasattr(value, "item"):  # a NumPy scalar
        value = value.item()
    if not isinstance(value, (bool, int, float, str)):
        raise LoadError(f"tune: the hyperparam_mutations function {function!r} returned {value!r}: a mutation "
                        f"draws a number, a string or a boolean")
    return json.dumps(value)
