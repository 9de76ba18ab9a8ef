"""ray.tune.search.zoopt after the port: not provided (one line on import)."""
from . import not_provided

raise not_provided("zoopt")
