"""ray.tune.search.bohb after the port: not provided (one line on import)."""
from . import not_provided

raise not_provided("bohb")
