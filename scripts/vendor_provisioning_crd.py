"""Copy the ProvisioningRequest CRD into the package, one file per supported Kubernetes minor.

The CRD is not in the cluster-autoscaler's chart; upstream keeps it in git
(`cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml`). Each minor gets the file
at the tag of the autoscaler image pinned for it (`CLUSTER_AUTOSCALER_IMAGE_PINS`), so the API the autoscaler
reads is the one the cluster serves, and `pulumi up` applies it from the package instead of fetching a URL.

Usage: python scripts/vendor_provisioning_crd.py PATH_TO_A_CLONE_OF_kubernetes/autoscaler [--date YYYY-MM-DD]
(the clone needs the `cluster-autoscaler-<version>` tags). Run it after bumping an autoscaler pin;
tests/queue/test_provisioning_crd.py fails until the files follow the pins.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
from pathlib import Path

from gpuplane.manifests import queue, versions

UPSTREAM_PATH = "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
OUT_DIR = Path(__file__).resolve().parent.parent / "manifests" / queue.CRD_DIR


def git(clone: Path, *args: str) -> str:
    """A git command's output in the clone (the tags are read there, nothing is fetched)."""
    return subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    """Write one copy per minor of `CLUSTER_AUTOSCALER_IMAGE_PINS`, each with its source header."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, help="a git clone of kubernetes/autoscaler with its tags")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the copy's date (ISO)")
    ns = parser.parse_args()
    for minor, pin in sorted(versions.CLUSTER_AUTOSCALER_IMAGE_PINS.items()):
        tag = f"cluster-autoscaler-{pin.version.removeprefix('v')}"
        commit, day = git(ns.clone, "log", "-1", "--format=%h %cs", tag).split()
        body = git(ns.clone, "show", f"{tag}:{UPSTREAM_PATH}")
        header = queue.crd_header(tag=tag, commit=commit, released=day, path=UPSTREAM_PATH, copied=ns.date)
        target = OUT_DIR / queue.provisioning_crd_file(minor)
        target.write_text(header + body, encoding="utf-8")
        print(f"{minor}: {tag} ({commit}) -> {target.relative_to(OUT_DIR.parent.parent)}")


if __name__ == "__main__":
    main()
