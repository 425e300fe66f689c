"""The exception a bad scenario raises, defined in Python so it pickles across processes and Dask workers."""

from __future__ import annotations


class ScenarioError(ValueError):
    """An invalid scenario, or a sweep combination that makes one invalid.

    ``problems`` holds every problem found, each starting with its field path (``domains[1].weight: ...``);
    ``paths`` holds those paths and ``path`` the first. ``context`` names the sweep combination, if any.
    """

    def __init__(self, message: str, problems: list[str], context: str = "") -> None:
        super().__init__(message, problems, context)
        self.message = message
        self.problems = list(problems)
        self.context = context
        self.paths = [p.split(": ", 1)[0] for p in self.problems]
        self.path = self.paths[0] if self.paths else "(scenario)"

    def __str__(self) -> str:
        return self.message
