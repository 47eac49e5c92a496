"""The port sandbox itself: a fresh interpreter, a data-only channel, limits, and clean-up."""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.fidelity import sandbox, wire
from cuda2nki.fidelity.sandbox import Isolation, PortSandbox, isolation

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "corpus/basic/ports/vector_add_port.py"
needs_sandbox = pytest.mark.skipif(
    bool(isolation().missing), reason=f"sandbox layers missing: {isolation().missing}"
)


def _runs(n: int = 300) -> list[list[dict]]:
    a = np.arange(n, dtype=np.float32)
    return [[{"a": a, "b": a * 2}]]


@needs_sandbox
def test_a_port_runs_in_a_fresh_interpreter_and_returns_arrays(tmp_path: Path) -> None:
    with PortSandbox(str(PORT), "vector_add", _runs(), timeout=30) as box:
        res = box.result(0)
    assert res.status == "ok", res.error
    (entry,) = res.value
    assert entry["status"] == "ok" and entry["instructions"] > 0
    np.testing.assert_array_equal(entry["outputs"][0], np.arange(300, dtype=np.float32) * 3)


@needs_sandbox
def test_the_sandbox_directory_is_removed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with PortSandbox(str(PORT), "vector_add", _runs(), timeout=30) as box:
        assert box.result(0).status == "ok"
        assert any(tmp_path.iterdir())
    assert not any(tmp_path.iterdir())


