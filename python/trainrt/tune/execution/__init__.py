"""ray.tune.execution after the port: Ray's trial execution (placement groups, its TuneController)
has no counterpart: trainrt's sweep places each trial's ranks in the Slurm allocation (one line
on import)."""
raise ImportError("trainrt.tune.execution (PlacementGroupFactory, TuneController) is not provided: a sweep places "
                  "each trial's ranks and cores in the Slurm allocation; give a trial's resources with "
                  "tune.with_resources(trainable, {'cpu': C})")
