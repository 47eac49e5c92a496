"""A template host launcher's type parameter deduced from an argument that constructs a value
(``run(out, s, n, Put(1.5))``, ``Put{1.5}``), passed on by value or by reference
(``const P& p``) to a template kernel: the kernel is instantiated with that struct."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source

STRUCTS = """
struct Put {
    double k;
    __host__ __device__ Put(double k_) : k(k_) {}
    __host__ __device__ double operator()(double s) const { return fmax(k - s, 0.0); }
};
struct Call {
    double k;
    __host__ __device__ double operator()(double s) const { return fmax(s - k, 0.0); }
};
template <int BS, typename P>
__global__ void payoff(double* out, const double* s, int n, P p) {
    int i = blockIdx.x * BS + threadIdx.x;
    if (i < n) out[i] = p(s[i]);
}
"""

#: spelling -> (host code, the struct the kernel is instantiated with)
CASES = {
    "constructor_call_by_reference": (
        """
template <typename P>
void run(double* out, const double* s, int n, const P& p) {
    const int BS = 256;
    payoff<BS><<<(n + BS - 1) / BS, BS>>>(out, s, n, p);
}
int main() { double *o, *s; run(o, s, 1000, Put(1.5)); return 0; }
""",
        "Put",
    ),
    "braced_by_value": (
        """
template <class Pay>
void run(double* out, const double* s, int n, Pay pay) {
    payoff<128><<<(n + 127) / 128, 128>>>(out, s, n, pay);
}
int main() { double *o, *s; run(o, s, 1000, Call{2.0}); return 0; }
""",
        "Call",
    ),
    "first_of_two_branches": (
        """
template <typename P>
static inline void go(int n, const P& payoff_fn, double* out, const double* s) {
    const int THREADS = 64;
    int grid = (n + THREADS - 1) / THREADS;
    payoff<THREADS><<<grid, THREADS>>>(out, s, n, payoff_fn);
}
int main(int argc, char** argv) {
    double *o, *s;
    if (argc > 1) go(1000, Put(1.0), o, s);
    else go(1000, Call{1.0}, o, s);
    return 0;
}
""",
        "Put",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_constructed_argument_gives_the_launchers_type(case: str) -> None:
    host, struct = CASES[case]
    tu = parse_source(STRUCTS + host, "t.cu")
    kernel = tu.kernels[0]
    args = dict(kernel.template_args)
    assert getattr(args.get("P"), "name", None) == struct, args


def test_a_call_of_a_function_is_no_constructed_type() -> None:
    host = """
double strike(double k) { return k; }
template <typename P>
void run(double* out, const double* s, int n, const P& p) {
    payoff<128><<<(n + 127) / 128, 128>>>(out, s, n, p);
}
int main() { double *o, *s; run(o, s, 1000, strike(1.5)); return 0; }
"""
    tu = parse_source(STRUCTS + host, "t.cu")
    args = dict(tu.kernels[0].template_args) if tu.kernels else {}
    assert getattr(args.get("P"), "name", None) not in ("Put", "Call")
