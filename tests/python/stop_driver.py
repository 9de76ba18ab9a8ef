"""Ray's RunConfig(stop={...}) on trainrt (tests/python/test_python_stop_criteria.sh): a function
reporting acc = step x rate for steps 1..10, each report with a checkpoint, ended by the stop dict
{"acc": 0.35}; as a 2-rank TorchTrainer-style fit() (STOP_MODE=fit), as a Tuner over two rates
(STOP_MODE=tune), and with a callable (STOP_MODE=callable), which is refused."""
import json
import os
import sys

import numpy as np

import trainrt
from trainrt import tune


def steps(config):
    start = trainrt.get_checkpoint()
    first = int(start["step"][0]) + 1 if start else 1
    for step in range(first, 11):
        trainrt.report({"step": step, "acc": round(step * config["rate"], 6)},
                       checkpoint=trainrt.Checkpoint({"step": np.array([step])}))


if __name__ == "__main__":
    mode, runs = os.environ["STOP_MODE"], os.environ["STOP_RUNS"]
    stop = (lambda trial_id, result: result["acc"] >= 0.35) if mode == "callable" else {"acc": 0.35}
    try:
        run_config = trainrt.RunConfig(name=mode, storage_path=runs, stop=stop)
        if mode == "tune":
            results = tune.Tuner(steps, param_space={"rate": tune.grid_search([0.1, 0.2])},
                                 tune_config=tune.TuneConfig(metric="acc", mode="max", max_concurrent_trials=1),
                                 run_config=run_config).fit()
            print("driver: " + json.dumps([{"rate": r.config["rate"], "status": r.status, "rows": len(r.metrics_dataframe),
                                            "acc": r.metrics["acc"]} for r in results]))
        else:
            trainer = trainrt.DataParallelTrainer(steps, train_loop_config={"rate": 0.1}, run_config=run_config,
                                                  scaling_config=trainrt.ScalingConfig(num_workers=2))
            result = trainer.fit()
            print("driver: " + json.dumps({"rows": len(result.metrics_dataframe), "acc": result.metrics["acc"],
                                           "step": int(result.checkpoint["step"][0]), "error": repr(result.error)}))
    except NotImplementedError as error:
        print(f"driver: refused: {error}")
        sys.exit(3)
