"""The README's commands run as written: every ``python`` block, and every ``sh`` block but the first (``npm start``
and ``npm test``, which are this suite), from the repository's root. ``npm run build:cli`` is skipped (the CLI is
built before this stage) and the built binary's directory is put first on ``PATH``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def blocks(lang: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def test_the_readme_has_commands_to_run() -> None:
    assert len(blocks("python")) >= 2
    assert len(blocks("sh")) >= 3


@pytest.mark.parametrize("i", range(len(blocks("python"))))
def test_readme_python_block_runs(i: int) -> None:
    code = blocks("python")[i]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"README python block {i + 1}:\n{code}\nstderr:\n{done.stderr}"
    assert done.stdout.strip(), f"README python block {i + 1} printed nothing"


@pytest.mark.parametrize("i", range(1, len(blocks("sh"))))
def test_readme_sh_block_runs(i: int, cli: Path) -> None:
    script = "\n".join(line for line in blocks("sh")[i].splitlines() if not line.startswith("npm run build:cli"))
    env = dict(os.environ, PATH=f"{cli.parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"README sh block {i + 1}:\n{script}\nstderr:\n{done.stderr}"
    assert done.stdout.strip(), f"README sh block {i + 1} printed nothing"
