"""Test support: a real ``bodylink serve --body BODY`` per test module, on a free port, in its own runtime dir.

The runtime is the repository's (``bin/bodylink.js``, run by ``node``: BODYLINK_NODE overrides);
several test runs (and other clones) may run at once, so the API port is 0 (the runtime prints
the one it got), the LoLA and TNY-360 sockets are off, and BODYLINK_RUNTIME_DIR is a fresh
temporary directory removed afterwards. BODYLINK_TEST_SIM=physics serves the MuJoCo body
(``serve --sim physics``): the same tests on the physics arm (test/python/client.test.ts).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Callable

import bodylink
from bodylink import BodylinkError, Robot

REPO = Path(__file__).resolve().parents[2]
# The live tests' staleness bound: the default 0.25 s is the rule under test in test_offline; here,
# on a 2-core machine shared with other test runs, a process descheduled for a quarter second must
# not turn a getter None at a random moment.
STALE_S = 2.0
# How long a live test waits for what a command does (the head there, the stiffness 0): a hang guard
# only. The runtime gets there in cycles; a loaded 2-core machine only makes that later (a suite run
# at load ~12, four runtimes side by side, took more than 10 s once).
LIVE_S = 60.0
START_TIMEOUT_S = float(os.environ.get("BODYLINK_TEST_START_S", "120"))  # a loaded 2-core VM starts a runtime in 5..60 s


class Runtime:
    """A running ``bodylink serve``: ``url``, and ``stop()``."""

    def __init__(self, body: str, *extra: str) -> None:
        self.body = body
        self._dir = tempfile.mkdtemp(prefix=f"bodylink-py-{body}-")
        env = dict(os.environ, BODYLINK_RUNTIME_DIR=self._dir)
        env.pop("BODYLINK_TOKEN", None)
        node = os.environ.get("BODYLINK_NODE", "node")
        args = [node, str(REPO / "bin" / "bodylink.js"), "serve", "--body", body, "--api-port", "0", "--name", f"py-{body}-{os.getpid()}"]
        own_servers: dict[str, list[str]] = {"nao": ["--no-lola"], "tny360": ["--no-tny"], "p7": []}
        args += own_servers[body]
        sim = os.environ.get("BODYLINK_TEST_SIM")
        if sim:
            args += ["--sim", sim]
        args += list(extra)
        self._proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output: list[str] = []
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        found: list[str] = []
        ready = threading.Event()

        def pump() -> None:
            assert self._proc.stdout is not None
            for line in self._proc.stdout:
                self.output.append(line)
                m = re.search(r"robot API: (http://\S+)", line)
                if m and not found:
                    found.append(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(START_TIMEOUT_S)
        if not found:
            self.stop()
            raise RuntimeError(f"bodylink serve --body {self.body} did not start within {START_TIMEOUT_S} s:\n{''.join(self.output)}")
        return found[0]

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


class ModuleRuntime:
    """A test module's runtime: ``RT = ModuleRuntime("p7"); setUpModule, tearDownModule = RT.start, RT.stop``."""

    def __init__(self, body: str) -> None:
        self.body = body
        self._rt: Runtime | None = None

    def start(self) -> None:
        self._rt = Runtime(self.body)

    def stop(self) -> None:
        if self._rt is not None:
            self._rt.stop()

    @property
    def url(self) -> str:
        assert self._rt is not None, "setUpModule has not started the runtime"
        return self._rt.url


def assert_refused_while_held(test: unittest.TestCase, url: str, me: Robot, owner: str) -> None:
    """While another client (``owner``) holds control, ``me.acquire_control()`` is refused with
    BL_ERR_AUTH_HELD (409) naming it; once it released, ``me`` gets control."""
    other = bodylink.connect(url, owner=owner, stale_after_s=STALE_S)
    test.addCleanup(other.close)
    with other.acquire_control(lease_ms=1000):
        with test.assertRaises(BodylinkError) as e:
            me.acquire_control(lease_ms=1000)
        test.assertEqual((e.exception.code, e.exception.status), ("BL_ERR_AUTH_HELD", 409))
        assert e.exception.holder is not None
        test.assertEqual(e.exception.holder.owner, owner)
        test.assertIn(owner, e.exception.message)
    with me.acquire_control(lease_ms=1000) as control:
        test.assertTrue(control.active)


def wait_until(pred: Callable[[], bool], timeout_s: float = 5.0, every_s: float = 0.02) -> bool:
    """Poll ``pred`` until it is true or ``timeout_s`` passed; its last answer."""
    end = time.monotonic() + timeout_s
    while True:
        if pred():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(every_s)


def run_example(name: str, url: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``python/examples/NAME`` against ``url`` as a user would (PYTHONPATH=python, BODYLINK_URL)."""
    env = dict(os.environ, BODYLINK_URL=url, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, str(REPO / "python" / "examples" / name)], env=env, capture_output=True, text=True, timeout=timeout_s)
