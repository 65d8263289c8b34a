"""servesim from Python: a deterministic discrete-event simulator of LLM serving (an SGLang
server measured by sglang.bench_serving), the same engine as the ``servesim`` command line.

Every function mirrors one CLI command and returns plain data (dicts and lists)::

    import servesim
    r = servesim.run(hardware="h100-sxm5-80gb", model="llama-3.1-8b", tp=1,
                     max_concurrency=16, num_prompts=200)
    r["output_throughput"], r["p99_tpot_ms"]

    rows = servesim.sweep(max_concurrency=[1, 2, 4, 8, 16, 32], num_prompts=200)
    df = rows.to_pandas()          # one row per grid point (needs pandas)

Keyword names are the CLI's flags with ``_`` for ``-`` (``max_concurrency`` is
``--max-concurrency``); ``True`` gives a bare switch (``disable_radix_cache=True``), ``False``
and ``None`` leave a flag out; in :func:`sweep` and :func:`plan` a list, tuple or range is a
grid axis (``tp=[1, 2, 4]``) and a string may be a CLI range (``max_concurrency="1:64:x2"``).
Errors raise :class:`ServesimError` with the CLI's own one-line message. The simulation runs
with the interpreter released (other Python threads keep running), and sweeps use every core.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional

from . import _native

__all__ = [
    "ServesimError",
    "SweepResult",
    "cli",
    "plan",
    "profiles",
    "replay",
    "run",
    "sweep",
    "validate",
    "__version__",
]

__version__: str = _native.__version__


class ServesimError(Exception):
    """A servesim command failed: ``str(err)`` is the line the CLI prints on stderr
    (``error: …``, naming the flag, file or field), ``err.exit_code`` its exit status (2 for
    a flag the parser rejects, 1 for anything else)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def cli(*args: Any) -> str:
    """Runs ``servesim ARGS…`` in this process and returns what it prints on stdout.

    ``servesim.cli("run", "--tp", "2")`` is the command line ``servesim run --tp 2``; raises
    :class:`ServesimError` with the CLI's message where the command would fail."""
    code, text, _ = _native.execute([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if code != 0:
        raise ServesimError(text, code)
    return text


#: Exit code of a command whose answer is "none" (``plan`` with no qualifying candidate).
NO_ANSWER = 3


def _cli_answer(*args: Any) -> str:
    """:func:`cli`, except that an answer of "none" (exit code 3) returns what the command
    printed instead of raising."""
    code, text, stdout = _native.execute([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if code == NO_ANSWER:
        return stdout
    if code != 0:
        raise ServesimError(text, code)
    return text


def _value(v: Any) -> str:
    """One value as the CLI spells it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isinf(v) and v > 0:
        return "inf"
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return str(v)


def _flags(flags: Mapping[str, Any], *, grid: bool, command: str) -> List[str]:
    """Keyword arguments → CLI flags (see the module doc)."""
    argv: List[str] = []
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple, range)):
            if not grid:
                raise ServesimError(
                    f"error: {flag}: `{command}` takes one value per flag, got a list"
                    " (use servesim.sweep or servesim.plan for a grid)",
                    2,
                )
            argv.append(f"{flag}={','.join(_value(v) for v in value)}")
        else:
            argv.append(f"{flag}={_value(value)}")
    return argv


def _reserved(flags: Mapping[str, Any], names: Iterable[str], command: str) -> None:
    for name in names:
        if name in flags:
            raise ServesimError(
                f"error: --{name.replace('_', '-')}: set by servesim.{command}, which returns"
                " parsed data (use servesim.cli for the raw output)",
                2,
            )


def run(**flags: Any) -> Dict[str, Any]:
    """Simulates one bench_serving run (``servesim run``) and returns its JSON report as a
    dict: bench_serving's output-file keys (``output_throughput``, ``p99_tpot_ms``, …) plus
    servesim's own facts under ``"servesim"`` (``hardware``, ``model``, the resolved ``server``
    configuration, the simulation's ``stats``).

    Flags: ``scenario``, ``hardware``, ``model``, every server flag (``tp``, ``dp``,
    ``mem_fraction_static``, ``sglang_version``, …) and client flag (``num_prompts``,
    ``request_rate``, ``max_concurrency``, ``random_input_len``, ``seed``, …) of
    ``servesim run --help``."""
    _reserved(flags, ["output_format"], "run")
    out = cli("run", *_flags(flags, grid=False, command="run"), "--output-format=json")
    return json.loads(out)


def _number(text: str) -> Any:
    """A grid value as written → bool, int, float or the string itself."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _flat_row(row: Mapping[str, Any]) -> Dict[str, Any]:
    """One sweep.json row as one flat dict: index, the grid's flags (``_`` names, values as
    numbers where they are), the deployment it resolved to, error, every metric."""
    flat: Dict[str, Any] = {"index": row["index"]}
    for flag, value in row.get("params", {}).items():
        flat[flag.replace("-", "_")] = _number(value)
    for key, value in (row.get("deployment") or {}).items():
        flat[key] = float(value) if key == "request_rate" else value
    flat["error"] = row.get("error")
    flat.update(row.get("metrics") or {})
    return flat


class SweepResult(List[Dict[str, Any]]):
    """The points of a sweep, one flat dict each, by grid index (see :func:`sweep`).

    ``meta`` holds the rest of the CLI's sweep.json (``grid``, ``points``,
    ``servesim_version``, …), ``rows_json`` its rows as written, ``summary`` what the CLI
    printed (files and the Pareto frontier)."""

    meta: Dict[str, Any]
    rows_json: List[Dict[str, Any]]
    summary: str

    def to_pandas(self) -> Any:
        """The points as a pandas DataFrame (one row per point; needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("SweepResult.to_pandas() needs pandas: pip install pandas") from e
        return pd.DataFrame(list(self))


def sweep(grid: Optional[Mapping[str, Any]] = None, /, **flags: Any) -> SweepResult:
    """Simulates every point of a grid of ``run`` flags in parallel (``servesim sweep``) and
    returns one flat dict per point (a :class:`SweepResult`, a list with ``.to_pandas()``).

    The grid is a dict and/or keyword arguments: a list, tuple or range is an axis, a string
    may be a CLI list or range (``"1:64:x2"``), a scalar is fixed. A point that cannot run
    keeps its row, with ``error`` set and no metrics. ``out="DIR"`` also keeps the CLI's
    files (sweep.json, sweep.csv and the charts) in DIR; ``shard="I/N"`` runs one slice."""
    merged: Dict[str, Any] = dict(grid or {})
    merged.update(flags)
    out_dir = merged.pop("out", None)
    merged.setdefault("quiet", True)
    if out_dir is None:
        merged.setdefault("no_charts", True)
        with tempfile.TemporaryDirectory(prefix="servesim-sweep-") as tmp:
            return _sweep_into(merged, tmp)
    return _sweep_into(merged, os.fspath(out_dir))


def _sweep_into(flags: Mapping[str, Any], out_dir: str) -> SweepResult:
    summary = cli("sweep", f"--out={out_dir}", *_flags(flags, grid=True, command="sweep"))
    with open(os.path.join(out_dir, "sweep.json"), encoding="utf-8") as f:
        doc = json.load(f)
    rows = doc.pop("rows")
    result = SweepResult(_flat_row(r) for r in rows)
    result.meta = doc
    result.rows_json = rows
    result.summary = summary
    return result


def plan(grid: Optional[Mapping[str, Any]] = None, /, **flags: Any) -> Dict[str, Any]:
    """Finds the cheapest deployment meeting latency SLOs at a target rate, or the one
    sustaining the highest rate within a budget (``servesim plan``), and returns the CLI's JSON
    as a dict. Give ``target_rate`` or ``budget_per_hour``, SLOs such as ``slo_tpot_p99`` and a
    grid of ``run`` flags as in :func:`sweep` (``hardware=[...], tp=[1, 2, 4, 8]``). When no
    candidate meets the goal (the CLI's exit code 3) the dict is returned all the same, with no
    recommendation and each candidate's reason."""
    merged: Dict[str, Any] = dict(grid or {})
    merged.update(flags)
    _reserved(merged, ["format"], "plan")
    merged.setdefault("quiet", True)
    # No qualifying candidate is an answer (the CLI exits 3): the JSON says why each fails.
    out = _cli_answer("plan", *_flags(merged, grid=True, command="plan"), "--format=json")
    return json.loads(out)


def replay(log_path: "os.PathLike[str] | str", **flags: Any) -> Dict[str, Any]:
    """Replays the runs of a real bench_serving log (``servesim replay LOG``): each run rebuilt
    from its own arguments, simulated, and compared metric by metric; returns the CLI's JSON
    (``{"log": …, "runs": [{"metrics": [{"metric", "real", "simulated", "error_pct"}…]…}]}``).
    Flags: ``run``, ``manifest``, ``hardware``, ``model`` and the ``run`` command's flags."""
    _reserved(flags, ["format"], "replay")
    out = cli("replay", *_flags(flags, grid=False, command="replay"), "--format=json", "--", os.fspath(log_path))
    return json.loads(out)


def validate(manifest: "os.PathLike[str] | str | None" = None) -> Dict[str, Any]:
    """Replays every run of a validation manifest (``servesim validate``; default
    ``validation/manifest.yaml`` relative to the working directory) and returns the CLI's JSON
    error table."""
    return json.loads(cli("validate", *_flags({"manifest": manifest}, grid=False, command="validate"), "--format=json"))


def profiles() -> Dict[str, List[str]]:
    """The names of the bundled hardware profiles and models; their facts (memory, bandwidth,
    peaks, price; layers, parameters, KV bytes per token) are in
    ``servesim profiles --output-format json``."""
    data = json.loads(cli("profiles", "--output-format", "json"))
    return {
        "hardware": [h["name"] for h in data["hardware"]],
        "models": [m["name"] for m in data["models"]],
    }
