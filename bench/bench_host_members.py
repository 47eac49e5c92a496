"""Host-value search over struct members: CPU time of the front end on one generated host file
whose launches pass many struct members allocated with ``cudaMalloc(&s.member, bytes)``.

Each pointer argument ``s.member`` of each launch asks for the member's allocation; the file is
generated here (``--members`` members of one struct, ``--kernels`` kernels each taking every
member), so the number of such questions grows as members x kernels while the file grows as
members + kernels.  The figure is the best of ``--repeat`` CPU times of ``parse_source`` (the
whole front end: preprocessing, parse, lowering, launch sites with their host values) and the
time per member question.  ``python -m bench.bench_host_members [--members M] [--kernels K]``.
A search that walks the whole file per question is quadratic here; the target is a per-question
time that does not grow with the file (compare two --members values).
"""

from __future__ import annotations

import argparse
import time


def host_file(members: int, kernels: int) -> str:
    """A file of one struct of ``members`` float arrays, ``kernels`` kernels taking all of them,
    a main that allocates each member and launches every kernel."""
    names = [f"field{m}" for m in range(members)]
    params = ", ".join(f"float* {n}" for n in names)
    body = " + ".join(f"{n}[i]" for n in names[1:]) or "0.0f"
    out = ["struct Fields {", *[f"    float* {n};" for n in names], "};", ""]
    for k in range(kernels):
        out += [
            f"__global__ void step{k}({params}, int count) {{",
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
            f"    if (i < count) {names[0]}[i] = {body} + {k}.0f;",
            "}",
            "",
        ]
    out += ["int main() {", "    int count = 4096;", "    Fields f;"]
    out += [f"    cudaMalloc(&f.{n}, count * sizeof(float));" for n in names]
    args = ", ".join(f"f.{n}" for n in names)
    out += [f"    step{k}<<<(count + 255) / 256, 256>>>({args}, count);" for k in range(kernels)]
    out += ["    return 0;", "}", ""]
    return "\n".join(out)


def run(members: int, kernels: int, repeat: int) -> tuple[float, int]:
    from cuda2nki.frontend import parse_source

    text = host_file(members, kernels)
    parse_source(text, "members.cu")  # warm-up: imports, compiled patterns
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        tu = parse_source(text, "members.cu")
        best = min(best, time.process_time() - t0)
    return best, len(tu.kernels)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="bench_host_members")
    ap.add_argument("--members", type=int, default=32)
    ap.add_argument("--kernels", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args(argv or [])
    for members in (a.members // 2, a.members):
        cpu, found = run(members, a.kernels, a.repeat)
        questions = members * a.kernels
        print(
            f"members={members} kernels={found}: front end {cpu:.2f} s CPU, "
            f"{1000 * cpu / questions:.1f} ms per member question"
        )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
