"""Examples for the NKI simulator's ids (C2N3000-3999): `cuda2nki simulate` on a small port."""

from __future__ import annotations

import textwrap

from cuda2nki.rules.examples.base import Example

CUR = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
LEG = (
    "from neuronxcc import nki\nimport neuronxcc.nki.isa as nisa\n"
    "import neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
)


def _sim(body: str, *extra: str, head: str = CUR, exit_code: int | None = 2) -> Example:
    text = head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return Example(
        files={"port.py": text},
        argv=("simulate", "port.py", "--shape", "a=128,512", "--out", "out.npz", *extra),
        exit_code=exit_code,
    )


EXAMPLES = {
    "C2N3001": _sim("x = nl.frobnicate(a)\nreturn a\n"),
    "C2N3002": _sim("t = nl.ndarray((256, 4), nl.float32, buffer=nl.sbuf)\nreturn a\n"),
    "C2N3003": _sim("t = nl.ndarray((128,), nl.float32, buffer=nl.sbuf)\nreturn a\n"),
    "C2N3004": _sim(
        """
        s = nl.ndarray((128, 64), nl.bfloat16, buffer=nl.sbuf)
        m = nl.ndarray((64, 512), nl.bfloat16, buffer=nl.sbuf)
        d = nl.ndarray((64, 512), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(d, s, m)
        return a
        """
    ),
    "C2N3005": _sim(
        """
        s = nl.ndarray((128, 256), nl.bfloat16, buffer=nl.sbuf)
        m = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.sbuf)
        d = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(d, s, m)
        return a
        """
    ),
    "C2N3006": _sim(
        """
        s = nl.zeros((128, 128), nl.bfloat16)
        m = nl.zeros((128, 1024), nl.bfloat16)
        r = nl.matmul(s, m, transpose_x=True)
        return a
        """,
        head=LEG,
    ),
    "C2N3007": _sim(
        """
        s = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
        m = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.sbuf)
        d = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(d, s, m)
        return a
        """
    ),
    "C2N3008": _sim("acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)\nreturn a\n"),
    "C2N3009": _sim(
        """
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        nisa.memset(acc, 0.0)
        nisa.dma_copy(dst=out, src=acc)
        return out
        """
    ),
    "C2N3010": _sim(
        """
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.memset(acc, 0.0)
        nisa.tensor_copy(dst=t, src=acc, engine=nisa.engine.gpsimd)
        return a
        """
    ),
    "C2N3011": _sim(
        """
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=out, src=a)
        return out
        """
    ),
    "C2N3012": _sim("t = nl.load(a)\nnl.store(a, value=t)\nreturn a\n", head=LEG),
    "C2N3013": _sim(
        """
        t = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        nisa.memset(u, 1.0)
        nisa.tensor_copy(dst=t[16:80, :], src=u[0:64, :])
        return a
        """
    ),
    "C2N3014": _sim(
        """
        x = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        y = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
        z = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        return a
        """
    ),
    "C2N3015": _sim(
        """
        x = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.memset(x, 1.0)
        s = nl.sum(x, axis=0)
        return a
        """
    ),
    "C2N3016": _sim(
        """
        x = nl.ndarray((128, 4), nl.int32, buffer=nl.sbuf)
        nisa.memset(x, 1.5)
        return a
        """
    ),
    "C2N3017": _sim(
        """
        big = nl.ndarray((128, 40000), nl.float32, buffer=nl.sbuf)
        more = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)
        nisa.memset(more, 0.0)
        nisa.tensor_copy(dst=big[0:128, 0:20000], src=more)
        return a
        """
    ),
    "C2N3018": _sim(
        """
        acc = nl.zeros((9, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
        return a
        """,
        head=LEG,
    ),
    "C2N3019": _sim(
        """
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        v = t[0:128, 0:600]
        return a
        """
    ),
    "C2N3020": _sim(
        """
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        u = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.memset(t[:, 0:256], 0.0)
        nisa.activation(dst=u, op=nl.exp, data=t)
        return a
        """,
        "--strict-uninit",
    ),
    "C2N3021": _sim(
        "i_p = nl.arange(128)[:, None]\nt = nl.load(a[i_p, 0:4])\nreturn a\n", head=LEG
    ),
    "C2N3022": _sim(
        """
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        nisa.dma_copy(dst=acc, src=a)
        return a
        """
    ),
    "C2N3023": _sim("return a.undefined_attribute\n"),
    "C2N3024": Example(
        files={"port.py": CUR + "    return a\n\n\n@nki.jit\ndef k2(a):\n    return a\n"},
        argv=("simulate", "port.py", "--shape", "a=4,4", "--out", "out.npz"),
        exit_code=2,
    ),
    "C2N3025": Example(
        files={"port.py": CUR + "    return a\n"},
        argv=("simulate", "port.py", "--out", "out.npz"),
        exit_code=2,
    ),
    "C2N3026": _sim(
        """
        t = nl.load(a)
        col = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        nisa.memset(col, 1.0)
        u = nl.add(t, col)
        return a
        """
    ),
    "C2N3027": _sim(
        """
        out = nl.ndarray((128, 128), nl.float32, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
        nisa.memset(s, 1.0)
        acc = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, s, s, accumulate=True)
        t = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=t, src=acc)
        nisa.dma_copy(dst=out, src=t)
        return out
        """,
        exit_code=0,
    ),
    "C2N3028": _sim(
        """
        out = nl.ndarray((128, 2), nl.float32, buffer=nl.shared_hbm)
        x = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf)
        nisa.memset(x, 9.0)
        y = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=y, op=nl.sin, data=x)
        nisa.dma_copy(dst=out, src=y)
        return out
        """,
        exit_code=0,
    ),
    "C2N3031": _sim(
        """
        out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
        keep = []
        for i in range(3):
            t = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)
            nisa.memset(t, float(i))
            keep.append(t)
        acc = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf)
        nisa.memset(acc, 0.0)
        for t in keep:
            nisa.tensor_tensor(dst=acc, data1=acc, data2=t[0:128, 0:4], op=nl.add)
        nisa.dma_copy(dst=out, src=acc)
        return out
        """,
        exit_code=0,
    ),
    "C2N3030": _sim(
        """
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            t = nl.load(a)
            nl.store(out[0:128, :], value=t)
        return out
        """,
        head=LEG,
    ),
    "C2N3029": _sim(
        """
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        v = t.ap([], offset=0)
        return a
        """
    ),
}

NO_EXAMPLE: dict[str, str] = {}
