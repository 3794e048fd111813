"""The README's quickstart (examples/quickstart.py) runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart.py"


def test_the_quickstart_runs() -> None:
    run = subprocess.run([sys.executable, str(QUICKSTART)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Andy's editor is Helix." in run.stdout
