"""How trainrt runs a Python training function. One implementation for both ways in:
the `python:` workload (libtrainrt_python calls load() in its preflight, then run_function()) and
trainrt.run() from a plain python3 script (run_function() only).

load() raises LoadError with one line (the run ends with exit 2 before anything is written).
run_function() never raises: it returns (exit code, one line) — 0 when the function returned —
after printing a failure's traceback on stderr.
"""
import datetime
import importlib
import importlib.util
import inspect
import os
import socket
import sys
import traceback

from . import _state

SUMMARY_FRAMES = 3


class LoadError(Exception):
    """The workload cannot start: one line for the user (exit 2)."""


def activate_virtual_env():
    """Puts an active virtual environment's site-packages first (VIRTUAL_ENV at launch), when it
    was made from this Python; LoadError when it was made from another one."""
    venv = os.environ.get("VIRTUAL_ENV")
    if not venv or getattr(sys, "_trainrt_venv", None) == venv:
        return
    if os.path.realpath(venv) == os.path.realpath(sys.prefix):  # the environment the interpreter runs in
        return
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_dir = os.path.join(venv, "lib", version, "site-packages")
    if not os.path.isdir(site_dir):
        raise LoadError(f"python: VIRTUAL_ENV={venv} has no lib/{version}/site-packages: it was not made from "
                        f"this Python ({sys.version.split()[0]}); make it with `{sys.base_prefix}/bin/python3 -m "
                        f"venv --system-site-packages {venv}`, or build trainrt's package for it (in it: `pip install pybind11 && "
                        f"pip install --no-build-isolation $TRAINRT_ROOT/share/trainrt/python`)")
    import site
    if not _includes_system_packages(venv):  # as its own python3 would: no system site-packages
        system = set(site.getsitepackages([sys.base_prefix])) | {site.getusersitepackages()}
        sys.path[:] = [p for p in sys.path if p not in system and not p.endswith("dist-packages")]
    before = list(sys.path)
    site.addsitedir(site_dir)
    added = [p for p in sys.path if p not in before]
    sys.path[:] = [p for p in sys.path if p not in added]
    position = 1 if sys.path and sys.path[0].endswith(os.path.join("trainrt", "python")) else 0
    sys.path[position:position] = added
    sys._trainrt_venv = venv


def _includes_system_packages(venv):
    try:
        with open(os.path.join(venv, "pyvenv.cfg")) as cfg:
            for line in cfg:
                key, _, value = line.partition("=")
                if key.strip() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def _innermost(tb, path):
    """The deepest frame of `tb` in file `path` ("FILE:LINE"), else the deepest frame."""
    frames = traceback.extract_tb(tb)
    mine = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)] or frames
    return f"{mine[-1].filename}:{mine[-1].lineno}" if mine else path


def _load_file(path):
    if not os.path.isfile(path):
        raise LoadError(f"python: {path}: no such file (run.workload = python:FILE.py:FUNC; relative paths "
                        f"start at {os.getcwd()})")
    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))  # as python3 FILE does: its siblings import
    sys.argv = [path]
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _state.loading_file = path  # a module-level fit() is refused while the file loads (_trainer.py)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise LoadError(f"python: {error.filename}:{error.lineno}: syntax error: {error.msg}") from None
    except BaseException as error:
        raise LoadError(f"python: loading {path} failed at {_innermost(error.__traceback__, path)}: "
                        f"{type(error).__name__}: {error}") from None
    finally:
        _state.loading_file = None
    return module


