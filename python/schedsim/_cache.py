"""The sweep cache: every run's metrics on disk as Parquet, keyed by the simulator version, the scenario's content
hash, the parameter values, the seed, the policy and the duration override, so a re-run computes only what is
missing. Each write is a new part file (written under a temporary name, synced, renamed, and the directory synced),
so concurrent sweeps and interrupted ones never leave a broken file; a part that cannot be read all the same (a disk
fault, a hand edit) is reported, moved aside to ``damaged/`` and its runs computed again."""

from __future__ import annotations

import json
import os
import uuid
import warnings
from pathlib import Path
from typing import Any, Union

import pyarrow as pa
import pyarrow.parquet as pq

CacheSpec = Union[bool, str, "os.PathLike[str]", None]

_SCHEMA = pa.schema([("key", pa.string()), ("policy", pa.string()), ("seed", pa.int64()), ("metrics", pa.string())])


def default_root() -> Path:
    """``$SCHEDSIM_CACHE``, else ``$XDG_CACHE_HOME/schedsim``, else ``~/.cache/schedsim``."""
    if os.environ.get("SCHEDSIM_CACHE"):
        return Path(os.environ["SCHEDSIM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "schedsim"


def run_key(params: str, seed: int, policy: str, duration_ms: int | None) -> str:
    """One run's key within a (version, scenario) directory; ``params`` is the canonical JSON of the grid values."""
    return json.dumps([params, seed, policy, duration_ms], separators=(",", ":"))


class Cache:
    """The part files of one simulator version and one scenario content hash."""

    def __init__(self, root: Path, version: str, scenario_hash: str) -> None:
        self.dir = root / version / scenario_hash

    @staticmethod
    def open(spec: CacheSpec, version: str, scenario_hash: str) -> Cache | None:
        """``True``: the default root; a path: that root; ``False`` or ``None``: no cache."""
        if spec is None or spec is False:
            return None
        root = default_root() if spec is True else Path(spec)
        return Cache(root, version, scenario_hash)

    def load(self) -> dict[str, dict[str, Any]]:
        """Every cached run: key -> metrics."""
        found: dict[str, dict[str, Any]] = {}
        if not self.dir.is_dir():
            return found
        for part in sorted(self.dir.glob("part-*.parquet")):
            try:
                table = pq.read_table(part, columns=["key", "metrics"])
                rows = {
                    str(key): json.loads(metrics)
                    for key, metrics in zip(table.column("key").to_pylist(), table.column("metrics").to_pylist())
                }
                if not all(isinstance(m, dict) for m in rows.values()):
                    raise ValueError("a row's metrics are not an object")
            except Exception as e:
                self._set_aside(part, e)
                continue
            found.update(rows)
        return found

    def _set_aside(self, part: Path, error: Exception) -> None:
        aside = self.dir / "damaged"
        try:
            aside.mkdir(exist_ok=True)
            os.replace(part, aside / part.name)
            where = f"moved to {aside / part.name}"
        except OSError as e:
            where = f"could not be moved aside ({e})"
        warnings.warn(
            f"schedsim cache: {part} is damaged ({type(error).__name__}: {error}); {where}; its runs are computed "
            "again",
            RuntimeWarning,
            stacklevel=3,
        )

    def save(self, rows: list[tuple[str, str, int, dict[str, Any]]]) -> None:
        """Writes ``(key, policy, seed, metrics)`` rows as one new part file."""
        if not rows:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {
                "key": [r[0] for r in rows],
                "policy": [r[1] for r in rows],
                "seed": [r[2] for r in rows],
                "metrics": [json.dumps(r[3], separators=(",", ":")) for r in rows],
            },
            schema=_SCHEMA,
        )
        name = f"part-{uuid.uuid4().hex}.parquet"
        tmp = self.dir / f".{name}.tmp"
        with open(tmp, "wb") as f:
            pq.write_table(table, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.dir / name)
        # The rename itself reaches the disk only when the directory is synced.
        if hasattr(os, "O_DIRECTORY"):
            fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
