"""A FIFO sweep of a tune.Trainable (test_tune_trainable.py): two trials (grid over lr) of 5
iterations (stop={"training_iteration": 5}), CheckpointConfig(checkpoint_frequency=2,
checkpoint_at_end=True), a dict checkpoint; with FAIL_AT=N each trial's first attempt raises at
iteration N and FailureConfig(max_failures=1) retries it from its checkpoint. Prints one
`driver:` line per trial: lr, final total, the iteration it loaded a checkpoint at, iterations,
its checkpoints' iterations. Usage: trainable_fifo.py STORAGE_DIR"""
import os
import sys

from trainrt import tune


class Counter(tune.Trainable):
    def setup(self, config):
        self.lr, self.total, self.loaded = config["lr"], 0.0, 0

    def step(self):
        marker = os.path.join(self.logdir, "failed_once")
        if self.iteration + 1 == int(os.environ.get("FAIL_AT", "0")) and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("the first attempt fails here on purpose")
        self.total += self.lr
        return {"total": self.total, "loaded": self.loaded}

    def save_checkpoint(self, checkpoint_dir):
        return {"total": self.total}

    def load_checkpoint(self, checkpoint):
        self.total, self.loaded = checkpoint["total"], self.iteration


if __name__ == "__main__":
    tuner = tune.Tuner(Counter, param_space={"lr": tune.grid_search([1.0, 2.0])},
                       tune_config=tune.TuneConfig(metric="total", mode="max", max_concurrent_trials=1),
                       run_config=tune.RunConfig(name="fifo", storage_path=sys.argv[1], stop={"training_iteration": 5},
                                                 failure_config=tune.FailureConfig(max_failures=1),
                                                 checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2,
                                                                                         checkpoint_at_end=True)))
    for result in tuner.fit():
        kept = ",".join(str(int(os.path.basename(c.path).split("_")[-1])) for c, _ in result.best_checkpoints)
        print(f"driver: lr {result.config['lr']} total {result.metrics['total']} loaded {result.metrics['loaded']} "
              f"iterations {result.metrics['training_iteration']} checkpoints {kept}")
