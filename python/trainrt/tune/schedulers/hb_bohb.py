"""Ray Tune's `ray.tune.schedulers.hb_bohb` after the port: HyperBandForBOHB (schedulers/__init__.py)."""
from . import HyperBandForBOHB

__all__ = ["HyperBandForBOHB"]
