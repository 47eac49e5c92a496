"""Headers of the C and C++ standard libraries, POSIX and the CUDA toolkit.

An ``#include "assert.h"`` written with quotes still names the standard header when no file of
that name is beside the source or in the -I directories: like ``<assert.h>`` it is skipped
silently (what it declares is built into the front end), never reported as missing (C2N1004).
"""

from __future__ import annotations

_C = """
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign
stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar
wchar wctype malloc memory alloca
"""
_POSIX = """
unistd fcntl dirent pthread sched strings getopt sys/time sys/types sys/stat sys/mman
sys/resource sys/wait sys/times sys/param
"""
_CXX = """
algorithm any array atomic bitset cassert ccomplex cctype cerrno cfenv cfloat charconv chrono
cinttypes ciso646 climits clocale cmath codecvt complex condition_variable csetjmp csignal
cstdarg cstdbool cstddef cstdint cstdio cstdlib cstring ctgmath ctime cuchar cwchar cwctype deque
exception execution filesystem forward_list fstream functional future initializer_list iomanip
ios iosfwd iostream istream iterator limits list locale map memory memory_resource mutex new
numeric optional ostream queue random ratio regex scoped_allocator set shared_mutex sstream
stack stdexcept streambuf string string_view system_error thread tuple type_traits typeindex
typeinfo unordered_map unordered_set utility valarray variant vector bit concepts numbers span
"""
_CUDA = """
cuda cuda_runtime cuda_runtime_api device_launch_parameters device_functions cuda_fp16
cuda_fp16.hpp cuda_bf16 cuda_bf16.hpp cuda_fp8 cuda_profiler_api cuda_texture_types
cooperative_groups cooperative_groups/reduce cooperative_groups/memcpy_async cuda/barrier
cuda/pipeline cuda/std/cmath curand curand_kernel cublas cublas_v2 cublasLt cufft cusparse
cusolverDn nvToolsExt nvtx3/nvToolsExt mma math_constants math_functions vector_types
vector_functions helper_cuda helper_functions helper_math helper_string helper_timer
sm_20_atomic_functions sm_60_atomic_functions texture_fetch_functions surface_functions
thrust/device_vector thrust/host_vector thrust/reduce thrust/sort cub/cub cub/block/block_reduce
nccl mpi omp
"""


def _names() -> frozenset[str]:
    out: set[str] = set()
    for word in (_C + _POSIX).split():
        out.add(f"{word}.h")
    for word in _CXX.split():
        out.update((word, f"{word}.h"))
    for word in _CUDA.split():
        out.add(word if "." in word.rsplit("/", 1)[-1] else f"{word}.h")
        if "/" in word:  # cuda/barrier, thrust/... are extension-less
            out.add(word)
    return frozenset(out)


STANDARD_HEADERS = _names()


def is_standard(path: str) -> bool:
    """Whether ``path`` (as written in the ``#include``) names a standard or toolkit header."""
    return path.strip().replace("\\", "/") in STANDARD_HEADERS


__all__ = ["STANDARD_HEADERS", "is_standard"]
