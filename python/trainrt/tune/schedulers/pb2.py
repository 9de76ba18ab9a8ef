"""ray.tune.schedulers.pb2 after the port: Ray's PB2 (`from trainrt.tune.schedulers.pb2 import PB2`)."""
from . import PB2

__all__ = ["PB2"]
