"""ray.train.horovod after the port: HorovodTrainer and HorovodConfig are not provided (one line
on import; docs/guides/horovod.md). Horovod's last release, 0.28.1 (2023), does not build
against the project's PyTorch: its PyTorch extension is compiled as C++14 and torch 2.x's headers
need C++17. Ray Train V2 dropped HorovodTrainer as well (constructing one raises there)."""

raise ImportError(
    "trainrt.horovod (HorovodTrainer, HorovodConfig) is not provided: Horovod 0.28.1, its last release, does not "
    "build against torch 2.x (its PyTorch extension compiles as C++14; torch's headers need C++17: \"'is_enum_v' is "
    "not a member of 'std'\"), and Ray Train V2 dropped HorovodTrainer too; use trainrt.torch.TorchTrainer with "
    "prepare_model (DDP) or trainrt.tensorflow.TensorflowTrainer (docs/guides/horovod.md)")
