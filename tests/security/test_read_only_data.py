"""A data directory on a read-only file system: ``serve`` refuses in one clear line, without a
traceback, and changes no file in it. A real server's data on a real tmpfs, remounted read-only
(``chmod`` proves nothing when the tests run as root)."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.namespaces import in_tmpfs
from tests.support.ports import free_port

SCRIPT = r"""
import hashlib, os, subprocess, sys, time
import httpx, orjson

root, port = sys.argv[1], sys.argv[2]
data = f"{root}/data"
env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
serve = [sys.executable, "-m", "sightline.cli", "serve", "--port", port, "--data-dir", data]
first = subprocess.Popen(serve, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 180
while True:
    try:
        if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
            break
    except httpx.HTTPError:
        pass
    assert time.monotonic() < deadline and first.poll() is None, "the first server did not start"
    time.sleep(0.2)
while not os.path.exists(f"{data}/store.duckdb"):  # the analytics store's file, too
    assert time.monotonic() < deadline, "the store process did not create its file"
    time.sleep(0.2)
first.terminate()
first.wait(timeout=60)
subprocess.run(["mount", "-o", "remount,ro", root], check=True)

def files():
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            found[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return found

before = files()
second = subprocess.run(serve, env=env, capture_output=True, text=True, timeout=120)
print(orjson.dumps({"code": second.returncode, "stderr": second.stderr, "stdout": second.stdout,
                    "before": before, "after": files()}).decode())
"""


def test_serve_refuses_a_read_only_data_directory_clearly_and_touches_nothing(tmp_path: Path) -> None:
    out = in_tmpfs(tmp_path / "disk", "64m", SCRIPT, str(free_port()), timeout=300)
    result = orjson.loads(out.strip().splitlines()[-1])
    assert result["code"] == 1
    assert "is on a read-only file system; nothing was changed" in result["stderr"]
    assert "Traceback" not in result["stderr"] + result["stdout"]
    assert len(result["stderr"].strip().splitlines()) == 1
    names = {Path(path).name for path in result["before"]}
    assert {"sightline.db", "store.duckdb"} <= names
    assert result["after"] == result["before"]
