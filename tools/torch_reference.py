#!/usr/bin/env python3
# Produces trainrt's PyTorch reference for the fashion_mlp workload (Ray Train's FashionMNIST
# recipe; the recipe itself lives in bench/pytorch/pytorch_ddp.py, shared with the benchmark):
#   tests/data/torch_init_seed0.h5   the model's initial weights, torch.manual_seed(0) default init,
#                                    in trainrt's init_weights format
#   tests/data/torch_reference.json  per-epoch loss and test accuracy for 2 epochs from those
#                                    weights on 1, 2 and 4 ranks
#
# Command that produced the committed files (from the repository root; 1–2 minutes on 2 cores):
#   OMP_NUM_THREADS=1 /opt/trainrt-deps/venv/bin/python3 tools/torch_reference.py
# (the project environment's PyTorch 2.x from PyPI, tools/deps.sh). Options: --out DIR (default tests/data), --epochs E (default 2), --ranks 1,2,4.
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "bench", "pytorch"))
import pytorch_ddp as recipe  # noqa: E402

INIT_NAME = "torch_init_seed0.h5"
SOURCE = "torch default init, manual_seed(0)"
FIRST_STEPS = 10


def main():
    parser = argparse.ArgumentParser(description="PyTorch reference numbers for trainrt's fashion_mlp")
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "data"))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--ranks", default="1,2,4")
    args = parser.parse_args()
    recipe.ensure_environment()
    import torch

    os.makedirs(args.out, exist_ok=True)
    init_path = os.path.join(args.out, INIT_NAME)
    torch.manual_seed(0)
    recipe.save_weights(recipe.make_model(), init_path, SOURCE)
    print(f"wrote {init_path}", file=sys.stderr)

    runs, first_losses = {}, {}
    for ranks in [int(r) for r in args.ranks.split(",")]:
        result = recipe.run(ranks, args.epochs, init_path, first_steps=FIRST_STEPS)
        runs[str(ranks)] = [{"epoch": r["epoch"], "loss": r["loss"],
                             "test_accuracy": r["test_accuracy"]} for r in result["epochs"]]
        first_losses[str(ranks)] = result["first_batch_losses"]
        for r in runs[str(ranks)]:
            print(f"ranks {ranks} epoch {r['epoch']}: loss {r['loss']:.6f} "
                  f"test_accuracy {r['test_accuracy']:.4f}", file=sys.stderr)

    reference = {
        "init": INIT_NAME,
        "epochs": args.epochs,
        "runs": runs,
        "first_batch_losses": first_losses,
        "torch_version": torch.__version__,
        "notes": (
            "Ray Train's FashionMNIST recipe (bench/pytorch/pytorch_ddp.py) trained from init with "
            "torch.multiprocessing.spawn + gloo, 1 thread per rank. Flatten, Linear(784,512), ReLU, "
            "Linear(512,512), ReLU, Linear(512,10), ReLU; CrossEntropyLoss(mean); SGD lr 1e-3 no "
            "momentum; global batch 64 split evenly over ranks (64/n per rank), last partial batch "
            "of 32 kept (938 steps per epoch); pixels/255 float32; DistributedSampler(shuffle=False) "
            "for train and test (rank r takes samples r, r+n, ...); DDP when ranks > 1 (as Ray's "
            "prepare_model). loss = mean over the epoch's batches of the batch-mean train loss "
            "(computed before that batch's step), averaged over ranks; test_accuracy = correct/10000 "
            "after the epoch, argmax with the first max on ties. first_batch_losses: the first "
            f"{FIRST_STEPS} batch-mean train losses of epoch 1, averaged over ranks. Values differ "
            "between rank counts only by float32 summation order (~1e-6 relative)."),
    }
    json_path = os.path.join(args.out, "torch_reference.json")
    with open(json_path, "w") as f:
        json.dump(reference, f, indent=2)
        f.write("\n")
    print(f"wrote {json_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
