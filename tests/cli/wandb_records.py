"""W&B's offline transaction log (.wandb) read back for the tracking tests (tests/cli/test_tracking.sh)."""
import json
import struct

from wandb.proto import wandb_internal_pb2


def records(path):
    """The Records of a W&B transaction log (.wandb): a 7-byte header, then LevelDB's log format
    (32 KiB blocks of records: crc32c, length, type FULL/FIRST/MIDDLE/LAST), each a protobuf Record."""
    data = open(path, "rb").read()
    assert data[:4] == b":W&B", data[:7]
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind == 0:
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            yield record


def history(path):
    """Every logged row of the run, as {key: value}."""
    return [{i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
            for r in records(path) if r.WhichOneof("record_type") == "history"]


def run_record(path):
    return next(r.run for r in records(path) if r.WhichOneof("record_type") == "run")