def _import_module(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and name.startswith(error.name):
            raise LoadError(f"python: no module named '{name}' (run.workload = python:package.module:FUNC or "
                            f"python:FILE.py:FUNC; sys.path: {os.pathsep.join(sys.path[:4])}...)") from None
        raise LoadError(f"python: importing {name} failed: {type(error).__name__}: {error}") from None
    except SyntaxError as error:
        raise LoadError(f"python: {error.filename}:{error.lineno}: syntax error: {error.msg}") from None
    except BaseException as error:
        raise LoadError(f"python: importing {name} failed: {type(error).__name__}: {error}") from None


def _find_function(module, where, name):
    function = getattr(module, name, None)
    if callable(function):
        return function
    found = sorted(n for n, v in vars(module).items()
                   if inspect.isfunction(v) and getattr(v, "__module__", None) == module.__name__)
    raise LoadError(f"python: {where} has no function '{name}'; its functions: {', '.join(found) or 'none'}")


def torch_backend(settings):
    """The torch.distributed backend to set up, or None. [scaling] backend gloo/nccl/trainrt ask for
    one; auto sets one up when the function's code imported torch: nccl with GPUs; on CPU trainrt
    (trainrt's MPI process group, faster than gloo here: BENCHMARKS.md) when this trainrt has
    its LibTorch component, else gloo. trainrt (asked for or chosen) becomes gloo where the backend
    was built against another torch than this process's (backend_mismatch(): run_function says so)."""
    backend = settings.scaling.backend
    if backend in ("gloo", "nccl"):
        return backend
    if backend == "trainrt":
        return "gloo" if backend_mismatch() else "trainrt"
    if backend == "auto" and "torch" in sys.modules:
        if settings.scaling.use_gpu:
            return "nccl"
        return "trainrt" if _has_trainrt_backend() else "gloo"
    return None


def backend_mismatch():
    """Why trainrt's torch backend cannot serve this process's torch (built against another
    version: their C++ ABIs differ, and loading it would crash), or None. Nothing is loaded to tell."""
    try:
        from . import _build_info
    except ImportError:
        return None
    import torch
    have = torch.__version__.split("+")[0]
    if not _build_info.TORCH or have == _build_info.TORCH:
        return None
    return (f"trainrt's torch backend was built against torch {_build_info.TORCH}, and this environment's torch "
            f"is {torch.__version__}; `pip install --no-build-isolation $TRAINRT_ROOT/share/trainrt/python` in "
            f"this environment builds one for its torch")


def _has_trainrt_backend():
    if backend_mismatch():
        return False
    try:
        from . import _trainrt_torch  # noqa: F401
    except ImportError:
        return False
    return True


# Workloads trainrt ships as Python functions, by run.workload name (the C++ registry routes these
# names to the Python component: workloads/components.cpp).
NAMED = {"xgboost": "trainrt.xgboost:builtin", "lightgbm": "trainrt.lightgbm:builtin"}


def load(workload, settings, keys, rank, train=None):
    """The function named by [run] workload = python:FILE.py:FUNC | python:package.module:FUNC, or
    a NAMED one. settings, keys: the job's typed settings and their key names (the extension's
    views); train: the [train] section, which a NAMED workload's check_config(train, keys) checks
    here, before anything runs (LoadError)."""
    spec = workload[len("python:"):] if workload.startswith("python:") else NAMED.get(workload, workload)
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise LoadError(f"python: {keys.run.workload} = {workload}: name the function: python:FILE.py:FUNC or "
                        f"python:package.module:FUNC")
    activate_virtual_env()
    is_file = target.endswith(".py") or os.sep in target
    module = _load_file(target) if is_file else _import_module(target)
    function = _find_function(module, target, name)
    if workload in NAMED and hasattr(function, "check_config"):
        function.check_config(train or {}, keys)
    backend = torch_backend(settings)
    if backend is not None:
        try:
            import torch.distributed  # noqa: F401
        except BaseException as error:
            raise LoadError(f"python: {keys.scaling.backend} = {backend} needs torch, which does not import: "
                            f"{type(error).__name__}: {error}") from None
    if backend == "trainrt":  # asked for, and not refused for another torch (then gloo)
        try:
            from . import _trainrt_torch  # noqa: F401
        except ImportError as error:
            raise LoadError(f"python: {keys.scaling.backend} = trainrt needs trainrt's LibTorch component, which "
                            f"this trainrt lacks ({error}); use {keys.scaling.backend} = gloo") from None
    return function


def _register_trainrt_backend():
    """torch.distributed's "trainrt" backend: libtrainrt_torch's process group over trainrt's MPI
    communicator (the store, rank and size torch passes are trainrt's own world already)."""
    import torch.distributed as dist
    if hasattr(dist.Backend, "TRAINRT"):  # registered earlier in this process
        return
    from ._trainrt_torch import make_backend
    dist.Backend.register_backend("trainrt", lambda store, rank, size, timeout: make_backend(), devices=["cpu"])


# --- running ---

def _address(context):
    """Rank 0's address for the rendezvous: loopback on one node, else its host's address."""
    if context["num_nodes"] == 1:
        return "127.0.0.1"
    try:
        for family, _, _, _, address in socket.getaddrinfo(context["hostname"], None, socket.AF_INET):
            if not address[0].startswith("127."):
                return address[0]
    except OSError:
        pass
    return context["hostname"]


def _setup_torch(handle, backend, timeout_s):
    """torch.distributed's default process group over trainrt's world (Ray's TorchTrainer): rank 0
    opens the store on a free port of its own choosing, its address goes to every rank over MPI."""
    import torch.distributed as dist
    context = handle.context()
    rank, world = context["world_rank"], context["world_size"]
    timeout = datetime.timedelta(seconds=timeout_s)
    store = None
    payload = b""
    if rank == 0:
        host = _address(context)
        store = dist.TCPStore(host, 0, world, True, timeout=timeout, wait_for_workers=False)
        payload = f"{host}:{store.port}".encode()
    host, port = handle.broadcast_bytes(payload, 0).decode().rsplit(":", 1)
    if store is None:
        store = dist.TCPStore(host, int(port), world, False, timeout=timeout)
    if backend == "trainrt":
        _register_trainrt_backend()
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(context["local_rank"]),
                       "LOCAL_WORLD_SIZE": str(context["local_world_size"]), "NODE_RANK": str(context["node_rank"]),
                       "MASTER_ADDR": host, "MASTER_PORT": port})
    _accelerate_environment(world)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=timeout)


