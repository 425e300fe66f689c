"""run, check and ScenarioError: the report is the CLI's, bit for bit, and bad scenarios name their field."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SCENARIOS

import schedsim


def test_run_equals_the_cli_deterministic_report(cli: Path) -> None:
    path = SCENARIOS / "p000-fig11a-pbratio-block.json"
    args = [str(cli), "run", str(path), "--deterministic", "--seed", "3", "--duration-ms", "5000"]
    native = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    mine = schedsim.run(path, seed=3, duration_ms=5000, deterministic=True)
    assert mine == native
    assert len(mine["runs"]) == 5 and all("wall_ms" not in r for r in mine["runs"])


def test_a_scenario_is_a_path_a_json_string_or_a_dict(short_scenario: dict[str, Any], tmp_path: Path) -> None:
    file = tmp_path / "sc.json"
    file.write_text(json.dumps(short_scenario))
    by_path = schedsim.run(file, policies=["credit"], deterministic=True)
    by_str_path = schedsim.run(str(file), policies=["credit"], deterministic=True)
    by_text = schedsim.run(json.dumps(short_scenario), policies=["credit"], deterministic=True)
    by_dict = schedsim.run(short_scenario, policies=["credit"], deterministic=True)
    assert by_path == by_str_path == by_text == by_dict
    assert [r["policy"] for r in by_dict["runs"]] == ["credit"]
    assert by_dict["runs"][0]["sim_ms"] == 1500
    # Without `deterministic` the wall-clock time is there; the simulated figures are the same.
    timed = schedsim.run(short_scenario, policies=["credit"])
    assert "wall_ms" in timed["runs"][0]
    assert timed["runs"][0]["domains"] == by_dict["runs"][0]["domains"]


def test_a_bad_scenario_raises_with_its_field_path(short_scenario: dict[str, Any]) -> None:
    bad = copy.deepcopy(short_scenario)
    bad["domains"][1]["weight"] = -5
    with pytest.raises(schedsim.ScenarioError) as err:
        schedsim.run(bad)
    assert err.value.path == "domains[1].weight"
    assert "domains[1].weight" in str(err.value)
    # The error crosses processes (Dask workers) intact.
    again = pickle.loads(pickle.dumps(err.value))
    assert (again.path, again.problems, str(again)) == (err.value.path, err.value.problems, str(err.value))
    with pytest.raises(schedsim.ScenarioError) as err:
        schedsim.run('{"schema": 1, "id": "x"')
    assert err.value.path == "(scenario)"
    with pytest.raises(ValueError, match="no such policy"):
        schedsim.run(short_scenario, policies=["nope"])


def test_check_reports_every_claim_over_seeds_and_variants() -> None:
    path = SCENARIOS / "credit-weights.json"
    results = schedsim.check(path, seeds=2)
    scenario = json.loads(path.read_text())
    variants = [None] + [v["label"] for v in scenario.get("variants", [])]
    assert {r["variant"] for r in results} == set(variants)
    assert len(results) == len(scenario["claims"]) * len(variants)
    for r in results:
        assert r["held"] + len(r["failed_seeds"]) == 2
        assert r["holds"] == (not r["failed_seeds"])
        assert r["values"]
    # The library's claims hold, as `npm run check` asserts for the CLI.
    assert all(r["holds"] for r in results)


@pytest.mark.parametrize(
    "name", ["p001-sec2-ten-slots.json", "p003-s45-enhanced-stress.json", "hw-barrier-makespan.json"]
)
def test_check_gives_the_clis_verdicts(cli: Path, name: str) -> None:
    """The same verdicts, ablations included, as ``schedsim check --json`` on library scenarios."""
    path = SCENARIOS / name
    native = json.loads(subprocess.run([str(cli), "check", "--json", str(path)], capture_output=True, text=True).stdout)
    results = schedsim.check(path)
    assert results == native
    kinds = {r["verdict"]["kind"] for r in results}
    assert kinds <= {"holds", "not_reproduced", "goal"}, kinds
    ablated = [r for r in results if "without" in r["verdict"]]
    assert all(r["verdict"]["without"]["judged"] == 1 for r in ablated)


def test_check_runs_each_claims_ablation() -> None:
    """A claim is judged without its mechanism too: an ablation that leaves the effect in place is not credited,
    and one whose runs lack what the claim reads is broken, not a pass."""
    sc = json.loads((SCENARIOS / "credit-weights.json").read_text())
    sc.update(duration_ms=1500, warmup_ms=500, variants=[])
    claim = {
        "metric": "domains.heavy.cpu_share",
        "higher": "credit",
        "than": "credit",
        "than_metric": "domains.light1.cpu_share",
        "by_factor": 1.2,
    }
    sc["claims"] = [
        {
            **claim,
            "text": "weights",
            "without": {"label": "equal", "patch": [{"op": "replace", "path": "/domains/1/weight", "value": 256}]},
        },
        {
            **claim,
            "text": "relabelled",
            "without": {"label": "relabelled", "patch": [{"op": "add", "path": "/policies/0/label", "value": "x"}]},
        },
        {
            **claim,
            "text": "bounded",
            "factor_at_most": {"policy": "credit", "metric": "domains.light2.cpu_share", "scale": 100},
            "without": {"label": "renamed", "patch": [{"op": "replace", "path": "/domains/2/name", "value": "light3"}]},
        },
    ]
    kinds = [(r["text"], r["holds"], r["verdict"]["kind"]) for r in schedsim.check(sc)]
    assert kinds == [
        ("weights", True, "holds"),
        ("relabelled", True, "not_credited"),
        ("bounded", True, "ablation_broken"),
    ]


def _busiest_run(path: Path) -> tuple[str, int]:
    """The policy whose run of ``path`` takes the most events, and that count."""
    report = schedsim.run(path, deterministic=True)
    return max(((r["policy"], r["events"]) for r in report["runs"]), key=lambda pe: pe[1])


def test_estimate_gives_the_cost_max_events_is_compared_with(short_scenario: dict[str, Any]) -> None:
    cost = schedsim.estimate(short_scenario)
    assert set(cost) == {"events_per_run", "runs", "events", "bytes_per_run", "script_operations", "seconds"}
    assert cost["runs"] == len(short_scenario["policies"]) and cost["events"] >= cost["events_per_run"] > 0
    # Twice the simulated time, about twice the events.
    longer = schedsim.estimate(short_scenario, ["credit"], duration_ms=3000)
    assert longer["runs"] == 1 and longer["events_per_run"] > 1.5 * cost["events_per_run"]
    with pytest.raises(ValueError, match=r"max_events=\d+ to run it anyway"):
        schedsim.run(short_scenario, max_events=cost["events_per_run"] - 1)
    with pytest.raises(ValueError, match="at least 1"):
        schedsim.run(short_scenario, max_events=0)
    with pytest.raises(ValueError, match="no such policy"):
        schedsim.estimate(short_scenario, ["nope"])


def test_max_events_stops_a_run_that_passes_its_estimate() -> None:
    # The estimate undercounts the network path under dom0 stress most in the library: a limit between the two lets
    # the run start and stops it, as `schedsim run --max-events` does. The limit counts the engine's work (events and
    # the run-queue entries they walk), so the run that must finish gets room above its events.
    path = SCENARIOS / "p003-table5-dom0-stress.json"
    policy, events = _busiest_run(path)
    estimated = schedsim.estimate(path, [policy])["events_per_run"]
    assert events > estimated + 2, (events, estimated)
    limit = (events + estimated) // 2
    with pytest.raises(RuntimeError, match=f"run stopped.*limit of {limit}"):
        schedsim.run(path, [policy], deterministic=True, max_events=limit)
    # With room, the run completes, the same run as without a limit.
    whole = schedsim.run(path, [policy], deterministic=True)
    assert schedsim.run(path, [policy], deterministic=True, max_events=10 * events) == whole
    # A sweep's runs stop at the same limit, naming the point; one estimated above it never starts.
    with pytest.raises(ValueError, match=f"policy {policy}: run stopped.*limit of {limit}"):
        schedsim.sweep(path, {}, policies=[policy], cache=False, workers=1, progress=False, max_events=limit)
    with pytest.raises(ValueError, match=r"combination 0 \(.*\): .*max_events="):
        schedsim.sweep(path, {}, policies=[policy], cache=False, workers=1, progress=False, max_events=estimated - 1)
    df = schedsim.sweep(path, {}, policies=[policy], cache=False, workers=1, progress=False, max_events=10 * events)
    assert df["events"].tolist() == [events]


TEMPLATES = ROOT / "sim-wasm" / "core" / "src" / "policy" / "script" / "templates"


def test_scripts_run_as_the_cli_runs_them(cli: Path, short_scenario: dict[str, Any], tmp_path: Path) -> None:
    """``scripts=`` gives a policy a Rhai source as ``run --script ID=PATH`` does: the same report, byte for byte;
    a syntax error is a ScenarioError with its line and column, a runtime error a RuntimeError naming the hook."""
    source = (TEMPLATES / "fair_share.rhai").read_text()
    file = tmp_path / "sc.json"
    file.write_text(json.dumps(short_scenario))
    args = [
        str(cli),
        "run",
        str(file),
        "--deterministic",
        "--policy",
        "mine",
        "--script",
        f"mine={TEMPLATES / 'fair_share.rhai'}",
    ]
    native = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    mine = schedsim.run(short_scenario, policies=["mine"], deterministic=True, scripts={"mine": source})
    assert mine == native
    assert [r["policy"] for r in mine["runs"]] == ["mine"]
    # An existing policy takes the script in place of its scheduler.
    replaced = schedsim.run(short_scenario, policies=["credit"], deterministic=True, scripts={"credit": source})
    assert replaced["runs"][0]["domains"] == mine["runs"][0]["domains"]
    with pytest.raises(schedsim.ScenarioError, match=r"line 1, column"):
        schedsim.run(short_scenario, scripts={"mine": "fn do_schedule(p, cur, runnable) {"})
    with pytest.raises(RuntimeError, match=r"script policy 'mine': do_schedule at [0-9.]+ ms, line 1"):
        schedsim.run(short_scenario, policies=["mine"], scripts={"mine": "fn do_schedule(p, c, r) { 1 / 0 }"})
    with pytest.raises(TypeError, match="scripts"):
        schedsim.run(short_scenario, scripts={"mine": 3})  # type: ignore[dict-item]
