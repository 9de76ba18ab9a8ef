# A Ray-style driver for tests/python/test_python_outcomes.sh. OUTCOME_MODE=fail: the function
# reports 3 times and then raises on every rank; the driver prints the TrainingFailedError and the
# error Result.from_path gives for its run directory. OUTCOME_MODE=finish: reports twice, returns.
# OUTCOME_MODE=crash_once, with FailureConfig(max_failures=1): rank 1 raises after the first
# report of the first attempt only (a marker file), then the function reports 3 times.
import os

import trainrt
from trainrt import DataParallelTrainer, FailureConfig, Result, RunConfig, ScalingConfig, TrainingFailedError


def train_func(config):
    marker = os.path.join(os.environ["OUTCOME_RUNS"], "crashed_once")
    for step in range(1, 4):
        trainrt.report({"step": step})
        if config["mode"] == "crash_once" and trainrt.get_context().get_world_rank() == 1 and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("rank 1 crashes once")
        if config["mode"] == "fail" and step == 3:
            raise ValueError("boom after step 3")
        if config["mode"] == "finish" and step == 2:
            return


if __name__ == "__main__":
    mode = os.environ["OUTCOME_MODE"]
    trainer = DataParallelTrainer(train_func, train_loop_config={"mode": mode},
                                  scaling_config=ScalingConfig(num_workers=2),
                                  run_config=RunConfig(storage_path=os.environ["OUTCOME_RUNS"], name=mode,
                                                       failure_config=FailureConfig(max_failures=1)
                                                       if mode == "crash_once" else None))
    try:
        result = trainer.fit()
        print(f"driver: fit returned, error {result.error!r}, metrics {result.metrics}", flush=True)
    except TrainingFailedError as failed:
        print(f"driver: raised: {failed}", flush=True)
        error = Result.from_path(failed.path).error
        print(f"driver: Result.from_path error: {type(error).__name__} exit_code {error.exit_code}", flush=True)
