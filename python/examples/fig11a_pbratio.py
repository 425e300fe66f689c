"""Paper 000, Fig. 11(a) as a sweep: block-read throughput of the I/O domain against PBratio, 10 seeds per value,
run on a Dask cluster, plotted with its spread.

    python examples/fig11a_pbratio.py                        # a LocalCluster on this machine
    python examples/fig11a_pbratio.py --scheduler tcp://host:8786   # an existing cluster (SSH, Slurm, Kubernetes)

Writes docs/figures/p000-fig11a-pbratio.png. Results are cached (~/.cache/schedsim), so a second run only plots.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from distributed import Client, LocalCluster

import schedsim

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "p000-fig11a-pbratio-block.json"
OUT = ROOT / "docs" / "figures" / "p000-fig11a-pbratio.png"
PB_RATIOS = [0, 0.03125, 0.0625, 0.09375, 0.125, 0.1875, 0.25, 0.5, 1]
METRIC = "domains.io.throughput.blocks_per_s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (default: start a LocalCluster)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    cluster = None if args.scheduler else LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
    with Client(args.scheduler or cluster) as client:
        # One policy of the scenario (TAVS with partial boosting) with its PBratio swept.
        df = schedsim.sweep(
            SCENARIO,
            {"policies.pb0_125.params.tavs.pb_ratio": PB_RATIOS},
            seeds=args.seeds,
            policies=["pb0_125"],
            client=client,
            metrics=[METRIC, "domains.dom0.cpu_share"],
        )
    if cluster is not None:
        cluster.close()
    print(f"{len(df)} runs: {df.attrs['simulated']} simulated, {df.attrs['cached']} from the cache")

    x = "policies.pb0_125.params.tavs.pb_ratio"
    stats = df.groupby(x)[METRIC].agg(["mean", "std", "min", "max"])
    print(stats.round(1).to_string())

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=110)
    ax.fill_between(stats.index, stats["min"], stats["max"], color="#56B4E9", alpha=0.3, label="min-max over seeds")
    ax.errorbar(stats.index, stats["mean"], yerr=stats["std"], color="#0072B2", marker="o", capsize=3, label="mean, sd")
    ax.scatter(df[x], df[METRIC], s=6, color="#000000", alpha=0.35, label=f"each seed ({args.seeds})")
    ax.set_xlabel("PBratio (partial boosting allowed, fraction of the vCPU's CPU use)")
    ax.set_ylabel("block reads / s (I/O domain)")
    ax.set_title("Paper 000 Fig. 11(a): throughput vs PBratio", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
