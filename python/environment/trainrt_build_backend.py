"""PEP 517 backend: trainrt's Python component built for the interpreter that runs pip.

It builds (CMakeLists.txt beside this file, against the installed trainrt this folder belongs to)
the extension module, the embedding library and, when this environment has torch, the torch
backend against that torch; and makes a wheel of them with the trainrt package's .py files and
trainrt-environment-first.pth. That .pth drops trainrt's own package folder (`module load trainrt`
puts <libdir>/trainrt/python on PYTHONPATH, which comes before site-packages) from sys.path in this
environment, as setuptools' distutils-precedence.pth does for distutils.

TRAINRT_BUILD_JOBS: parallel compile jobs (default: the cores this process may use)."""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PTH_NAME = "trainrt-environment-first.pth"
PTH_LINE = ('import sys; sys.path[:] = [p for p in sys.path '
            'if not p.rstrip("/").endswith("/trainrt/python")]\n')


class BuildError(Exception):
    """The build failed: one line for pip to show (the CMake log's path is in it)."""


def get_requires_for_build_wheel(config_settings=None):
    return []


def _trainrt_root():
    """The installed trainrt: TRAINRT_ROOT (the module files set it), else this folder's prefix."""
    return os.environ.get("TRAINRT_ROOT") or os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def _pybind11_dir():
    try:
        import pybind11
    except ImportError:
        raise BuildError(f"trainrt: this environment ({sys.prefix}) has no pybind11: `pip install pybind11` first") \
            from None
    return pybind11.get_cmake_dir()


def _run(command, log_path):
    with open(log_path, "a") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        if subprocess.call(command, stdout=log, stderr=subprocess.STDOUT) != 0:
            with open(log_path) as text:
                tail = text.read()[-4000:]
            sys.stderr.write(tail)
            raise BuildError(f"trainrt: building for {sys.executable} failed; the whole log: {log_path}")


def _build(package_dir, work):
    log_path = os.path.join(tempfile.gettempdir(), f"trainrt-environment-build-{os.getpid()}.log")
    jobs = os.environ.get("TRAINRT_BUILD_JOBS") or str(len(os.sched_getaffinity(0)))
    _run(["cmake", "-S", HERE, "-B", os.path.join(work, "build"), f"-DPython3_EXECUTABLE={sys.executable}",
          f"-DTRAINRT_PACKAGE_DIR={package_dir}", f"-DCMAKE_PREFIX_PATH={_trainrt_root()}",
          f"-Dpybind11_DIR={_pybind11_dir()}"], log_path)
    _run(["cmake", "--build", os.path.join(work, "build"), "-j", jobs], log_path)
    return log_path


def _wheel_files(package_dir):
    """{path in the wheel: file on disk}: the package folder (its subpackages included) with each
    versioned library under its soname (libtrainrt_python.so.0.1, the name the loader asks for),
    links, caches and build files left out."""
    files = {}
    for folder, subfolders, names in os.walk(package_dir):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and not os.path.islink(os.path.join(folder, d)))
        relative = os.path.relpath(folder, package_dir)
        for name in sorted(names):
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path) or name.endswith(".pyc"):
                continue
            if relative != ".":
                if name.endswith(".py"):
                    files[f"trainrt/{relative}/{name}"] = path
                continue
            if name.startswith("lib") and ".so." in name:
                stem, _, version = name.partition(".so.")
                name = f"{stem}.so.{'.'.join(version.split('.')[:2])}"
            files[f"trainrt/{name}"] = path
    return files


def _tag():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}{sys.abiflags}-{platform}"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files, version):
    tag = _tag()
    name = f"trainrt-{version}-{tag}.whl"
    info = f"trainrt-{version}.dist-info"
    generated = {
        PTH_NAME: PTH_LINE.encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: trainrt\nVersion: {version}\n"
                             f"Summary: trainrt's Python package, built for this environment\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: trainrt_build_backend\nRoot-Is-Purelib: false\n"
                          f"Tag: {tag}\n".encode(),
    }
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for arcname, path in files.items():
            with open(path, "rb") as f:
                data = f.read()
            info_entry = zipfile.ZipInfo(arcname)
            info_entry.external_attr = (0o755 if ".so" in arcname else 0o644) << 16
            info_entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info_entry, data)
            records.append(_record_line(arcname, data))
        for arcname, data in generated.items():
            wheel.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        records.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return name


def _version(package_dir):
    scope = {}
    with open(os.path.join(package_dir, "_build_info.py")) as f:
        exec(f.read(), scope)
    return scope["TRAINRT"]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    work = tempfile.mkdtemp(prefix="trainrt-environment-")
    try:
        package_dir = os.path.join(work, "trainrt")
        _build(package_dir, work)
        return _write_wheel(wheel_directory, _wheel_files(package_dir), _version(package_dir))
    finally:
        shutil.rmtree(work, ignore_errors=True)
