"""The Rust extension: runs one `servesim` command in-process (the GIL released)."""
from typing import List, Tuple

__version__: str

def execute(args: List[str]) -> Tuple[int, str]:
    """Runs `servesim ARGS…`: (0, stdout) or (exit code, the CLI's one-line `error: …`)."""
