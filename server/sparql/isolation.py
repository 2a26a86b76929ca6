"""What a query worker does to itself at start: no route to the network, and a memory ceiling.

The third layer against ``SERVICE`` (after the endpoint's token check and the parsed-query guard,
``server.sparql.guard``): should a query ever reach Oxigraph with a ``SERVICE`` in it, the
worker evaluating it cannot open a connection. The first mechanism that works is kept:

1. ``network namespace``: ``unshare(CLONE_NEWNET)`` (needs ``CAP_SYS_ADMIN``, i.e. root or a
   capable container). The worker then sees only its own loopback interface, which is down:
   every connection fails with "network is unreachable".
2. ``user and network namespace``: the same inside a new user namespace, which Linux grants to
   unprivileged processes where ``kernel.unprivileged_userns_clone`` allows it.
3. ``socket filter``: a seccomp filter that refuses ``socket()`` for IPv4 and IPv6 (and
   ``io_uring_setup``, which could open sockets around it) with ``EACCES``; needs only Linux
   3.5+ on x86-64 or AArch64.

pyoxigraph 0.5 offers no switch to turn federation off, so when none of these works (another
platform) the worker says so and the server logs it as a warning at start-up.

The memory ceiling is ``RLIMIT_AS`` (``server.query_memory_mb``): a query that needs more
makes an allocation fail in the worker, which then ends; the pool answers 503 and replaces it.

Runs in the worker processes only, before they create any thread (namespaces and seccomp
filters are per thread and inherited by the threads created afterwards). Must never be called
in the server's main process: it would cut the server off the network.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import re
import resource
import struct
import sysconfig
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

NAMESPACE = "network namespace"
USER_NAMESPACE = "user and network namespace"
SOCKET_FILTER = "socket filter"

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

# seccomp (linux/seccomp.h, linux/filter.h, linux/audit.h).
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EACCES = 13
_AF_INET, _AF_INET6 = 2, 10
_IO_URING_SETUP = 425  # the same number on every architecture
# machine -> (AUDIT_ARCH_*, number of socket(), lowest number of another ABI to refuse)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 0x40000000),  # x32 system calls carry bit 30
    "aarch64": (0xC00000B7, 198, None),
}
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE|K, BPF_RET|K


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> bool:
    try:
        unshare = _libc().unshare
    except (OSError, AttributeError):
        return False
    return bool(unshare(flags) == 0)


def network_namespace() -> bool:
    """Move this process into a new network namespace; return whether that worked."""
    return _unshare(_CLONE_NEWNET)


def user_network_namespace() -> bool:
    """Move this (single-threaded) process into new user and network namespaces."""
    return _unshare(_CLONE_NEWUSER | _CLONE_NEWNET)


def _filter_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    arch = _ARCHES.get(machine)
    if arch is None:
        return None
    audit_arch, socket_nr, foreign_abi = arch
    deny = _SECCOMP_RET_ERRNO | _EACCES
    # (code, jump if true, jump if false, k); jumps count the instructions they skip.
    head = [(_LD, 0, 0, 4), (_JEQ, 1, 0, audit_arch), (_RET, 0, 0, deny), (_LD, 0, 0, 0)]
    body = [
        (_JEQ, 0, 1, _IO_URING_SETUP),
        (_RET, 0, 0, deny),
        (_JEQ, 0, 4, socket_nr),
        (_LD, 0, 0, 16),  # the low half of the first argument (the address family)
        (_JEQ, 1, 0, _AF_INET),
        (_JEQ, 0, 1, _AF_INET6),
        (_RET, 0, 0, deny),
        (_RET, 0, 0, _SECCOMP_RET_ALLOW),
    ]
    if foreign_abi is not None:
        body = [(_JGE, 0, 1, foreign_abi), (_RET, 0, 0, deny), *body]
    return head + body


def socket_filter() -> bool:
    """Install a seccomp filter refusing IPv4 and IPv6 sockets; return whether that worked."""
    program = _filter_program(platform.machine())
    if program is None or os.name != "posix":
        return False
    packed = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(packed, len(packed))

    class _Program(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = _Program(len(program), ctypes.addressof(buffer))
    try:
        prctl = _libc().prctl
    except (OSError, AttributeError):
        return False
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)


MECHANISMS: tuple[tuple[str, Callable[[], bool]], ...] = (
    (NAMESPACE, network_namespace),
    (USER_NAMESPACE, user_network_namespace),
    (SOCKET_FILTER, socket_filter),
)


def _threads() -> int:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 1
    found = re.search(r"^Threads:\s+(\d+)", status, re.MULTILINE)
    return int(found.group(1)) if found else 1


def cut_off_network() -> str:
    """Apply the first mechanism that works; return its name, or ``""`` when none did.

    Only in a process with one thread: every mechanism changes the calling thread and the
    threads it creates afterwards, so a thread that already ran would keep its network.
    """
    if _threads() != 1:
        return ""
    for name, apply in MECHANISMS:
        if apply():
            return name
    return ""


# mallopt's parameter for the most arenas glibc's allocator creates (malloc.h).
_M_ARENA_MAX = -8


def one_malloc_arena() -> bool:
    """Make glibc's allocator use one arena for every thread of this process (elsewhere: no-op).

    Each thread that allocates gets an arena of its own, and each reserves 64 MiB or more of
    address space: after opening a view (RocksDB starts its threads) a worker held 835 MB of
    address space for 75 MB resident, 246 MB with one arena. The cap counts reserved address
    space, so those reservations took a third of ``server.query_memory_mb`` from the queries,
    and a worker under a 1 GiB cap could fail to start a thread. A worker evaluates one query
    at a time on one thread, so a shared arena costs it nothing measurable.
    """
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, 1))
    except (OSError, AttributeError):
        return False


def limit_memory(max_bytes: int) -> bool:
    """Cap this process's address space at ``max_bytes`` (0: no cap); return whether it is set.

    Core dumps are switched off too: a worker that ran out of memory aborts, and its core
    would be as large as the limit.
    """
    if max_bytes <= 0:
        return False
    one_malloc_arena()
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            max_bytes = min(max_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, hard))
    except (ValueError, OSError):
        return False
    return True


# The allocators a worker can run with: Debian's package of each, by name (server.query_allocator).
ALLOCATORS = {"jemalloc": "libjemalloc.so.2", "system": ""}


def allocator_library(name: str) -> str | None:
    """Return the path of allocator ``name``'s shared library, or ``None`` when not installed.

    ``system`` (glibc's allocator) needs no library and gives ``""``. The library is looked for
    in the directories the dynamic loader searches by default on this machine.
    """
    soname = ALLOCATORS.get(name)
    if not soname:
        return "" if name == "system" else None
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for folder in (f"/usr/lib/{multiarch}", f"/lib/{multiarch}", "/usr/lib64", "/usr/lib"):
        path = Path(folder) / soname
        if path.is_file():
            return str(path)
    return None


def allocator_in_use() -> str:
    """Return the name of the allocator this process runs with (``system`` unless preloaded)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "system"
    for name, soname in ALLOCATORS.items():
        if soname and f"/{soname}" in maps:
            return name
    return "system"


# Numeric libraries start thread pools when imported (OpenBLAS through numpy, which the
# serving process's main module imports; a spawned worker imports that module again first).
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_ENVIRONMENT = threading.Lock()


@contextlib.contextmanager
def single_threaded_imports(preload: str = "") -> Iterator[None]:
    """Start processes in this block with numeric libraries limited to one thread.

    ``preload`` (a shared library's path) is put in ``LD_PRELOAD`` too: the allocator the
    workers run with (``allocator_library``). Workers are forked from multiprocessing's fork
    server, which reads the environment when the first worker of the process starts it; every
    later worker has that server's allocator.

    A worker can only be cut off the network while it has one thread (``cut_off_network``),
    and ``spawn`` re-imports the parent's main module in the child before the worker runs:
    under ``qabench serve`` that imports numpy, whose OpenBLAS pool would be a second thread.
    The environment is restored afterwards (a spawned child reads it when it starts). Threads
    starting workers at once take turns: otherwise one thread's restore could remove the
    variables while another's child is being started (seen: one worker of two with OpenBLAS's
    thread, so not cut off the network).
    """
    with _ENVIRONMENT:
        wanted = dict(_ONE_THREAD)
        if preload:
            # first, before any library the environment already preloads (a profiler, say)
            wanted["LD_PRELOAD"] = " ".join([preload, *os.environ.get("LD_PRELOAD", "").split()])
        saved = {name: os.environ.get(name) for name in wanted}
        os.environ.update(wanted)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
