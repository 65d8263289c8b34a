"""Shared fixtures: the `servesim` binary built from this repository, run as a subprocess, is
the reference the Python package must agree with."""
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def servesim_bin() -> Path:
    """The CLI: $SERVESIM_BIN, else target/release/servesim (built by `cargo test --release`)."""
    path = Path(os.environ.get("SERVESIM_BIN", REPO / "target" / "release" / "servesim"))
    if not path.is_file():
        pytest.fail(f"{path} not found: build it with `cargo build --release` (or set SERVESIM_BIN)")
    return path


@pytest.fixture(scope="session")
def cli_run(servesim_bin):
    """Runs the CLI with `args` from the repository root: (exit code, stdout, stderr)."""

    def run(*args: str):
        p = subprocess.run(
            [str(servesim_bin), *args], cwd=REPO, capture_output=True, text=True, check=False
        )
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli_run):
    """The CLI's JSON output for `args` (fails the test if the command fails)."""

    def run(*args: str):
        code, out, err = cli_run(*args)
        assert code == 0, err
        return json.loads(out)

    return run


@pytest.fixture()
def in_repo(monkeypatch):
    """Runs the test from the repository root (relative paths as the CLI's tests use them)."""
    monkeypatch.chdir(REPO)
    return REPO
