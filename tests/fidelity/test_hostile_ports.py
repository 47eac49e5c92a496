"""Hostile ports against ``cuda2nki check``: each one tries one trick to pass while wrong, run code
or write outside the sandbox, reach the network, read a secret, signal or outlive the checker.

Every port computes ``out = a + b`` correctly *only if its trick worked* (else ``a - b``), so a
PASS is an attack that succeeded.  After each check the host is inspected too: no marker file, the
port file unchanged, no sandbox directory left, no process left behind.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.sandbox import isolation
from tests.processes import processes_with

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "corpus/basic/vector_add.cu"
PORT = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text()
BODY = "    (N,) = a.shape\n"
ADD = "op=nl.add)"
SECRET = "c2n-secret-5f1e"
#: a host directory outside every temporary directory, where an escaped write would land
OUTSIDE = Path("/var/tmp/c2n-hostile")

pytestmark = pytest.mark.skipif(
    bool(isolation().missing), reason=f"sandbox layers missing: {isolation().missing}"
)

#: name -> code that sets ``won = True`` when its trick worked ({marker}: a host path it must not
#: create; {port}: the port's own path; {secret}: a value only the checker's environment holds)
ATTACKS = {
    # --- the reference: frames, objects, files of the checker
    "frame_walk": "import sys\nf = sys._getframe()\nwhile f:\n    won = won or 'refs' in f.f_locals\n    f = f.f_back",
    "gc_arrays": "import gc\nwon = any(type(o).__name__ == 'CheckReport' for o in gc.get_objects())",
    "import_reference": "import sys\nsys.path.insert(0, {corpus!r})\nimport vector_add_ref\nwon = True",
    "read_reference": "won = bool(open({corpus!r} + '/vector_add_ref.py').read())",
    "simt_import": "from cuda2nki import simt\nwon = simt is not None",
    "frontend_import": "import cuda2nki.frontend\nwon = True",
    "list_corpus": "import os\nwon = 'vector_add.cu' in os.listdir({corpus!r})",
    "parent_proc_mem": "won = bool(open('/proc/' + str(__import__('os').getppid()) + '/mem', 'rb').read(1))",
    # --- secrets
    "environ": "import os\nwon = {secret!r} in str(os.environ)",
    "proc_self_environ": "won = {secret!r}.encode() in open('/proc/self/environ', 'rb').read()",
    "proc_1_environ": "won = {secret!r}.encode() in open('/proc/1/environ', 'rb').read()",
    "proc_ppid_environ": "import os\nwon = {secret!r}.encode() in open(f'/proc/{{os.getppid()}}/environ', 'rb').read()",
    "proc_scan_environ": "import os\nfor p in os.listdir('/proc'):\n    try:\n        won = won or {secret!r}.encode() in open(f'/proc/{{p}}/environ', 'rb').read()\n    except OSError:\n        pass",
    "etc_shadow": "won = bool(open('/etc/shadow').read())",
    "root_home": "import os\nwon = os.path.exists('/root/.bashrc') or os.path.exists('/root/.ssh')",
    # --- processes
    "os_system": "import os\nwon = os.system('touch {marker}') == 0",
    "subprocess_run": "import subprocess\nwon = subprocess.run(['touch', {marker!r}]).returncode == 0",
    "popen": "import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 30; touch {marker}'])\nwon = True",
    "fork": "import os\nif os.fork() == 0:\n    open({marker!r}, 'w').close()\n    os._exit(0)\nwon = True",
    "posix_spawn": "import os\nos.posix_spawn('/usr/bin/touch', ['touch', {marker!r}], {{}})\nwon = True",
    "execv": "import os\nos.execv('/usr/bin/touch', ['touch', {marker!r}])",
    "fork_exec": "import _posixsubprocess, os\n_posixsubprocess.fork_exec(['/usr/bin/touch', {marker!r}], [b'/usr/bin/touch'], True, (), None, None, -1, -1, -1, -1, -1, -1, *os.pipe(), False, False, -1, None, None, None, -1, None, False)\nwon = True",
    "ctypes_system": "import ctypes\nwon = ctypes.CDLL(None).system(b'touch {marker}') == 0",
    "ctypes_fork": "import ctypes\nwon = ctypes.CDLL(None).fork() >= 0",
    "daemon_thread": "import threading, time\ndef later():\n    time.sleep(3)\n    open({marker!r}, 'w').close()\nthreading.Thread(target=later, daemon=True).start()\nwon = False",
    "multiprocessing": "import multiprocessing as mp\np = mp.Process(target=print)\np.start()\nwon = True",
    # --- signals
    "kill_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nwon = True",
    "kill_pid1": "import os, signal\nos.kill(1, signal.SIGKILL)\nwon = True",
    "killpg": "import os, signal\nos.killpg(0, signal.SIGTERM)\nwon = True",
    "pidfd": "import os, signal\nfd = os.pidfd_open(os.getppid())\nsignal.pidfd_send_signal(fd, signal.SIGKILL)\nwon = True",
    "ctypes_kill": "import ctypes\nwon = ctypes.CDLL(None).kill(1, 9) == 0",
    "ptrace": "import ctypes\nwon = ctypes.CDLL(None).ptrace(16, 1, 0, 0) == 0",
    # --- network
    "socket_connect": "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)\nwon = True",
    "socket_udp": "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'x', ('127.0.0.1', 9))\nwon = True",
    "socket_sendmsg": "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendmsg([b'x'], [], 0, ('127.0.0.1', 9))\nwon = True",
    "unix_socket": "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/run/systemd/notify')\nwon = True",
    "ctypes_socket": "import ctypes\nwon = ctypes.CDLL(None).socket(2, 1, 0) >= 0",
    "urllib": "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9', timeout=1)\nwon = True",
    "net_ifaces": "import os\nwon = len(os.listdir('/sys/class/net')) > 1",
    # --- writes outside the private tmp
    "open_write": "open({marker!r}, 'w').write('x')\nwon = True",
    "os_open": "import os\nos.close(os.open({marker!r}, os.O_CREAT | os.O_WRONLY))\nwon = True",
    "mkdir": "import os\nos.mkdir({marker!r})\nwon = True",
    "symlink": "import os\nos.symlink('/etc/passwd', {marker!r})\nwon = True",
    "hardlink": "import os\nos.link({port!r}, {marker!r})\nwon = True",
    "truncate_port": "import os\nos.truncate({port!r}, 0)\nwon = True",
    "rewrite_port": "open({port!r}, 'a').write('# changed')\nwon = True",
    "rename_port": "import os\nos.rename({port!r}, {port!r} + '.moved')\nwon = True",
    "prefix_trick": "import tempfile\nopen(tempfile.gettempdir() + '-evil', 'w').close()\nwon = True",
    "write_tmp_host": "open('/tmp/' + {marker_name!r}, 'w').close()\nwon = __import__('os').path.exists({marker!r})",
    # --- native code
    "mmap_exec": "import mmap\nmmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\nwon = True",
    "mprotect_exec": "import ctypes, mmap\nbuf = mmap.mmap(-1, 4096)\naddr = ctypes.addressof(ctypes.c_char.from_buffer(buf))\nwon = ctypes.CDLL(None).mprotect(ctypes.c_void_p(addr), 4096, 7) == 0",
    "load_library": "import ctypes\nctypes.CDLL('libm.so.6')\nwon = True",
    # --- the checker's own code and the channel
    "patch_compare": "import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.isclose = lambda a, b, *x, **k: np.ones(np.shape(a), bool)\nwon = False",
    "forge_nothing_runs": "import builtins\nbuiltins.print = None\nwon = False",
    "unpicklable_return": "class Evil:\n    def __reduce__(self):\n        return (os.system, ('touch {marker}',))\nimport os\nglobal EVIL\nEVIL = Evil()\nwon = False",
    # --- resources
    "sigstop_self": "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\nwon = True",
    "hard_exit": "import os\nos._exit(0)",
    "stdout_flood": "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * (1 << 20))\nwon = False",
    "fill_disk": "with open('/job/fill', 'wb') as f:\n    for _ in range(4096):\n        f.write(b'x' * (1 << 20))\nwon = False",
    "fd_scan": "import os, stat\nfor fd in range(3, 256):\n    try:\n        mode = os.fstat(fd).st_mode\n        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):\n            os.write(fd, b'ok')\n            won = True\n    except OSError:\n        pass",
    "setuid_root": "import os\nos.setuid(0)\nwon = os.getuid() == 0",
    "unshare": "import os\nos.unshare(os.CLONE_NEWUSER)\nwon = True",
}


#: attacks whose attempt itself must be reported, with the ids that may report it (the others are
#: refused quietly -- a missing file, a read-only mount -- and fail on their wrong numbers)
REPORTED_AS = {
    **{
        n: {"C2N4017"}
        for n in (
            "os_system subprocess_run popen fork posix_spawn execv fork_exec multiprocessing "
            "kill_parent kill_pid1 killpg pidfd sigstop_self socket_connect socket_udp "
            "socket_sendmsg unix_socket urllib proc_self_environ proc_1_environ "
            "proc_ppid_environ proc_scan_environ etc_shadow open_write os_open mkdir symlink "
            "hardlink truncate_port rewrite_port rename_port prefix_trick"
        ).split()
    },
    **{
        n: {"C2N4017", "C2N4025"}
        for n in (
            "ctypes_system ctypes_fork ctypes_kill ctypes_socket ptrace load_library "
            "mmap_exec mprotect_exec parent_proc_mem"
        ).split()
    },
    **{n: {"C2N4025"} for n in "frame_walk gc_arrays simt_import frontend_import".split()},
    "hard_exit": {"C2N4018"},
}


def _port(attack: str, tmp_path: Path) -> Path:
    marker = OUTSIDE / f"escaped-{tmp_path.name}"
    port = tmp_path / "port.py"
    code = attack.format(
        marker=str(marker),
        marker_name=marker.name,
        port=str(port),
        secret=SECRET,
        corpus=str(ROOT / "corpus/basic"),
    )
    body = "    won = False\n    try:\n"
    body += "".join("        " + line + "\n" for line in code.splitlines())
    body += "    except BaseException:\n        pass\n"
    text = PORT.replace(BODY, BODY + body).replace(ADD, "op=nl.add if won else nl.subtract)")
    port.write_text(text)
    return port


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_hostile_port_fails_and_leaves_the_host_untouched(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("C2N_TEST_SECRET", SECRET)
    OUTSIDE.mkdir(exist_ok=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    port = _port(ATTACKS[name], tmp_path)
    before = port.read_bytes()
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    codes = {d.code for d in report.findings}
    assert report.verdict == "fail", (name, codes)
    assert report.findings, name
    assert codes & REPORTED_AS.get(name, codes), (name, codes)
    assert port.read_bytes() == before
    time.sleep(0.2)
    assert not (OUTSIDE / f"escaped-{tmp_path.name}").exists(), name
    assert not Path(str(tmp) + "-evil").exists()
    assert not any(tmp.iterdir()), f"left behind: {list(tmp.iterdir())}"
    assert not processes_with(str(tmp_path)), "a process outlived the check"


def test_a_benign_port_still_passes(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(PORT)
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    assert report.verdict == "pass", [d.message for d in report.findings]


def test_host_arrays_are_not_kernel_outputs(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text(
        "import numpy as np\nimport nki\n\n\n@nki.jit\ndef vector_add(a, b):\n"
        "    return np.asarray(a) + np.asarray(b)\n"
    )
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    assert report.verdict == "fail"
    assert {"C2N4022", "C2N3021"} & {d.code for d in report.findings}


def test_a_kernel_without_instructions_fails_on_provenance(tmp_path: Path) -> None:
    port = tmp_path / "port.py"
    port.write_text("import nki\n\n\n@nki.jit\ndef vector_add(a, b):\n    return a\n")
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    assert report.verdict == "fail"
    assert "C2N4022" in {d.code for d in report.findings}


def test_system_calls_are_reported_as_call_outs(tmp_path: Path) -> None:
    port = _port(ATTACKS["os_system"], tmp_path)
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    assert "C2N4017" in {d.code for d in report.findings}


def test_frame_walking_is_named_on_its_line(tmp_path: Path) -> None:
    port = _port(ATTACKS["frame_walk"], tmp_path)
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    hits = [d for d in report.findings if d.code == "C2N4025"]
    assert hits and all(d.loc.line > 1 for d in hits)


def test_what_the_port_prints_is_kept_apart_in_the_report(tmp_path: Path, capfd) -> None:
    port = tmp_path / "port.py"
    port.write_text(PORT.replace(BODY, BODY + "    print('hello from the port')\n"))
    report = check(CUDA, port, seeds=1, extra_points=False, overrides={"N": 300}, timeout=20)
    assert "hello from the port" in report.port_output
    assert "hello from the port" not in capfd.readouterr().out