def _accelerate_environment(world):
    """What Hugging Face Accelerate reads to join this process group (docs/guides/accelerate.md):
    the rank's device, as Ray sets it, and on CPU ACCELERATE_USE_CPU: without it an Accelerator()
    on a CPU-only rank is not distributed at all (every rank trains alone, as under Ray on CPU).
    Not with ACCELERATE_USE_DEEPSPEED=true: Accelerate drops a DeepSpeedPlugin on a "cpu" state."""
    device = _state.device()
    os.environ.setdefault("ACCELERATE_TORCH_DEVICE", device)
    deepspeed = os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true"
    if device == "cpu" and world > 1 and not deepspeed:
        os.environ.setdefault("ACCELERATE_USE_CPU", "true")


def _set_threads(handle):
    """trainrt's compute threads (threads.hpp's rule) for OpenBLAS and torch, and exported as
    OMP_NUM_THREADS when the user set none (as Ray exports a worker's CPUs): frameworks that size
    their own threads from it otherwise (Lightning gives each process every core when
    OMP_NUM_THREADS is unset) keep to the rank's share."""
    threads = handle.set_compute_threads()  # OpenBLAS's, which torch's setting does not reach
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def _bind_torch_device(handle):
    """On a GPU run, torch's current device is the one trainrt bound for this rank (Ray sets it
    before the function runs), so torch.cuda calls, NCCL and .cuda() land there."""
    index = handle.context()["gpu_device"]
    if index >= 0 and "torch" in sys.modules:
        sys.modules["torch"].cuda.set_device(index)


def _call(function, config):
    constants = os.environ.get(_state.TUNE_CONSTANTS_ENV)
    if constants:
        import pickle
        with open(constants, "rb") as file:
            config = {**config, **pickle.load(file)}
    path = os.environ.get(_state.TUNE_PARAMETERS_ENV)
    if path:
        import pickle
        with open(path, "rb") as file:
            return function(config, **pickle.load(file))
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        parameters = {"config": None}
    return function(config) if len(parameters) >= 1 else function()


def _report_returned(value):
    """Collective. A function that returns a dict has it reported as its last result, as Ray Tune
    reports a function trainable's return value (a rank that returned none joins with no metrics)."""
    import numpy as np
    returned = np.array([isinstance(value, dict) and bool(value)], dtype=np.int64)
    _state.session().allreduce(returned, "max")
    if returned[0]:
        _state.report(value if isinstance(value, dict) else {})


def _summary(error):
    """One line: the exception and where it was raised (the last frames, innermost first)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if os.path.dirname(os.path.abspath(f.filename)) != here][-SUMMARY_FRAMES:]
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in reversed(frames))
    text = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
    return f"{message} (at {where})" if where else message


def _verdict(error, rank):
    if isinstance(error, SystemExit) and error.code in (None, 0):
        return 0, ""
    code = getattr(error, "exit_code", None)
    if getattr(error, "one_line", False):  # trainrt's own refusal, agreed on by every rank: said once
        return code, str(error), True
    _state.log("error", f"the Python training function raised on rank {rank}:")
    traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    if not isinstance(code, int) or code <= 0:
        from ._trainrt import exit_codes
        code = exit_codes.workload
    return code, f"python: {_summary(error)}"


def run_function(handle, function):
    _state.begin(handle)
    rank = -1
    torch_ready = False
    try:
        settings = handle.settings()
        rank = handle.context()["world_rank"]
        _set_threads(handle)
        _bind_torch_device(handle)
        _state.seed_everything(settings.run.seed)
        backend = torch_backend(settings)
        if backend == "gloo" and settings.scaling.backend in ("trainrt", "auto") and backend_mismatch():
            _state.log("warning", f"scaling.backend = {settings.scaling.backend}: {backend_mismatch()}; using gloo",
                       once=True)
        if backend is not None:
            _setup_torch(handle, backend, settings.failure.collective_timeout)
            torch_ready = True
        try:
            _report_returned(_call(function, _state.train_config()))
        except _state.StopTraining:
            pass  # the stop is the session's: trainrt ends the job as stopped (or requeues it), or as
            # finished when a sweep's scheduler ended the trial
        if torch_ready:
            import torch.distributed as dist
            dist.destroy_process_group()
        return 0, ""
    except BaseException as error:  # noqa: B036 - KeyboardInterrupt and SystemExit end the run too
        return _verdict(error, rank)
    finally:
        _state.end()
        sys.stdout.flush()
        sys.stderr.flush()
