"""Fixtures for the tests that run where the wheels are installed (scripts/test-wheels.sh): the
`maumau` binary on PATH, a `maumau serve` of it on a free loopback port, the repository root
(for the examples) and a proxy that drops a client's stream (the client tests' own, from
clients/python/tests/proxy.py)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from maumau_client.serve import LocalServer

ROOT = Path(os.environ.get("MAUMAU_ROOT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))
from proxy import proxy_to  # noqa: E402, F401  (a fixture, found through the line above)


@pytest.fixture(scope="session")
def maumau_bin() -> str:
    """The installed command line (the wheel's binary), never a cargo build."""
    path = shutil.which("maumau")
    assert path, "no maumau on PATH: install the maumau wheel (scripts/test-wheels.sh)"
    return path


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="module")
def server(maumau_bin: str, tmp_path_factory):
    data = tmp_path_factory.mktemp("serve") / "data"
    data.mkdir()
    s = LocalServer(maumau_bin, data)
    try:
        yield s
    finally:
        s.stop()
