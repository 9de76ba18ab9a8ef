"""`python3 -m trainrt.<library> predict` after a run (XGBoost, LightGBM): the command line, the
model of a committed checkpoint, the split's rows and the predictions file, shared by both."""
import argparse
import os
import sys


def leave(message, code):
    print(f"[trainrt] error: {message}", file=sys.stderr)
    raise SystemExit(code)


def main(argv, library, what, load, predict, load_errors=()):
    """`python3 -m trainrt.LIBRARY predict --checkpoint RUN_OR_CHECKPOINT_DIR --data FILE [--split test]
    --out PREDS.h5 [--label NAME] [--features A,B]`: load(checkpoint) gives the model (`what`) of a
    committed checkpoint (verified), predict(model, matrix) its predictions of every row of the split
    and the model's description; PREDS.h5 holds "predictions" (and "label" when the split has one),
    written to a temporary name and renamed."""
    if argv[:1] != ["predict"]:
        raise SystemExit(f"usage: python3 -m trainrt.{library} predict --checkpoint DIR --data FILE "
                         f"[--split test] --out PREDS.h5")
    import h5py
    from ._trainrt import Error, exit_codes
    from .checkpoint import Checkpoint
    from .data import Dataset
    parser = argparse.ArgumentParser(prog=f"python3 -m trainrt.{library} predict")
    for flag in ("--checkpoint", "--data", "--out"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--label")
    parser.add_argument("--features")
    args = parser.parse_args(argv[1:])
    try:
        model = load(Checkpoint.open(args.checkpoint))
    except (Error, KeyError, ValueError, *load_errors) as error:
        leave(f"{args.checkpoint}: no {what} in a committed checkpoint there ({error})", exit_codes.checkpoint)
    try:
        features = args.features.split(",") if args.features else None
        matrix, labels = Dataset.open(args.data, args.split).features_and_label(args.label, features)
    except (Error, ValueError) as error:
        leave(str(error), exit_codes.data)
    predictions, described = predict(model, matrix)
    partial = f"{args.out}.tmp.{os.getpid()}"
    with h5py.File(partial, "w") as out:
        out["predictions"] = predictions
        if labels is not None:
            out["label"] = labels
        out.attrs["checkpoint"] = os.path.abspath(args.checkpoint)
        out.attrs["split"] = args.split
    os.replace(partial, args.out)
    print(f"predicted {len(predictions)} rows of {args.data}:{args.split} with {described} -> {args.out}")
