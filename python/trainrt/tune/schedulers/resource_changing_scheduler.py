"""ray.tune.schedulers.resource_changing_scheduler after the port: not provided (one line on import)."""
from . import not_provided

raise not_provided("ResourceChangingScheduler")
