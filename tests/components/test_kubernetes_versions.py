"""Kubernetes versions: the table, the default, and the support-window rule at its boundaries.

"Today" comes from `lifecycle.today()` (GPUPLANE_TODAY); the suite pins it (tests/conftest.py) and these
tests move it to the edges of the support windows.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from gpuplane.components.autoscaler import autoscaler_values
from gpuplane.components.config import AutoscalerArgs
from gpuplane.infra import config
from gpuplane.manifests import lifecycle, versions
from tests.conftest import DEV_CLUSTER, PINNED_TODAY


def parse(cluster: dict[str, Any], today: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv(lifecycle.TODAY_ENV, today)
    try:
        config.parse({"aws:region": "us-west-2", "gpuplane:cluster": {**DEV_CLUSTER, **cluster}}, "test")
    except config.ConfigError as exc:
        return exc.problems
    return []


def test_the_table_has_136_with_dates_in_order_and_an_autoscaler_image_per_version() -> None:
    assert versions.KUBERNETES_VERSIONS["1.36"] == ("2026-06-02", "2027-08-02", "2028-08-02")
    for version, dates in versions.KUBERNETES_VERSIONS.items():
        released, standard, extended = (datetime.date.fromisoformat(d) for d in dates)
        assert released < standard < extended, version
        assert version in versions.CLUSTER_AUTOSCALER_IMAGES
        assert versions.CLUSTER_AUTOSCALER_IMAGES[version].startswith(f"v{version}.")
    assert set(versions.CLUSTER_AUTOSCALER_IMAGES) == set(versions.KUBERNETES_VERSIONS)


def test_autoscaler_images_carry_the_provisioning_request_fix() -> None:
    """The training queue (ProvisioningRequests) needs 1.35.2+ / 1.36.1+ (autoscaler #8855)."""
    patch = {v: tuple(int(p) for p in tag[1:].split(".")) for v, tag in versions.CLUSTER_AUTOSCALER_IMAGES.items()}
    assert patch["1.35"] >= (1, 35, 2) and patch["1.36"] >= (1, 36, 1)


def test_a_136_stack_gets_its_autoscaler_image() -> None:
    values = autoscaler_values(
        AutoscalerArgs(), cluster_name="c", region="us-west-2", kubernetes_version="1.36", startup_taints=()
    )
    assert values["image"] == {"repository": "registry.k8s.io/autoscaling/cluster-autoscaler", "tag": "v1.36.1"}


def test_the_default_is_the_newest_in_standard_support_on_the_pin_day() -> None:
    assert lifecycle.newest_in_standard_support(datetime.date.fromisoformat(PINNED_TODAY)) == "1.36"
    assert versions.DEFAULT_KUBERNETES_VERSION == "1.36"


def test_today_comes_from_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lifecycle.TODAY_ENV, "2027-01-02")
    assert lifecycle.today() == datetime.date(2027, 1, 2)
    monkeypatch.setenv(lifecycle.TODAY_ENV, "soon")
    with pytest.raises(ValueError, match="GPUPLANE_TODAY='soon' is not a date"):
        lifecycle.today()


@pytest.mark.parametrize(
    ("today", "refused"),
    [("2026-12-01", False), ("2026-12-02", True)],  # 1.34 leaves standard support on 2026-12-02 (UTC)
)
def test_134_at_the_end_of_standard_support(today: str, refused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    found = parse({"kubernetesVersion": "1.34"}, today, monkeypatch)
    if not refused:
        assert found == []
        return
    assert found == [
        f"gpuplane:cluster.kubernetesVersion: '1.34' left EKS standard support on 2026-12-02 (today is {today}): with "
        "upgradePolicy STANDARD, EKS would upgrade the new cluster at once and the pinned version would drift. Use "
        "1.36, the newest version in standard support; or set cluster.upgradePolicy: EXTENDED to stay on 1.34 "
        "until 2027-12-02 at $0.60 per cluster hour instead of $0.10. A cluster that already runs an older minor "
        "moves one minor per `pulumi up` (EKS refuses a skip; `gpuplane preflight` names the path, docs/upgrades.md): "
        "set upgradePolicy EXTENDED while a step is past standard support"
    ]


@pytest.mark.parametrize("today", ["2027-08-02", "2027-12-02", "2028-05-01"])
def test_past_every_standard_support_the_message_names_no_unsupported_version(
    today: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once 1.36 (the table's newest) has left standard support, no message may tell the user to use it."""
    (found,) = parse({"kubernetesVersion": "1.36"}, today, monkeypatch)
    assert "'1.36' left EKS standard support on 2027-08-02" in found
    assert "Use 1.36" not in found and "use 1.36" not in found
    assert (
        f"No version this gpuplane knows (1.32, 1.33, 1.34, 1.35, 1.36) is in EKS standard support on {today} (the "
        "newest, 1.36, left it on 2027-08-02): move to a newer gpuplane, whose table lists the versions EKS offers "
        "now (`aws eks describe-cluster-versions` lists them too); or set cluster.upgradePolicy: EXTENDED" in found
    )


@pytest.mark.parametrize(
    ("today", "named"),
    [("2026-05-01", "1.35"), ("2026-11-24", "1.36"), ("2027-08-01", "1.36"), ("2027-08-02", None)],
)
def test_the_advice_names_a_version_in_standard_support_that_day(today: str, named: str | None) -> None:
    day = datetime.date.fromisoformat(today)
    advice = lifecycle.supported_version_advice(day)
    if named is None:
        assert advice.startswith("no version this gpuplane knows") and "move to a newer gpuplane" in advice
        assert all(not lifecycle.in_standard_support(v, day) for v in versions.KUBERNETES_VERSIONS)
    else:
        assert advice == f"use {named}, the newest version in standard support"
        assert lifecycle.in_standard_support(named, day)


def test_past_extended_support_the_refusal_names_a_supported_version_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    (early,) = parse({"kubernetesVersion": "1.32", "upgradePolicy": "EXTENDED"}, "2027-03-23", monkeypatch)
    assert early.endswith("EKS no longer creates clusters on it; use 1.36, the newest version in standard support")
    (late,) = parse({"kubernetesVersion": "1.35", "upgradePolicy": "EXTENDED"}, "2028-03-27", monkeypatch)
    assert "1.36, the newest" not in late and "no version this gpuplane knows" in late


@pytest.mark.parametrize("version", ["1.32", "1.33"])
def test_versions_past_standard_support_today_need_extended(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    found = parse({"kubernetesVersion": version}, PINNED_TODAY, monkeypatch)
    assert len(found) == 1 and "upgradePolicy: EXTENDED" in found[0] and "$0.60" in found[0]
    assert parse({"kubernetesVersion": version, "upgradePolicy": "EXTENDED"}, PINNED_TODAY, monkeypatch) == []


@pytest.mark.parametrize(("today", "refused"), [("2027-03-22", False), ("2027-03-23", True)])
def test_the_end_of_extended_support_refuses_even_extended(
    today: str, refused: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = parse({"kubernetesVersion": "1.32", "upgradePolicy": "EXTENDED"}, today, monkeypatch)
    assert bool(found) is refused
    if refused:
        assert "'1.32' left EKS extended support on 2027-03-23" in found[0]
        assert "EKS no longer creates clusters on it" in found[0]


def test_the_newest_in_standard_support_moves_with_the_calendar() -> None:
    assert lifecycle.newest_in_standard_support(datetime.date(2026, 5, 1)) == "1.35"  # before 1.36 on EKS
    assert lifecycle.newest_in_standard_support(datetime.date(2028, 1, 1)) is None
