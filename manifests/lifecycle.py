"""What the pins mean over time: Kubernetes versions' support, TensorFlow compatibility, aged pins.

Why apart from `versions`: `versions.py` holds the pins and the platform's constants (what was checked
upstream, with its source and date), this module the rules that read them (whether a Kubernetes version is in
standard support on a day, whether an image can serve or train, which pins a stack uses and which have
passed their vendor's end of support). It lives in `manifests`, the lowest layer, because the manifest
builders and the schema both use these rules.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Final

from gpuplane.manifests import versions


def standard_support_end(version: str) -> datetime.date:
    """The first day a version is billed as extended support (EKS bills from the start of that day, UTC)."""
    return datetime.date.fromisoformat(versions.KUBERNETES_VERSIONS[version][1])


def in_standard_support(version: str, on: datetime.date | None = None) -> bool:
    """Whether `version` is still in standard support on `on` (default: `versions.today()`)."""
    return (on or versions.today()) < standard_support_end(version)


def newest_in_standard_support(on: datetime.date | None = None) -> str | None:
    """The newest version EKS offers in standard support on `on` (default: `versions.today()`)."""
    offered = [
        v
        for v, (released, _, _) in versions.KUBERNETES_VERSIONS.items()
        if datetime.date.fromisoformat(released) <= (on or versions.today()) and in_standard_support(v, on)
    ]
    return max(offered, key=lambda v: tuple(int(p) for p in v.split(".")), default=None)


def supported_version_advice(on: datetime.date | None = None) -> str:
    """What to move to on `on`: the newest version in standard support, or, when none of the table is, what to do.

    Every message that refuses or warns about a Kubernetes version ends with this, so none of them can name a
    version that has itself left standard support.
    """
    day = on or versions.today()
    newest = newest_in_standard_support(day)
    if newest is not None:
        return f"use {newest}, the newest version in standard support"
    table = versions.KUBERNETES_VERSIONS
    last = max(table, key=lambda v: tuple(int(p) for p in v.split(".")))
    return (
        f"no version this gpuplane knows ({', '.join(table)}) is in EKS standard support on {day} "
        f"(the newest, {last}, left it on {table[last][1]}): move to a newer gpuplane, whose table "
        "lists the versions EKS offers now (`aws eks describe-cluster-versions` lists them too)"
    )


def tf_minor(version: str) -> tuple[int, int]:
    """`2.20.0` -> (2, 20): TensorFlow's compatibility promise is per minor release."""
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"'{version}' is not a TensorFlow version like 2.20.0")
    return int(parts[0]), int(parts[1])


def _at_least(have: str, need: str) -> bool:
    """`have` is the same major and at least the minor of `need` (CUDA and cuDNN are compatible that way)."""
    h, n = tf_minor(have), tf_minor(need)
    return h[0] == n[0] and h[1] >= n[1]


def image_problems(image: versions.TensorFlowImage, role: str) -> list[str]:
    """Why `image` cannot do `role` ("serving", "training", "training-gpu", "tensorboard"); [] when it can."""
    problems = []
    if role == "serving" and "tensorflow_model_server" not in image.commands:
        problems.append(f"{image.image} has no tensorflow_model_server")
    if role in ("training", "training-gpu") and "python3" not in image.commands:
        problems.append(f"{image.image} has no python3")
    if role == "tensorboard" and "tensorboard" not in image.commands:
        problems.append(f"{image.image} has no tensorboard command")
    if role == "training-gpu" or (role == "serving" and image.gpu):
        built = versions.TENSORFLOW_BUILT_AGAINST.get(".".join(map(str, tf_minor(image.tensorflow))))
        if not image.gpu or image.cudnn is None:
            problems.append(f"{image.image} has no CUDA user space")
        elif built is None:
            problems.append(f"{image.image}: TensorFlow {image.tensorflow} has no known CUDA/cuDNN build facts")
        elif not (_at_least(image.cuda or "", built[0]) and _at_least(image.cudnn, built[1])):
            problems.append(
                f"{image.image} carries CUDA {image.cuda} / cuDNN {image.cudnn}, but TensorFlow "
                f"{image.tensorflow} is built against CUDA {built[0]} / cuDNN {built[1]}: it would find no GPU"
            )
    return problems


def serving_loads(serving_tf: str, training_tf: str) -> bool:
    """A SavedModel exported by TensorFlow `training_tf` is promised to load in a `serving_tf` server."""
    return tf_minor(serving_tf) >= tf_minor(training_tf)


def addon_offered(addon: str, region: str) -> bool:
    """Whether EKS offers `addon` in `region`, by `versions.ADDON_UNAVAILABLE_REGION_PREFIXES`."""
    return not region.startswith(versions.ADDON_UNAVAILABLE_REGION_PREFIXES.get(addon, ()))


# How a release pinned by its git tag shows in a render: the chart that follows the tag, at its version.
_CHART_OF_TAG: Final[dict[str, tuple[str, str]]] = {
    versions.JOBSET.name: (versions.JOBSET_CHART, versions.JOBSET_VERSION),
    versions.KUEUE.name: (versions.KUEUE_CHART, versions.KUEUE_VERSION),
}


def pins_in_use(images: Iterable[str], charts: Iterable[tuple[str, str]]) -> list[versions.Pin]:
    """The pins a stack uses: the images its objects run and the (chart, version) of its Helm releases.

    A workload that names its own image uses no pin, and so gets no warning about ours.
    """
    image_set, chart_set = set(images), set(charts)
    used = []
    for pin in versions.PINS:
        if pin.datasource == "docker":
            hit = pin.reference in image_set
        elif pin.datasource == "helm":
            hit = (pin.package, pin.version) in chart_set
        else:
            hit = _CHART_OF_TAG.get(pin.name) in chart_set
        if hit:
            used.append(pin)
    return used


def end_of_support_warnings(pins: Iterable[versions.Pin], on: datetime.date | None = None) -> list[str]:
    """One line per pin past its vendor's end of support or patch on `on` (default `versions.today()`)."""
    day = on or versions.today()
    return [
        f"{pin.reference} ({pin.name}) is past its end of support since {pin.end_of_support}"
        f"{' (estimated from the vendor policy)' if pin.estimated else ''} (today is {day}): "
        "no security patches; move to a newer gpuplane, or name a supported image or chart version yourself"
        for pin in pins
        if pin.past_end_of_support(day)
    ]
