"""Ray Train's experiment-tracking guide, its W&B tab, after the sed: rank 0 alone logs to
Weights & Biases inside the training function, offline (WANDB_MODE=offline, as the guide's
offline mode: a local run that `wandb sync` uploads later) into the directory the config names
(train.wandb_dir, shared storage in a real job), the W&B run's id and name the run's name
(get_context().get_trial_name(), stable across requeues). The reported numbers are plain
arithmetic: the test compares W&B's history with result.jsonl."""
import wandb

import trainrt


def train_func(config):
    context = trainrt.get_context()
    if context.get_world_rank() == 0:
        wandb.init(dir=config["wandb_dir"], project=context.get_experiment_name(), name=context.get_trial_name(),
                   id=context.get_trial_name(), config=config)
    for epoch in range(config.get("epochs", 3)):
        metrics = {"loss": 1.0 / (epoch + 2), "epoch": epoch}
        if context.get_world_rank() == 0:
            wandb.log(metrics)
        trainrt.report(metrics)
    if context.get_world_rank() == 0:
        wandb.finish()
