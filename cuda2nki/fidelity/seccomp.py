"""The seccomp filter of the port sandbox (built with libseccomp, through ``pyseccomp``).

Installed by the sandboxed interpreter itself, after it has loaded every native library it
needs and before it imports the port.  Default: allow.  Then:

* killed on the spot (the checker sees SIGSYS and reports C2N4017): starting a program
  (``execve``, ``execveat``), a new process (``fork``, ``vfork``, ``clone`` without
  ``CLONE_THREAD``), any socket, tracing or reading another process (``ptrace``,
  ``process_vm_*``), signalling a process (``kill``, ``pidfd_send_signal``; threads still
  signal themselves through ``tgkill``), new namespaces, mounts, kernel keyrings, BPF,
  ``perf_event_open``, ``userfaultfd``, ``io_uring``;
* refused with ``EPERM`` (the port sees an ``OSError``): executable memory -- ``mmap`` or
  ``mprotect`` with ``PROT_EXEC`` -- so no code can be loaded or generated after start-up;
* ``clone3`` answers ``ENOSYS`` (its flags cannot be inspected), so the C library falls back to
  ``clone``, whose flags can.
"""

from __future__ import annotations

import errno

CLONE_THREAD = 0x00010000
PROT_EXEC = 0x4

KILLED = (
    "execve",
    "execveat",
    "fork",
    "vfork",
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "sendto",
    "sendmsg",
    "sendmmsg",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kill",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "personality",
    "kexec_load",
    "init_module",
    "finit_module",
)


class Unavailable(Exception):
    """libseccomp (or its Python binding) cannot be loaded on this host."""


def _lib():  # noqa: ANN202 - the binding's module
    try:
        import pyseccomp
    except (ImportError, OSError, AttributeError) as exc:
        raise Unavailable(f"libseccomp cannot be loaded ({exc})") from None
    return pyseccomp


def available() -> str | None:
    """None when the filter can be built here, else why not."""
    try:
        _lib()
    except Unavailable as exc:
        return str(exc)
    return None


def build():  # noqa: ANN201 - a pyseccomp.SyscallFilter
    sc = _lib()
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in KILLED:
        try:
            f.add_rule(sc.KILL_PROCESS, name)
        except (OSError, RuntimeError, ValueError):
            continue  # a call this architecture does not have
    f.add_rule(sc.KILL_PROCESS, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for name in ("mmap", "mprotect", "pkey_mprotect"):
        f.add_rule(sc.ERRNO(errno.EPERM), name, sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.set_attr(sc.Attr.CTL_NNP, 1)
    f.set_attr(sc.Attr.CTL_TSYNC, 1)  # threads started before the filter (BLAS) get it too
    return f


def install() -> None:
    """Load the filter into every thread of this process and all it starts from now on."""
    build().load()
