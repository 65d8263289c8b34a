"""Type stubs of servesim's Python API (see the module docstring in __init__.py).

Keyword names are the CLI flags with `_` for `-`; `True` is a bare switch, `False`/`None`
leave a flag out; in `sweep` and `plan` a list, tuple or range is a grid axis and a string may be
a CLI list or range. The most used flags are spelled out; every other `servesim run` flag is
accepted through `**flags`."""
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Axis = Union[str, int, float, bool, Sequence[Union[str, int, float, bool]], range]

NO_ANSWER: int

class ServesimError(Exception):
    """A command failed: `str(err)` is the CLI's stderr line, `exit_code` its exit status."""

    message: str
    exit_code: int
    def __init__(self, message: str, exit_code: int = ...) -> None: ...

class SweepResult(List[Dict[str, Any]]):
    """One flat dict per grid point: index, grid flags, deployment, error, every metric."""

    meta: Dict[str, Any]
    rows_json: List[Dict[str, Any]]
    summary: str
    def to_pandas(self) -> Any:
        """The points as a pandas DataFrame."""

def cli(*args: Any) -> str:
    """Runs `servesim ARGS…` in-process and returns its stdout."""

def run(
    *,
    scenario: Optional[_Path] = ...,
    hardware: Optional[str] = ...,
    model: Optional[str] = ...,
    tp: Optional[int] = ...,
    dp: Optional[int] = ...,
    enable_dp_attention: bool = ...,
    mem_fraction_static: Optional[float] = ...,
    chunked_prefill_size: Optional[int] = ...,
    max_running_requests: Optional[int] = ...,
    max_total_tokens: Optional[int] = ...,
    schedule_policy: Optional[str] = ...,
    disable_radix_cache: bool = ...,
    disable_cuda_graph: bool = ...,
    attention_backend: Optional[str] = ...,
    kv_cache_dtype: Optional[str] = ...,
    quantization: Optional[str] = ...,
    sglang_version: Optional[str] = ...,
    backend: Optional[str] = ...,
    dataset_name: Optional[str] = ...,
    dataset_path: Optional[_Path] = ...,
    num_prompts: Optional[int] = ...,
    random_input_len: Optional[int] = ...,
    random_output_len: Optional[int] = ...,
    random_range_ratio: Optional[float] = ...,
    request_rate: Optional[float] = ...,
    max_concurrency: Optional[int] = ...,
    seed: Optional[int] = ...,
    max_events: Optional[int] = ...,
    max_wall_seconds: Optional[float] = ...,
    timeline: Optional[_Path] = ...,
    plot: Optional[_Path] = ...,
    **flags: Any,
) -> Dict[str, Any]:
    """Simulates one bench_serving run; bench_serving's JSON keys plus servesim's facts."""

def sweep(
    grid: Optional[Mapping[str, _Axis]] = ...,
    /,
    *,
    scenario: Optional[_Path] = ...,
    out: Optional[_Path] = ...,
    shard: Optional[str] = ...,
    no_charts: bool = ...,
    quiet: bool = ...,
    hardware: Optional[_Axis] = ...,
    model: Optional[_Axis] = ...,
    tp: Optional[_Axis] = ...,
    dp: Optional[_Axis] = ...,
    num_prompts: Optional[_Axis] = ...,
    request_rate: Optional[_Axis] = ...,
    max_concurrency: Optional[_Axis] = ...,
    random_input_len: Optional[_Axis] = ...,
    random_output_len: Optional[_Axis] = ...,
    **flags: _Axis,
) -> SweepResult:
    """Simulates every point of a grid in parallel; one flat dict per point."""

def plan(
    grid: Optional[Mapping[str, _Axis]] = ...,
    /,
    *,
    scenario: Optional[_Path] = ...,
    target_rate: Optional[float] = ...,
    budget_per_hour: Optional[float] = ...,
    slo_ttft_p99: Optional[float] = ...,
    slo_tpot_p99: Optional[float] = ...,
    slo_e2e_p99: Optional[float] = ...,
    cost_per_device_hour: Optional[str] = ...,
    rate_tolerance: Optional[float] = ...,
    quiet: bool = ...,
    **flags: _Axis,
) -> Dict[str, Any]:
    """The cheapest deployment meeting the SLOs at a rate, or the best within a budget."""

def replay(
    log_path: _Path,
    *,
    run: Optional[int] = ...,
    manifest: Optional[_Path] = ...,
    hardware: Optional[str] = ...,
    model: Optional[str] = ...,
    stats: bool = ...,
    **flags: Any,
) -> Dict[str, Any]:
    """Replays a real bench_serving log; real, simulated and error % per metric."""

def validate(manifest: Optional[_Path] = ...) -> Dict[str, Any]:
    """Replays every run of a validation manifest; the error table."""

def profiles() -> Dict[str, List[str]]:
    """The bundled hardware profiles and models."""
