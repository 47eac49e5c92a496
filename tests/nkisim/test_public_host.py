"""The public-code adapter runs each case on a machine that reads as an instance of the
simulated target: code that identifies the instance it runs on (the DMI product name, as some
public tests read it to pick what to run) sees the target's instance type, whatever the real
machine is; every other file opens as usual, and the real ``open`` is back afterwards."""

from __future__ import annotations

import builtins
import io
import pathlib

import pytest

from bench import public_nki as pn

DMI = "/sys/devices/virtual/dmi/id/product_name"


@pytest.mark.parametrize(
    ("target", "family"), [("trn1", "trn1"), ("trn2", "trn2"), ("trn3", "trn3")]
)
def test_instance_type_reads_as_the_simulated_target(target, family):
    with pn.simulated_host(target):
        with open(DMI) as f:  # noqa: PTH123 - the spelling public code uses
            first = f.readline()
        with open(DMI, "rb") as f:  # noqa: PTH123
            raw = f.read()
        via_io = io.open(DMI).read()  # noqa: UP020 - io.open is a spelling of its own
        via_path = pathlib.Path(DMI).read_text()
    assert first.split(".")[0] == family
    assert first.strip() == pn.instance_type(target)
    assert raw.decode() == first == via_io == via_path


def test_other_files_open_as_usual_and_open_is_restored(tmp_path):
    real = builtins.open
    p = tmp_path / "f.txt"
    with pn.simulated_host("trn2"):
        with open(p, "w") as f:  # noqa: PTH123
            f.write("data")
        assert p.read_text() == "data"
        with pytest.raises(FileNotFoundError):
            open(tmp_path / "absent")  # noqa: PTH123, SIM115
    assert builtins.open is real and io.open is real


def test_the_host_file_is_not_writable_through_the_emulation():
    with pn.simulated_host("trn2"), pytest.raises(OSError):
        open(DMI, "w")  # noqa: PTH123, SIM115


def test_a_case_limit_counts_cpu_time_not_waiting():
    import time

    pn._CLOCK[0] = "cpu"
    pn._alarm(1)
    try:
        time.sleep(1.5)  # waiting (as for a core on a shared machine) is not the case's time
        with pytest.raises(pn.CaseTimeout):
            end = time.process_time() + 30
            while time.process_time() < end:
                pass
    finally:
        pn._disarm()


def test_the_wall_clock_remains_an_option():
    import time

    pn._CLOCK[0] = "wall"
    pn._alarm(1)
    try:
        with pytest.raises(pn.CaseTimeout):
            time.sleep(30)
    finally:
        pn._disarm()
        pn._CLOCK[0] = "cpu"


def test_a_case_past_its_memory_cap_is_counted_as_memory(tmp_path):
    """One huge case ends as ``memory`` in its own child process instead of taking the machine's
    memory; the cases before it keep their outcomes."""
    tutorial = tmp_path / "huge.py"
    tutorial.write_text(
        "import numpy as np\n"
        "import nki  # the simulator's\n"
        "if __name__ == '__main__':\n"
        "    big = np.empty((3 << 30,), np.uint8)  # 3 GiB, never touched: no real memory\n"
        "    big[0] = 1\n"
        "    assert big[0] == 1\n"
    )
    capped = pn._spawn("tutorial", tutorial, [tmp_path], timeout=60, limit=120, memory=2)
    assert [r["outcome"] for r in capped] == ["memory"]
    free = pn._spawn("tutorial", tutorial, [tmp_path], timeout=60, limit=120, memory=0)
    assert [r["outcome"] for r in free] == ["matched"]


def test_memory_error_is_its_own_outcome():
    assert pn.classify(MemoryError("Unable to allocate 1.00 TiB"))[0] == "memory"
    assert pn.classify(ValueError("x"))[0] == "crash"


def test_a_case_out_of_memory_leaves_the_next_cases_of_its_file_their_memory(tmp_path):
    """The failed case's frames hold its arrays through pytest's traceback; they are released,
    so the next case of the same file (which fits) runs and matches."""
    unit = tmp_path / "test_public_cases.py"
    unit.write_text(
        "import numpy as np\n"
        "import nki  # the simulator's\n"
        "def test_huge():\n"
        "    held = np.ones((1400 << 20,), np.uint8)  # 1.4 GiB, touched\n"
        "    more = np.empty((1 << 30,), np.uint8)  # past the cap with the first\n"
        "    assert held[0] == more[0]\n"
        "def test_fits_after():\n"
        "    a = np.ones((1200 << 20,), np.uint8)\n"
        "    assert a[-1] == 1\n"
    )
    rows = pn._spawn("unit", unit, [tmp_path], timeout=60, limit=300, memory=2)
    assert [(r["name"].split("::")[-1], r["outcome"]) for r in rows] == [
        ("test_huge", "memory"),
        ("test_fits_after", "matched"),
    ]


def test_library_torch_references_are_no_import_cases(tmp_path):
    kernel = tmp_path / "rmsnorm.py"
    kernel.write_text("import nki.language as nl\n")
    named = tmp_path / "rmsnorm_torch.py"
    named.write_text("import numpy as np\n")
    helper = tmp_path / "mx_common.py"
    helper.write_text('"""MX helpers."""\nimport numpy as np\nimport torch\n')
    indented = tmp_path / "maybe.py"
    indented.write_text("try:\n    from torch import nn\nexcept ImportError:\n    nn = None\n")
    mentions = tmp_path / "doc.py"
    mentions.write_text('"""Compare with torch.matmul; import torchvision elsewhere."""\n')
    got = {p.name: pn._is_torch_reference(p) for p in sorted(tmp_path.iterdir())}
    assert got == {
        "doc.py": False,
        "maybe.py": True,
        "mx_common.py": True,
        "rmsnorm.py": False,
        "rmsnorm_torch.py": True,
    }


@pytest.mark.parametrize(
    "missing, outcome",
    [
        ("scipy", "dependency"),  # a golden's import
        ("scipy.special", "dependency"),
        ("torch", "dependency"),  # through a helper module
        ("nki.compiler.extra", "crash"),  # a gap of the simulated package: ours
        ("neuronxcc.nki.kernels", "crash"),
    ],
)
def test_a_missing_third_party_module_is_a_dependency(missing, outcome):
    exc = ModuleNotFoundError(f"No module named '{missing}'", name=missing)
    assert pn.classify(exc)[0] == outcome
    try:  # the same, raised while the case runs (the cause of another exception)
        try:
            raise exc
        except ModuleNotFoundError as inner:
            raise RuntimeError("helper failed") from inner
    except RuntimeError as outer:
        assert pn.classify(outer)[0] == outcome


def test_a_case_importing_a_module_the_machine_lacks_counts_as_a_dependency(tmp_path):
    tutorial = tmp_path / "needs_dep.py"
    tutorial.write_text(
        "import numpy as np\nimport neuronxcc.nki as nki\n"
        "if __name__ == '__main__':\n"
        "    import no_such_package_for_goldens as g\n"
        "    assert g.ok\n"
    )
    rows = pn._spawn("tutorial", tutorial, [tmp_path], timeout=60, limit=300)
    assert [r["outcome"] for r in rows] == ["dependency"]
    assert "no_such_package_for_goldens" in rows[0]["detail"]
