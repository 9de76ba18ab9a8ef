"""The names of a Ray Tune result's fields (`ray.tune.result`), for scripts that spell them by
constant: `result[SHOULD_CHECKPOINT] = True`, `stop={TRAINING_ITERATION: 10}`. trainrt's result
rows carry the autofilled ones under these names (Result.metrics, a callback's `result`)."""

DONE = "done"
SHOULD_CHECKPOINT = "should_checkpoint"
TRAINING_ITERATION = "training_iteration"
TIME_THIS_ITER_S = "time_this_iter_s"
TIME_TOTAL_S = "time_total_s"
TIMESTEPS_TOTAL = "timesteps_total"
EPISODES_TOTAL = "episodes_total"
TRIAL_ID = "trial_id"
CONFIG_PREFIX = "config"