@needs_sandbox
def test_the_sandbox_sees_no_checker_state(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(
        PORT.read_text().replace(
            "    (N,) = a.shape\n",
            "    (N,) = a.shape\n    import os, sys\n"
            "    print(sorted(os.listdir('/')), os.getuid(), len(os.listdir('/proc')), "
            "dict(os.environ))\n"
            "    import importlib.util\n"
            "    print('SIMT', importlib.util.find_spec('cuda2nki.simt.runner') is not None)\n",
        )
    )
    os.environ["C2N_TEST_SECRET"] = "s3cret"
    try:
        with PortSandbox(str(port), "vector_add", _runs(), timeout=30) as box:
            assert box.result(0).status == "ok"
            printed = box.output_tail()
    finally:
        del os.environ["C2N_TEST_SECRET"]
    assert "s3cret" not in printed
    assert "'work'" not in printed or str(ROOT / "corpus") not in printed
    assert "SIMT False" in printed  # the SIMT interpreter is not even importable


def test_a_missing_layer_refuses_to_run_unless_trusted(monkeypatch) -> None:
    monkeypatch.setattr(
        sandbox, "isolation", lambda: Isolation(None, None, False, False, "no libseccomp")
    )
    monkeypatch.setattr(sandbox, "TRUST_BY_DEFAULT", False)
    box = PortSandbox(str(PORT), "vector_add", _runs(), timeout=30)
    with box:
        res = box.result(0)
    assert res.status == "unavailable"
    assert "bubblewrap" in res.error and "seccomp" in res.error
    with PortSandbox(str(PORT), "vector_add", _runs(), timeout=30, trust=True) as box:
        res = box.result(0)
    assert res.status == "ok", res.error


def test_the_isolation_report_names_each_missing_layer() -> None:
    iso = Isolation(None, None, True, False, "no libseccomp")
    text = " ".join(iso.missing)
    assert "bubblewrap" in text and "setpriv" in text and "seccomp" in text
    assert not Isolation("/bin/bwrap", "/usr/bin/setpriv", True, True, None).missing


@needs_sandbox
def test_a_hang_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(
        PORT.read_text().replace("    (N,) = a.shape\n", "    while True:\n        pass\n")
    )
    with PortSandbox(str(port), "vector_add", _runs(), timeout=2) as box:
        res = box.result(0)
    assert res.status == "timeout"
    assert res.seconds < 20


@needs_sandbox
def test_a_forbidden_system_call_kills_the_sandbox_and_is_reported(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(
        PORT.read_text().replace(
            "    (N,) = a.shape\n", "    import os\n    os.system('true')\n    (N,) = a.shape\n"
        )
    )
    with PortSandbox(str(port), "vector_add", _runs(), timeout=30) as box:
        res = box.result(0)
    assert res.status == "blocked" and res.violations


# --------------------------------------------------------------------------- the channel


def test_tagged_json_round_trips_what_a_trace_holds(tmp_path: Path) -> None:
    value = {"a": (1, "x"), (2, 3): {4, 5}, "f": float("inf"), "l": [None, True, 1.5]}
    path = str(tmp_path / "v.json")
    wire.dump_json(path, value)
    assert wire.load_json(path, 1 << 20) == value


@pytest.mark.parametrize(
    "raw", ['{"x": 1, "y": 2}', '{"q": []}', '{"f": "os.system"}', '{"d": [[1]]}', "[1,"]
)
def test_malformed_replies_are_refused(tmp_path: Path, raw: str) -> None:
    path = tmp_path / "v.json"
    path.write_text(raw)
    with pytest.raises(wire.WireError):
        wire.load_json(str(path), 1 << 20)


def test_oversized_replies_are_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(json.dumps(["x" * 1000]))
    with pytest.raises(wire.WireError, match="larger"):
        wire.load_json(str(path), 100)
    npz = str(tmp_path / "a.npz")
    wire.save_arrays(npz, {"a": np.zeros(1000)})
    with pytest.raises(wire.WireError, match="larger"):
        wire.load_arrays(npz, 1000)


def test_pickled_or_compressed_arrays_are_refused(tmp_path: Path) -> None:
    obj = str(tmp_path / "obj.npz")
    np.savez(obj, a=np.array([object()], dtype=object))
    with pytest.raises(wire.WireError):
        wire.load_arrays(obj, 1 << 20)
    packed = str(tmp_path / "zip.npz")
    np.savez_compressed(packed, a=np.zeros(10))
    with pytest.raises(wire.WireError, match="compressed"):
        wire.load_arrays(packed, 1 << 20)
    bomb = str(tmp_path / "bomb.npz")
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_STORED) as z:
        z.writestr("a.npy", b"\x93NUMPY" + b"\0" * 10)
    with pytest.raises(wire.WireError):
        wire.load_arrays(bomb, 1 << 20)


def test_time_limit_interrupts_a_long_computation() -> None:
    from cuda2nki.fidelity.sandbox import TimeLimitExceeded, time_limit

    with pytest.raises(TimeLimitExceeded), time_limit(0.2):
        while True:
            pass


def test_narrow_float_arrays_travel_as_their_bits(tmp_path: Path) -> None:
    import ml_dtypes

    path = str(tmp_path / "a.npz")
    a = np.linspace(-2, 2, 7).astype(ml_dtypes.bfloat16)
    f8 = np.linspace(-2, 2, 7).astype(ml_dtypes.float8_e4m3fn)
    wire.save_arrays(path, {"a": a, "f8": f8, "x": np.arange(3)})
    back = wire.load_arrays(path, 1 << 20)
    assert back["a"].dtype == a.dtype and back["f8"].dtype == f8.dtype
    np.testing.assert_array_equal(back["a"].astype(np.float32), a.astype(np.float32))
    np.savez(path, **{"a::no_such_type": np.zeros(3, np.uint16)})
    with pytest.raises(wire.WireError, match="claims"):
        wire.load_arrays(path, 1 << 20)


@needs_sandbox
def test_the_user_namespace_mode_runs_a_port_too(monkeypatch) -> None:
    """What a non-root user gets: bubblewrap's own user namespace (no setpriv)."""
    import dataclasses

    iso = dataclasses.replace(isolation(), root=False)
    monkeypatch.setattr(sandbox, "isolation", lambda: iso)
    argv = sandbox._bwrap_argv(iso, "/job", str(PORT), "/x/port.py")
    assert "--unshare-user" in argv and "--disable-userns" in argv
    assert not any("setpriv" in a for a in argv)
    with PortSandbox(str(PORT), "vector_add", _runs(), timeout=30) as box:
        res = box.result(0)
    assert res.status == "ok", res.error


@needs_sandbox
@pytest.mark.parametrize("extra", [[], ["--static-only"], ["--port-kernel", "nope"]])
def test_the_command_leaves_no_sandbox_behind(tmp_path: Path, monkeypatch, extra) -> None:
    """The command launches the sandbox before its own imports; whatever happens next (a pass,
    static-only, a port without the kernel asked for), nothing is left in $TMPDIR."""
    from cuda2nki.cli.main import main

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cu = ROOT / "corpus/basic/vector_add.cu"
    main(["check", str(cu), str(PORT), "--seeds", "1", *extra])
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_the_private_tmp_is_mounted_before_what_lies_under_it() -> None:
    """A venv, checkout or port under /tmp (a CI clone there, pytest's tmp_path) is bound on top
    of the sandbox's own /tmp; mounted the other way round, the tmpfs would hide them."""
    iso = Isolation("/bin/bwrap", "/usr/bin/setpriv", True, True, None)
    argv = sandbox._bwrap_argv(iso, "/job-on-host", "/tmp/x/copy.py", "/tmp/x/port.py")
    tmp = next(i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == "/tmp")
    assert tmp < argv.index("--ro-bind")
    assert argv[tmp - 2 : tmp] == ["--perms", "01777"]  # writable by the sandbox's user


@needs_sandbox
def test_a_port_may_use_its_private_tmp(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(
        PORT.read_text().replace(
            "    (N,) = a.shape\n",
            "    (N,) = a.shape\n    import tempfile\n"
            "    with tempfile.NamedTemporaryFile() as f:\n        f.write(b'ok')\n",
        )
    )
    with PortSandbox(str(port), "vector_add", _runs(), timeout=30) as box:
        res = box.result(0)
    assert res.status == "ok" and res.value[0]["status"] == "ok", (res.error, res.value)


_NARROW_PORT = """
import neuronxcc.nki.language as nl


def halve(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    h = nl.multiply(t, 0.5, dtype=nl.{dtype})
    nl.store(out, value=h)
    return out
"""


def test_ml_dtypes_is_loaded_only_for_a_job_that_may_meet_bf16(tmp_path: Path) -> None:
    from cuda2nki.fidelity.sandbox_child import _needs_narrow

    port = tmp_path / "p.py"
    job = {"port": str(port)}
    wire.save_arrays(str(tmp_path / "in.npz"), {"a": np.zeros(3, np.float32)})
    for dtype, narrow in (("float32", False), ("bfloat16", True), ("float8_e4m3", True)):
        port.write_text(_NARROW_PORT.replace("{dtype}", dtype))
        assert _needs_narrow(str(tmp_path), job) is narrow, dtype
    port.write_text("X = nl.BF16_TILE  # any spelling, in any case\n")
    assert _needs_narrow(str(tmp_path), job)
    port.write_text("")
    assert _needs_narrow(str(tmp_path), {**job, "narrow": True})
    import ml_dtypes

    wire.save_arrays(str(tmp_path / "in.npz"), {"a": np.zeros(3, ml_dtypes.bfloat16)})
    assert _needs_narrow(str(tmp_path), job)


@needs_sandbox
@pytest.mark.parametrize(
    ("spelling", "ok"), [("bfloat16", True), ("float32", True), ('__dict__["bf" "loat16"]', False)]
)
def test_a_narrow_type_is_usable_when_the_port_names_it(tmp_path: Path, spelling, ok) -> None:
    port = tmp_path / "halve.py"
    port.write_text(_NARROW_PORT.replace("nl.{dtype}", f"nl.{spelling}"))
    runs = [[{"a": np.arange(8, dtype=np.float32)}]]
    with PortSandbox(str(port), "halve", runs, timeout=30) as box:
        res = box.result(0)
    assert res.status == "ok", res.error
    (entry,) = res.value
    if ok:
        assert entry["status"] == "ok", entry
        np.testing.assert_array_equal(entry["outputs"][0], np.arange(8, dtype=np.float32) / 2)
    else:  # reached through a name the text does not spell: refused with the reason
        assert entry["status"] == "error", entry
        assert "names a bf16" in str(entry), entry
