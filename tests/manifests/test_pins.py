"""Dated pins (`versions.Pin`): every default names its source and dates, and an aged one is noticed.

The suite pins "today" (tests/conftest.py) so that rules judge the same day everywhere; one test here reads the
real calendar on purpose: it is the maintainers' alarm that a default went past its vendor's end of support.
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any

import pytest

from gpuplane.manifests import lifecycle, versions, wellknown

CHECKED = datetime.date(2026, 11, 28)
"""The day the pins were last read upstream (each pin's `read`)."""


def every_pin_in_the_module() -> list[versions.Pin]:
    """Each Pin reachable from versions' globals: directly, in a TensorFlowImage, or in a dict of pins."""
    found: list[versions.Pin] = []
    for value in vars(versions).values():
        if isinstance(value, versions.Pin):
            found.append(value)
        elif isinstance(value, versions.TensorFlowImage):
            found.append(value.pin)
        elif isinstance(value, dict):
            found += [v for v in value.values() if isinstance(v, versions.Pin)]
    return found


def test_pins_lists_every_pin_once() -> None:
    assert set(every_pin_in_the_module()) == set(versions.PINS)
    names = [pin.name for pin in versions.PINS]
    assert len(names) == len(set(names)), names


@pytest.mark.parametrize("pin", versions.PINS, ids=lambda p: p.name)
def test_every_pin_names_its_source_and_dates(pin: versions.Pin) -> None:
    released = datetime.date.fromisoformat(pin.released)
    assert datetime.date(2023, 1, 1) <= released <= CHECKED
    assert pin.read == CHECKED.isoformat() and pin.released in pin.source  # what was read, when; its date
    if pin.end_of_support is not None:
        assert datetime.date.fromisoformat(pin.end_of_support) > released
        # The date is the vendor's, or follows from its policy: the support note says which and where.
        assert pin.end_of_support[:4] in pin.support or pin.estimated
    else:
        assert pin.support.startswith("None published")
    if pin.estimated:
        assert "estimated" in pin.support and "No date is published" in pin.support


# Upstreams that publish a support policy (a date, or a rule and a cadence a date follows from): each such pin
# carries a date, so a render warns and preflight fails past it.
POLICY_DATES = {
    "gpu-operator": ("2027-06-12", True),  # platform-support life cycle; majors 148+ days apart
    "kueue": ("2026-12-06", True),  # RELEASE.md: N-1 and N-2 maintained, a minor every two months
    "keda": ("2027-03-01", True),  # SECURITY.md n-2, ROADMAP.md every three months
    "tensorflow-serving": ("2027-06-01", False),  # Ubuntu 22.04 base
    "tensorflow-serving-gpu": ("2027-06-01", False),
    "tensorflow": ("2027-06-01", False),
    "tensorboard": ("2027-06-01", False),
    "tensorflow-training-gpu": ("2027-07-10", False),  # the DLC's eop
    "aws-cli": ("2029-07-01", False),  # Amazon Linux 2023 base
    "python": ("2029-11-01", False),  # PEP 719
}


def test_every_published_policy_gives_a_date() -> None:
    dated = {p.name: (p.end_of_support, p.estimated) for p in versions.PINS if p.end_of_support}
    assert dated == POLICY_DATES


@pytest.mark.parametrize(
    "name", ["gpu-operator", "kueue", "keda", "kube-prometheus-stack", "aws-cli", "dcgm-exporter", "tensorflow-serving"]
)
def test_a_newer_release_that_could_not_be_read_is_named_with_the_reason(name: str) -> None:
    (pin,) = [p for p in versions.PINS if p.name == name]
    assert "cannot be read" in pin.newer or "inferred" in pin.newer, pin.newer


def test_defaults_in_use_are_supported_on_the_day_they_were_set() -> None:
    assert lifecycle.end_of_support_warnings(versions.PINS, CHECKED) == []


def test_no_default_is_past_its_end_of_support_on_the_real_calendar() -> None:
    """The maintainers' alarm: fails on the first day a default is past its vendor's end of support or patch.

    Fix: move the pin (Renovate opens the pull request; renovate.json), read the new release's facts and dates
    upstream, and update its Pin. This test reads the real date, not the suite's pinned one.

    An estimated end (a vendor's cadence, not a published date) warns in every render and fails preflight, but
    does not fail this test: the release that would replace the pin may not be readable yet, and a guess must not
    turn every check red. The estimated ends are checked on their own below.
    """
    real_today = datetime.datetime.now(datetime.UTC).date()
    published = [pin for pin in versions.PINS if not pin.estimated]
    assert lifecycle.end_of_support_warnings(published, real_today) == []


def test_an_estimated_end_is_still_a_date_a_render_warns_from() -> None:
    """The estimated ends the previous test leaves out: each has a date, and a render warns from that day."""
    estimated = [pin for pin in versions.PINS if pin.estimated]
    assert estimated, "no estimated end of support: drop this test's split above"
    for pin in estimated:
        assert pin.end_of_support is not None
        assert lifecycle.end_of_support_warnings([pin], datetime.date.fromisoformat(pin.end_of_support)) != [], pin.name


@pytest.mark.parametrize(
    ("day", "warns"), [("2027-07-09", False), ("2027-07-10", True), ("2028-01-01", True), ("2026-11-26", False)]
)
def test_end_of_patch_at_its_boundary(day: str, warns: bool) -> None:
    """The vendor's date is the first day without patches (the DLC's `eop`, as EKS's dates are for support)."""
    gpu = versions.TENSORFLOW_GPU.pin
    assert gpu.end_of_support == "2027-07-10"
    on = datetime.date.fromisoformat(day)
    assert lifecycle.past_end_of_support(gpu, on) is warns
    expected = [
        f"{gpu.reference} (tensorflow-training-gpu) is past its end of support since 2027-07-10 (today is {day}): "
        "no security patches; move to a newer gpuplane, or name a supported image yourself (training[].image)"
    ]
    assert lifecycle.end_of_support_warnings([gpu], on) == (expected if warns else [])


def test_today_decides_when_no_day_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a day, `lifecycle.today()` (GPUPLANE_TODAY in tests and what-if runs) is the day judged."""
    monkeypatch.setenv(lifecycle.TODAY_ENV, "2027-07-10")
    assert lifecycle.end_of_support_warnings(versions.PINS) == lifecycle.end_of_support_warnings(
        versions.PINS, datetime.date(2027, 7, 10)
    )
    aged = [w.split(" ")[1] for w in lifecycle.end_of_support_warnings(versions.PINS)]
    assert aged == [
        "(gpu-operator)",
        "(tensorflow-serving)",
        "(tensorflow-serving-gpu)",
        "(tensorflow)",
        "(tensorboard)",
        "(tensorflow-training-gpu)",
        "(kueue)",
        "(keda)",
    ]
    monkeypatch.setenv(lifecycle.TODAY_ENV, "2026-12-05")
    assert lifecycle.end_of_support_warnings(versions.PINS) == []


@pytest.mark.parametrize(("day", "warns"), [("2026-12-05", False), ("2026-12-06", True)])
def test_an_estimated_end_says_so(day: str, warns: bool) -> None:
    on = datetime.date.fromisoformat(day)
    expected = [
        f"{versions.KUEUE.reference} (kueue) is past its estimated end of support, 2026-12-06 (estimated from the "
        f"vendor policy; today is {day}): it may get no more security patches; see the vendor's releases, or move "
        "to a newer gpuplane"
    ]
    assert lifecycle.end_of_support_warnings([versions.KUEUE], on) == (expected if warns else [])


def test_pins_in_use_are_what_a_render_applies() -> None:
    images = {versions.TF_SERVING_IMAGE, versions.TENSORFLOW_GPU_IMAGE, "registry.example.com/serving:9"}
    charts = {
        (versions.GPU_OPERATOR_CHART, versions.GPU_OPERATOR_VERSION),
        (wellknown.KUEUE_CHART, versions.KUEUE_VERSION),
        ("some-chart", "1.0.0"),
    }
    used = lifecycle.pins_in_use(images, charts)
    assert [p.name for p in used] == ["gpu-operator", "tensorflow-serving", "tensorflow-training-gpu", "kueue"]
    # Another version of a pinned chart or image is the user's choice, not our default.
    assert lifecycle.pins_in_use({"tensorflow/serving:2.19.0"}, {("gpu-operator", "v25.10.1")}) == []


def test_a_user_who_names_their_own_image_gets_no_warning() -> None:
    day = datetime.date(2027, 8, 1)  # past the GPU training image's end of patch
    theirs = lifecycle.pins_in_use({"registry.example.com/train:2.21.0"}, set())
    assert lifecycle.end_of_support_warnings(theirs, day) == []
    ours = lifecycle.pins_in_use({versions.TENSORFLOW_GPU_IMAGE}, set())
    assert len(lifecycle.end_of_support_warnings(ours, day)) == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"datasource": "npm"}, "pin 'x': datasource 'npm' is not one of ('helm', 'docker', 'github-tags')"),
        ({"datasource": "helm"}, "pin 'x': a registry is needed by Helm charts and only by them"),
        ({"registry": "https://charts.example.com"}, "pin 'x': a registry is needed by Helm charts and only by them"),
        ({"released": "soon"}, "pin 'x': released 'soon' is not a date like 2026-11-26"),
        ({"end_of_support": "2027-13-01"}, "pin 'x': end_of_support '2027-13-01' is not a date like 2026-11-26"),
        ({"read": ""}, "pin 'x': read '' is not a date like 2026-11-26"),
        (
            {"support": ""},
            "pin 'x': support must state the vendor's policy with its source, and start with 'None published' "
            "exactly when end_of_support is None",
        ),
        (
            {"end_of_support": "2027-01-01"},
            "pin 'x': support must state the vendor's policy with its source, and start with 'None published' "
            "exactly when end_of_support is None",
        ),
        (
            {"estimated": True, "support": "A rule."},
            "pin 'x': support must state the vendor's policy with its source, and start with 'None published' "
            "exactly when end_of_support is None",
        ),
        (
            {"estimated": True, "support": "None published: a test pin."},
            "pin 'x': an estimated end of support needs end_of_support",
        ),
    ],
)
def test_a_malformed_pin_is_refused_naming_the_field(changes: dict[str, Any], message: str) -> None:
    base = {
        "datasource": "docker",
        "name": "x",
        "package": "r/x",
        "version": "1",
        "released": "2026-01-01",
        "read": "2026-11-28",
        "support": "None published: a test pin.",
    }
    with pytest.raises(ValueError) as info:
        versions.Pin(**{**base, **changes})
    assert str(info.value) == message


def test_references() -> None:
    assert versions.PYTHON.reference == "python:3.13.14-slim-trixie" == versions.PYTHON_IMAGE
    assert versions.GPU_OPERATOR.reference == "gpu-operator@v26.7.0"
    assert versions.KUEUE.reference == "kubernetes-sigs/kueue@v0.19.2"
    assert (versions.KUEUE_VERSION, versions.KUEUE_IMAGE_TAG, versions.JOBSET_VERSION) == (
        "0.19.2",
        "v0.19.2",
        "0.12.0",
    )
    with pytest.raises(ValueError, match="pin 'python' is a docker pin, not a Helm chart"):
        _ = versions.PYTHON.helm_repository
    undated = dataclasses.replace(versions.PYTHON, end_of_support=None, support="None published")
    assert lifecycle.past_end_of_support(undated, datetime.date(2099, 1, 1)) is False


def test_a_pin_without_a_release_date_is_refused() -> None:
    with pytest.raises(ValueError, match="pin 'x': released '' is not a date like 2026-11-26"):
        versions.Pin(datasource="docker", name="x", package="r/x", version="1")


def test_only_an_image_a_stack_can_name_is_offered_as_a_way_out() -> None:
    """A chart's version is gpuplane's to choose: its warning offers a newer gpuplane only, never a stack key."""
    assert lifecycle.what_to_do(versions.KUEUE) == "move to a newer gpuplane"
    assert lifecycle.what_to_do(versions.TENSORFLOW_GPU.pin) == (
        "move to a newer gpuplane, or name a supported image yourself (training[].image)"
    )
    named = {pin.name for pin in versions.PINS}
    assert set(lifecycle.OWN_IMAGE_KEY) <= named  # no key for a pin that does not exist
    # Each key is a real field of the stack: a row of the reference generated from its schema.
    config_doc = (Path(__file__).resolve().parents[2] / "docs" / "config-reference.md").read_text()
    for key in set(lifecycle.OWN_IMAGE_KEY.values()):
        assert f"| `{key}` |" in config_doc, key
