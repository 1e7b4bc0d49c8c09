"""A seccomp filter that takes files, sockets and programs away from a process that has opened what it needs.

The embedded Cypher engine runs untrusted (LLM-written) queries. Ladybug has no switch that turns off
``LOAD FROM``, ``COPY ... TO`` or ``EXPORT DATABASE``, so the guard would be the only wall between a query
and the file system. This filter is the second wall: once the engine process has opened its database, every
system call that opens, creates, renames, links, removes or changes a file, opens a socket, runs a program or
writes at a file offset fails with ``EACCES`` — whatever the query text says. It is installed with
``SECCOMP_FILTER_FLAG_TSYNC`` so the engine's already-running worker threads are filtered too.

Linux on x86-64 and aarch64 only; :func:`install` raises :class:`SandboxUnavailable` elsewhere, and the caller
decides whether to refuse untrusted queries (the default) or run without this wall.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
import sys

# Calls that reach the file system, the network, other processes or other programs.
DENIED = (
    "open creat openat openat2 open_by_handle_at name_to_handle_at mkdir mkdirat rmdir unlink unlinkat rename "
    "renameat renameat2 link linkat symlink symlinkat truncate ftruncate chmod fchmod fchmodat fchmodat2 chown "
    "fchown lchown fchownat mknod mknodat utime utimes utimensat futimesat execve execveat socket socketpair "
    "connect bind listen accept accept4 ptrace process_vm_readv process_vm_writev io_uring_setup io_uring_enter "
    "io_uring_register mount umount2 chroot pivot_root setxattr lsetxattr fsetxattr removexattr lremovexattr "
    "fremovexattr pwrite64 pwritev pwritev2 fallocate copy_file_range sendfile pidfd_getfd uselib"
).split()

# System call numbers (asm/unistd_64.h for x86-64, asm-generic/unistd.h for aarch64, which lacks the
# old path calls: there the *at variants cover them).
_X86_64 = {
    "open": 2, "creat": 85, "openat": 257, "openat2": 437, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "mkdir": 83, "mkdirat": 258, "rmdir": 84, "unlink": 87, "unlinkat": 263, "rename": 82, "renameat": 264,
    "renameat2": 316, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266, "truncate": 76,
    "ftruncate": 77, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93,
    "lchown": 94, "fchownat": 260, "mknod": 133, "mknodat": 259, "utime": 132, "utimes": 235, "utimensat": 280,
    "futimesat": 261, "execve": 59, "execveat": 322, "socket": 41, "socketpair": 53, "connect": 42, "bind": 49,
    "listen": 50, "accept": 43, "accept4": 288, "ptrace": 101, "process_vm_readv": 310,
    "process_vm_writev": 311, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "mount": 165, "umount2": 166, "chroot": 161, "pivot_root": 155, "setxattr": 188, "lsetxattr": 189,
    "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "pwrite64": 18,
    "pwritev": 296, "pwritev2": 328, "fallocate": 285, "copy_file_range": 326, "sendfile": 40,
    "pidfd_getfd": 438, "uselib": 134,
}  # fmt: skip
_AARCH64 = {
    "openat": 56, "openat2": 437, "open_by_handle_at": 265, "name_to_handle_at": 264, "mkdirat": 34,
    "unlinkat": 35, "renameat": 38, "renameat2": 276, "linkat": 37, "symlinkat": 36, "truncate": 45,
    "ftruncate": 46, "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchown": 55, "fchownat": 54,
    "mknodat": 33, "utimensat": 88, "execve": 221, "execveat": 281, "socket": 198, "socketpair": 199,
    "connect": 203, "bind": 200, "listen": 201, "accept": 202, "accept4": 242, "ptrace": 117,
    "process_vm_readv": 270, "process_vm_writev": 271, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "mount": 40, "umount2": 39, "chroot": 51, "pivot_root": 41, "setxattr": 5,
    "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "pwrite64": 68,
    "pwritev": 70, "pwritev2": 287, "fallocate": 47, "copy_file_range": 285, "sendfile": 71,
    "pidfd_getfd": 438,
}  # fmt: skip
# machine -> (AUDIT_ARCH_*, call numbers, number of the seccomp call itself)
ARCHES = {"x86_64": (0xC000003E, _X86_64, 317), "aarch64": (0xC00000B7, _AARCH64, 277)}

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 38, 1, 1


class SandboxUnavailable(RuntimeError):
    """This platform (OS, architecture or kernel) cannot install the filter."""


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def build_filter(machine: str) -> bytes:
    """The BPF program: a foreign architecture is killed, a denied call returns EACCES, the rest run."""
    if machine not in ARCHES:
        raise SandboxUnavailable(f"no system call table for {machine!r}")
    arch, numbers, _ = ARCHES[machine]
    denied = sorted({numbers[name] for name in DENIED if name in numbers})
    prog = [_insn(_LD_W_ABS, 4), _insn(_JEQ_K, arch, jt=1), _insn(_RET_K, _RET_KILL_PROCESS), _insn(_LD_W_ABS, 0)]
    if machine == "x86_64":  # the x32 ABI numbers the same calls from 0x40000000 up
        prog.append(_insn(_JGE_K, _X32_BIT, jt=len(denied) + 1))
    for k, nr in enumerate(denied):
        prog.append(_insn(_JEQ_K, nr, jt=len(denied) - k))  # to the EACCES return after the ALLOW
    prog += [_insn(_RET_K, _RET_ALLOW), _insn(_RET_K, _RET_ERRNO | errno.EACCES)]
    return b"".join(prog)


def install() -> None:
    """Filter every thread of this process, for good; raises :class:`SandboxUnavailable` if it cannot."""
    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or machine not in ARCHES:
        raise SandboxUnavailable(f"seccomp filters need Linux on x86_64 or aarch64 (this is {sys.platform} {machine})")
    program = build_filter(machine)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SandboxUnavailable(f"prctl(NO_NEW_PRIVS) failed: {errno.errorcode.get(ctypes.get_errno())}")
    buf = ctypes.create_string_buffer(program, len(program))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Prog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    nr = ARCHES[machine][2]
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(nr), _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(fprog))
    if rc != 0:
        err = ctypes.get_errno()
        raise SandboxUnavailable(f"seccomp() failed: rc={rc} {errno.errorcode.get(err, err)}")
