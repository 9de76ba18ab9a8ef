"""Softmax regression on FashionMNIST with numpy only (no torch): data-parallel over trainrt's
MPI communicator (trainrt.allreduce), checkpointed with trainrt.Checkpoint, resumed exactly.

    mpiexec -n 2 trainrt --config examples/python/numpy_softmax.ini
"""
import numpy as np

import trainrt


def softmax_gradients(w, b, x, y):
    """(loss, grad_w, grad_b) of the mean cross-entropy of softmax(x @ w + b) against labels y."""
    logits = x @ w + b
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
    p[np.arange(len(y)), y] -= 1.0
    p /= len(y)
    return loss, x.T @ p, p.sum(axis=0)


def pixels(shard):
    count = len(shard["labels"]) - shard["padded"]
    x = shard["features"][:count].reshape(count, -1).astype(np.float32) / np.float32(255.0)
    return x, shard["labels"][:count].astype(np.int64)


def train_func(config):
    epochs, lr, batch = config.get("epochs", 3), config.get("lr", 0.1), config.get("batch_size", 256)
    world = trainrt.get_context().world_size
    local = max(1, batch // world)
    w, b, start = np.zeros((784, 10), np.float32), np.zeros(10, np.float32), 0
    if (checkpoint := trainrt.get_checkpoint()) is not None:
        w, b, start = checkpoint["w"], checkpoint["b"], checkpoint["epoch"]
    test_x, test_y = pixels(trainrt.get_shard_arrays("test", 0))
    for epoch in range(start, epochs):
        x, y = pixels(trainrt.get_shard_arrays("train", epoch))
        losses = []
        for i in range(0, len(y), local):
            loss, grad_w, grad_b = softmax_gradients(w, b, x[i:i + local], y[i:i + local])
            grads = trainrt.allreduce(np.concatenate([grad_w.ravel(), grad_b]), "mean")
            w -= np.float32(lr) * grads[:w.size].reshape(w.shape)
            b -= np.float32(lr) * grads[w.size:]
            losses.append(loss)
        counts = np.array([(np.argmax(test_x @ w + b, axis=1) == test_y).sum(), len(test_y)], np.int64)
        trainrt.allreduce(counts, "sum")
        mean_loss = trainrt.allreduce(np.array([np.mean(losses)]), "mean")[0]
        trainrt.report({"epoch": epoch + 1, "loss": mean_loss, "test_accuracy": counts[0] / counts[1]},
                       checkpoint=trainrt.Checkpoint({"w": w, "b": b, "epoch": epoch + 1}))
        if trainrt.should_stop():
            return
    if trainrt.get_context().world_rank == 0:
        print(f"weights_digest={trainrt.digest([w, b])}", flush=True)


if __name__ == "__main__":  # also runs as a plain script: mpiexec -n 2 python3 numpy_softmax.py --config ...
    raise SystemExit(trainrt.run(train_func))
