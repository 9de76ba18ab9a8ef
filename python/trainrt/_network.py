"""Addresses for frameworks that open their own sockets between the ranks (LightGBM's network,
TensorFlow's gRPC servers): each rank takes a port the kernel picks on its host's address and
the list reaches every rank over trainrt's MPI. The port is free when taken and the framework
binds it a moment later, as Ray's own choice of port does."""
import socket

from . import _state


def free_port(host):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def rank_addresses():
    """["host:port" of rank 0, rank 1, ...] and this rank's port: a collective, called by every rank
    of the run at the same point."""
    from ._entry import _address
    handle = _state.session()
    context = handle.context()
    world, rank = context["world_size"], context["world_rank"]
    host = _address(context)
    port = free_port(host)
    own = f"{host}:{port}".encode()
    return [handle.broadcast_bytes(own if r == rank else b"", r).decode() for r in range(world)], port
