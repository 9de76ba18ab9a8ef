"""A Ray Tune user's script on trainrt (tests/python/test_python_tuner.sh): a training function
(gradient descent on (w - 3)^2, checkpointing w and the epoch) swept over its learning rate with
ASHA from a plain python3: Tuner(...).fit() -> ResultGrid."""
import os
import sys

import numpy as np

import trainrt
from trainrt import tune


def raising_func(config):
    """train_func, but rank 1 raises at epoch 2 in the trial with lr 0.01 (unless TUNER_RAISE=0)."""
    context = trainrt.get_context()
    for epoch in range(1, config["epochs"] + 1):
        if config["lr"] == 0.01 and epoch == 2 and context.get_world_rank() == 1 and os.environ.get("TUNER_RAISE") != "0":
            raise ValueError("rank 1 cannot go on")
        trainrt.report({"epoch": epoch, "loss": (1 - config["lr"]) ** epoch})


def train_func(config):
    checkpoint = trainrt.get_checkpoint()
    w = float(checkpoint["w"][0]) if checkpoint else 0.0
    start = int(checkpoint.attributes["epoch"]) if checkpoint else 0
    for epoch in range(start + 1, config["epochs"] + 1):
        for _ in range(20):
            w -= config["lr"] * 2 * (w - 3.0)
        trainrt.report({"epoch": epoch, "loss": (w - 3.0) ** 2},
                       checkpoint=trainrt.Checkpoint({"w": np.array([w]), "epoch": epoch}))


def objective(config):
    """Ray Tune's README quickstart trainable: returns its metrics instead of reporting them."""
    return {"score": config["a"] ** 2 + config["b"]}


def returns():
    """The quickstart's sweep: no metric in TuneConfig, named at get_best_result instead."""
    tuner = tune.Tuner(objective, param_space={"a": tune.grid_search([0.1, 1.0]), "b": tune.grid_search([1, 2])},
                       run_config=trainrt.RunConfig(name=os.environ["TUNER_NAME"], storage_path=os.environ["TUNER_RUNS"]))
    results = tuner.fit()
    best = results.get_best_result(metric="score", mode="min")
    print(f"driver: {len(results)} trials, best config {best.config}, score {best.metrics['score']:.4g}, "
          f"iterations {sorted(r.metrics['training_iteration'] for r in results)}", flush=True)
    try:
        results.get_best_result()
    except ValueError as error:
        print(f"driver: without a metric: {error}", flush=True)


def with_data(config, data=None, scale=1):
    """A trainable that needs objects besides its config (tune.with_parameters)."""
    return {"total": float(data.sum()) * config["k"] * scale}


def parameters():
    """tune.with_parameters(with_data, data=array, scale=10): every trial gets the same objects."""
    trainable = tune.with_parameters(with_data, data=np.arange(5.0), scale=10)
    print(f"driver: called directly {trainable({'k': 1})['total']}", flush=True)
    # Ray's async_hyperband example wraps its function so: one CPU a trial, no GPU.
    results = tune.Tuner(tune.with_resources(trainable, {"cpu": 1, "gpu": 0}), param_space={"k": tune.grid_search([1, 2])},
                         tune_config=tune.TuneConfig(metric="total", mode="max"),
                         run_config=trainrt.RunConfig(name=os.environ["TUNER_NAME"],
                                                      storage_path=os.environ["TUNER_RUNS"])).fit()
    print(f"driver: totals {sorted(r.metrics['total'] for r in results)}, best k {results.get_best_result().config['k']}",
          flush=True)
    try:
        tune.with_resources(with_data, {"cpu": 0.5})
    except ValueError as error:
        print(f"driver: with_resources: {error}", flush=True)


def restore():
    """Tuner.can_restore / restore of the --raise sweep: restart_errored refused, then resume_errored."""
    runs = os.environ["TUNER_RUNS"]
    path = os.path.join(runs, os.environ["TUNER_NAME"])
    trainable = trainrt.DataParallelTrainer(raising_func, scaling_config=trainrt.ScalingConfig(num_workers=2))
    print(f"driver: can_restore {tune.Tuner.can_restore(path)} {tune.Tuner.can_restore(runs)}", flush=True)
    try:
        tune.Tuner.restore(path, trainable, restart_errored=True)
    except NotImplementedError as error:
        print(f"driver: refused: {error}", flush=True)
    results = tune.Tuner.restore(path, trainable, resume_errored=True).fit()
    print("driver: statuses " + " ".join(f"{r.config['lr']}:{r.status}" for r in results), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--restore"]:
        restore()
        sys.exit(0)
    if sys.argv[1:] == ["--returns"]:
        returns()
        sys.exit(0)
    if sys.argv[1:] == ["--with-parameters"]:
        parameters()
        sys.exit(0)
    # The grid one trial at a time, best rate first: ASHA's decisions are then the same every run.
    space, samples, at_once = {"lr": tune.grid_search([0.1, 0.01, 0.001]), "epochs": 9}, 1, 1
    scheduler, search = tune.ASHAScheduler(max_t=9, grace_period=1), None
    if sys.argv[1:] == ["--optuna"]:
        space, samples, at_once = {"lr": tune.loguniform(1e-3, 1e-1), "epochs": 9}, 4, None
        search = tune.OptunaSearch(n_startup_trials=2)
    if sys.argv[1:] == ["--pbt"]:
        space, samples, at_once = {"lr": 0.001, "epochs": 6}, 4, None
        scheduler = tune.PopulationBasedTraining(perturbation_interval=2, quantile_fraction=0.25, resample_probability=0,
                                                 hyperparam_mutations={"lr": tune.loguniform(1e-3, 1e-1)})
    trainable, failure = train_func, None
    if sys.argv[1:] == ["--raise"]:  # 2-rank trials, each retried once (Ray's FailureConfig)
        space, samples, at_once = {"lr": tune.grid_search([0.1, 0.01, 0.001]), "epochs": 3}, 1, 1
        scheduler, failure = None, trainrt.FailureConfig(max_failures=1)
        trainable = trainrt.DataParallelTrainer(raising_func, scaling_config=trainrt.ScalingConfig(num_workers=2))
    tuner = tune.Tuner(trainable, param_space=space,
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=samples,
                                                   max_concurrent_trials=at_once, scheduler=scheduler,
                                                   search_alg=search),
                       run_config=trainrt.RunConfig(name=os.environ["TUNER_NAME"], storage_path=os.environ["TUNER_RUNS"],
                                                    failure_config=failure))
    results = tuner.fit()
    best = results.get_best_result()
    frame = results.get_dataframe()
    w = f"{float(best.checkpoint['w'][0]):.4f}" if best.checkpoint else "none"
    print(f"driver: {len(results)} trials, {results.num_errors} errors, best lr {best.config['lr']}, "
          f"best loss {best.metrics['loss']:.3g}, epochs {best.metrics['epoch']}, checkpoint w "
          f"{w}, dataframe rows {len(frame)} with config/lr {'config/lr' in frame.columns}", flush=True)
    print("driver: statuses " + " ".join(f"{r.config['lr']}:{r.status}" for r in results), flush=True)
