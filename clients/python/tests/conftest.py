"""Fixtures: the real `maumau serve` binary on a free loopback port with a temporary data dir.

The binary is $MAUMAU_BIN; without it, `cargo build --release -p maumau-cli` builds it (in
$CARGO_TARGET_DIR, or the workspace's target directory).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from maumau_client.serve import LocalServer
from proxy import proxy_to  # noqa: F401  (a fixture)

REPO = Path(__file__).resolve().parents[3]


def _build_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "maumau-cli"], cwd=REPO, check=True
    )
    target = os.environ.get("CARGO_TARGET_DIR")
    if not target:
        meta = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO, check=True, capture_output=True, text=True,
        )
        target = json.loads(meta.stdout)["target_directory"]
    return Path(target) / "release" / "maumau"


@pytest.fixture(scope="session")
def maumau_bin() -> Path:
    path = Path(os.environ["MAUMAU_BIN"]) if os.environ.get("MAUMAU_BIN") else _build_binary()
    assert path.is_file(), f"no server binary at {path}"
    return path


@pytest.fixture
def server(maumau_bin: Path, tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    s = LocalServer(maumau_bin, data)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def ladder_server(maumau_bin: Path, tmp_path: Path):
    """A server running the ladder (`maumau serve --ladder`) with its default formats; versions
    are rated from their first match (validation matches are tested in the Rust suite)."""
    data = tmp_path / "data"
    data.mkdir()
    config = tmp_path / "ladder.toml"
    config.write_text("ladder_validation = false\n")
    s = LocalServer(maumau_bin, data, ("--ladder", "--config", str(config)))
    try:
        yield s
    finally:
        s.stop()
