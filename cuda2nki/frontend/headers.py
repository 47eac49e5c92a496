"""Which includes are system headers, and where a header missing from the include path is.

Real trees keep their shared headers apart from the sources that include them (``common/``,
``include/``, ``utilities/``, ``../../common/book.h``) and find them through ``-I`` options in a
Makefile the tool never reads.  An include that is not on the usual path (the including file's
folder, ``-I``, the compilation database) and is not a system or toolkit header (see
:func:`is_system_header`: an explicit list) is looked up by the path it spells, as a suffix, among
the files of the *search root*:

* the enclosing repository (the nearest folder above the including file holding ``.git``,
  ``.hg`` or ``.svn``; never ``/`` or the home folder);
* without one, the tree being migrated (:func:`searching_tree`) when the file lies in it, else the
  including file's own folder.

The root's file names are indexed once per process (hidden and build folders skipped, at most
:data:`MAX_FILES` files, :data:`MAX_DEPTH` levels).  Among the matches the nearest wins: fewest
levels up from the including file's folder to the common ancestor, then fewest down (a header of
the migrated tree is therefore always preferred to one outside it).  Equally near matches with the
same contents are one header; with different contents the first in path order is used and the
others are named (C2N1006).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

#: files indexed per search root at most (breadth first: the nearest folders first)
MAX_FILES = 60_000
#: folder levels below the search root that are indexed
MAX_DEPTH = 16

_REPO_MARKERS = (".git", ".hg", ".svn")
_SKIP_DIRS = frozenset(
    {"build", "builds", "_build", "node_modules", "__pycache__", "CMakeFiles", "site-packages",
     "venv", "dist", "obj"}
)  # fmt: skip

# C, POSIX, C++ and Windows headers, the CUDA toolkit's, and the external libraries a CUDA tree
# includes from the system (never searched for in the tree, never reported missing)
_C_HEADERS = """assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
stdalign stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads
time uchar wchar wctype unistd fcntl dirent pthread dlfcn getopt libgen malloc memory alloca
strings sched semaphore termios pwd grp glob poll regex execinfo syslog utime cpuid immintrin
x86intrin xmmintrin emmintrin pmmintrin tmmintrin smmintrin nmmintrin avxintrin arm_neon
windows winsock2 ws2tcpip direct io process conio intrin tchar shlwapi omp mpi openacc
numa hwloc zlib png jpeglib"""
_CPP_HEADERS = """algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv
cfloat charconv chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts
condition_variable coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint cstdio
cstdlib cstring ctgmath ctime cuchar cwchar cwctype deque exception execution expected filesystem
format forward_list fstream functional future initializer_list iomanip ios iosfwd iostream
istream iterator latch limits list locale map memory memory_resource mutex new numbers numeric
optional ostream print queue random ranges ratio regex scoped_allocator semaphore set
shared_mutex source_location span spanstream sstream stack stacktrace stdexcept stdfloat
stop_token streambuf string string_view strstream syncstream system_error thread tuple
type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector
version"""
_CUDA_HEADERS = """cuda cuda_runtime cuda_runtime_api cudart_platform cuda_fp16 cuda_fp16.hpp
cuda_bf16 cuda_bf16.hpp cuda_fp8 cuda_fp8.hpp cuda_fp6 cuda_fp4 cuda_texture_types
cuda_surface_types cuda_gl_interop cuda_egl_interop cuda_vdpau_interop cuda_d3d9_interop
cuda_d3d10_interop cuda_d3d11_interop cuda_profiler_api cudaProfiler cuda_occupancy
cuda_pipeline cuda_pipeline_primitives cuda_pipeline_helpers cuda_awbarrier
cuda_awbarrier_primitives cuda_awbarrier_helpers cuda_device_runtime_api cudaGL cudaEGL
cudaVDPAU cudaTypedefs cuda_stdint cooperative_groups device_launch_parameters
device_functions device_types device_atomic_functions device_double_functions driver_types
driver_functions host_defines host_config vector_types vector_functions builtin_types
channel_descriptor texture_types texture_fetch_functions texture_indirect_functions
surface_types surface_functions surface_indirect_functions math_constants math_functions
common_functions library_types mma cuComplex nvfunctional nvToolsExt nvToolsExtCuda
nvToolsExtCudaRt nvrtc nvml cupti cudnn nccl thrust"""
_SYSTEM_NAMES = frozenset(
    [f"{n}.h" for n in _C_HEADERS.split()]
    + _CPP_HEADERS.split()
    + [n if "." in n else f"{n}.h" for n in _CUDA_HEADERS.split()]
)
#: folders of system headers and of external libraries (``<thrust/sort.h>``, ``<sys/time.h>``)
_SYSTEM_DIRS = frozenset(
    """sys bits linux asm asm-generic arpa netinet net ext tr1 experimental thrust cub cuda
    cooperative_groups nv nvtx3 crt cutlass cute cccl libcudacxx cuda_runtime GL GLFW GLES EGL
    Eigen unsupported boost torch ATen c10 pybind11 opencv2 opencv glm gtest gmock benchmark
    tbb oneapi fmt spdlog nlohmann omp mpi hip rocm""".split()
)
#: the CUDA libraries' header families (``cublas_v2.h``, ``curand_kernel.h``, ``cufftXt.h``...)
_SYSTEM_PREFIX_RE = re.compile(
    r"(?:cublas|cublasLt|cublasXt|curand|cufft|cusparse|cusolver|cudnn|cutensor|nccl|nvrtc|npp"
    r"|nvjpeg|nvjitlink|cupti|nvml|nvtx|nvcuvid|cuviddec|nvEncodeAPI|cufile|sm_\d+)\w*\.h$"
)


def is_system_header(spelled: str) -> bool:
    """Whether an include names a system, toolkit or external library header: never searched
    for in the tree, never reported missing."""
    name = spelled.strip().replace("\\", "/")
    if name in _SYSTEM_NAMES:
        return True
    first = name.split("/", 1)[0]
    if "/" in name and first in _SYSTEM_DIRS:
        return True
    return "/" not in name and _SYSTEM_PREFIX_RE.fullmatch(name) is not None


@dataclass(frozen=True)
class Found:
    """Where a header missing from the include path was found."""

    path: str  # the header, absolute
    #: a folder such that ``os.path.join(search_dir, spelled)`` normalises to ``path``
    search_dir: str
    #: equally near headers of other contents (``path`` was chosen among them)
    others: tuple[str, ...] = ()


_TREE: ContextVar[str | None] = ContextVar("cuda2nki_header_tree", default=None)


@contextlib.contextmanager
def searching_tree(root: str | os.PathLike | None) -> Iterator[None]:
    """Within this block, a file of the tree ``root`` outside any repository looks for its
    missing headers in the whole tree (not only below its own folder)."""
    token = _TREE.set(os.path.realpath(root) if root else None)
    try:
        yield
    finally:
        _TREE.reset(token)


def tree_root() -> str | None:
    """The tree of :func:`searching_tree` (a real path), if any."""
    return _TREE.get()


def find_header(spelled: str, includer: str) -> Found | None:
    """The header ``spelled`` (as written between the quotes or brackets) for the file
    ``includer``, or None (also for system headers, and for text that is not a file on disk:
    there is nowhere to search from)."""
    if not spelled or is_system_header(spelled) or os.path.isabs(spelled):
        return None
    if not os.path.isfile(includer):
        return None
    parts, ups = _spelled_parts(spelled)
    if not parts:
        return None
    start = os.path.dirname(os.path.realpath(includer))
    root = search_root(start, _TREE.get())
    names = _index(root)
    cands = [p for p in names.get(parts[-1], ()) if p.split("/")[-len(parts) :] == parts]
    me = os.path.realpath(includer)
    cands = [c for c in cands if c != me and os.path.isfile(c)]
    if not cands:
        return None
    best, others = _nearest(cands, start)
    base = best[: len(best) - len("/".join(parts))].rstrip("/") or "/"
    search_dir = os.path.join(base, *(["_"] * ups)) if ups else base
    return Found(best, search_dir, others)


def _spelled_parts(spelled: str) -> tuple[list[str], int]:
    """The path components an include names after its leading ``..`` (and how many of those)."""
    norm = posixpath.normpath(spelled.strip().replace("\\", "/"))
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    ups = 0
    while parts and parts[0] == "..":
        parts.pop(0)
        ups += 1
    if ".." in parts:
        return [], 0
    return parts, ups


def _nearest(cands: list[str], start: str) -> tuple[str, tuple[str, ...]]:
    """The candidate nearest ``start`` and the equally near ones of other contents."""
    here = start.split("/")

    def distance(path: str) -> tuple[int, int]:
        there = os.path.dirname(path).split("/")
        common = 0
        for a, b in zip(here, there):
            if a != b:
                break
            common += 1
        return len(here) - common, len(there) - common

    ranked = sorted(cands, key=lambda p: (distance(p), p))
    best = ranked[0]
    ties = [p for p in ranked[1:] if distance(p) == distance(best)]
    body = _read(best)
    return best, tuple(p for p in ties if _read(p) != body)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def search_root(start: str, tree: str | None = None) -> str:
    """The folder whose files are searched for a header included from the folder ``start``."""
    repo = _repository(start)
    if repo is not None:
        return repo
    if tree and (start == tree or start.startswith(tree.rstrip("/") + "/")):
        return tree
    return start


@lru_cache(maxsize=1024)
def _repository(start: str) -> str | None:
    home = os.path.realpath(os.path.expanduser("~"))
    d = start
    while True:
        if d not in ("/", home) and any(os.path.exists(os.path.join(d, m)) for m in _REPO_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


@lru_cache(maxsize=64)
def _index(root: str) -> dict[str, tuple[str, ...]]:
    """File name -> the absolute paths of the files so named under ``root``, breadth first,
    within the limits."""
    out: dict[str, list[str]] = {}
    queue: deque[tuple[str, int]] = deque([(root, 0)])
    count = 0
    while queue and count < MAX_FILES:
        folder, depth = queue.popleft()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if depth < MAX_DEPTH and not _skipped_dir(name):
                    queue.append((e.path, depth + 1))
                continue
            out.setdefault(name, []).append(e.path)
            count += 1
    return {k: tuple(v) for k, v in out.items()}


def _skipped_dir(name: str) -> bool:
    return name in _SKIP_DIRS or name.startswith("cmake-build")


def clear_cache() -> None:
    """Forget the indexes (files were added or removed since they were built)."""
    _index.cache_clear()
    _repository.cache_clear()


__all__ = [
    "Found",
    "clear_cache",
    "find_header",
    "is_system_header",
    "searching_tree",
    "tree_root",
]
