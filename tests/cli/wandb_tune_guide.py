"""Ray Tune's W&B integration as Ray's tracking guide and its wandb example use it, written here
with Ray's names: WandbLoggerCallback(project=...) in the Tuner's run_config (a W&B run per trial
from the driver), and setup_wandb in the function trainable (a W&B run inside the trial). W&B runs
offline here (WANDB_MODE=offline: a local run that `wandb sync` uploads later), into WANDB_DIR.
tests/cli/test_tracking.sh runs it after the port (`ray` -> `trainrt`) and reads W&B's offline
logs back:

    python3 wandb_tune_guide.py STORAGE_DIR
"""
import sys

from ray import tune
from ray.air.integrations.wandb import WandbLoggerCallback, setup_wandb


def train_function(config):
    run = setup_wandb(config, project="wandb_example")
    for step in range(config["steps"]):
        loss = 1.0 / (1 + config["width"] * step)
        run.log({"fn_loss": loss})
        tune.report({"iterations": step, "mean_loss": loss})
    run.finish()


def main(storage):
    tuner = tune.Tuner(
        train_function,
        run_config=tune.RunConfig(name="wandb", storage_path=storage,
                                  callbacks=[WandbLoggerCallback(project="wandb_example")]),
        tune_config=tune.TuneConfig(metric="mean_loss", mode="min"),
        param_space={"width": tune.grid_search([1, 3]), "steps": 3},
    )
    results = tuner.fit()
    print("WANDB_TUNE best width", results.get_best_result().config["width"], flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
