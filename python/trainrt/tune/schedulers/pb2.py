"""ray.tune.schedulers.pb2 after the port: PB2 is not provided (one line on import)."""
from . import not_provided

raise not_provided("PB2")
