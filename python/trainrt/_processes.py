"""The processes a launcher started, from /proc (Linux): what fit()'s driver and a Tuner's
follower pass a stop signal on to."""
import os


def descendants(root):
    """`root` and every process under it."""
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as file:
                children.setdefault(int(file.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, pending = set(), [root]
    while pending:
        pid = pending.pop()
        found.add(pid)
        pending += children.get(pid, [])
    return found


def program(pid):
    """The program `pid` runs (its argv[0]); None when it is gone or has none."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().split(b"\0", 1)[0].decode(errors="replace") or None
    except OSError:
        return None
