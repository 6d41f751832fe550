"""gpuplane compare: the in-cluster load-test client (one file, run as `python3 client.py CONFIG`).

Why one self-contained file: it travels in a ConfigMap into the pinned `tensorflow/tensorflow` CPU image
and must run there with nothing but the standard library, NumPy and TensorFlow (no install at run time).
TensorFlow is only touched by `TfImagePrep` (resize, encode, decode), behind the `ImagePrep` seam, so the
rest (the load loop, statistics, agreement, CPU accounting) runs and is tested without it.

What it does, per variant, size, format and concurrency ("a cell"):
  1. reads the model's signature (`GET /v1/models/NAME/metadata`): a DT_STRING input takes the encoded
     image as `{"b64": ...}` (format and size then change what the server decodes); any other input takes a
     decoded, resized tensor (format and size then only change the client's work and the pixels);
  2. sends each prepared input once as warm-up (not timed; these answers feed the agreement check);
  3. runs a closed loop of `concurrency` threads for `duration` seconds, each sending the next request as
     soon as its previous one returns, and records every request's latency and error;
  4. measures its own CPU use (getrusage against the wall clock and the cgroup's CPU limit), so that a
     saturated client is reported as such, not mistaken for a slow server.
It prints one line `GPUPLANE-COMPARE-SUMMARY <json>` (read by the CLI from the Job's log) and writes the
raw per-request rows to `<outDir>/<runId>/requests.jsonl` (the `logs` volume in the cluster).
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import resource
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

SUMMARY_MARKER = "GPUPLANE-COMPARE-SUMMARY "
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
# A Python process does its request work on one core at a time (the GIL), so the client is saturated when
# it uses most of one core, or most of its cgroup limit when that is below one core.
SATURATION_SHARE = 0.8
MAX_ERROR_SAMPLES = 5


# --- statistics (pure) ------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between closest ranks (NumPy's default)."""
    if not sorted_values:
        return math.nan
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    rank = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return float(sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low))


@dataclass
class Sample:
    """One timed request: when it started (s since the cell began), how long it took, and how it ended."""

    start_s: float
    latency_s: float
    ok: bool
    error: str = ""


def cell_stats(samples: Sequence[Sample], wall_s: float) -> dict[str, Any]:
    """Latency percentiles (of successful requests, in ms), throughput (successes per second) and errors."""
    good = sorted(s.latency_s * 1000.0 for s in samples if s.ok)
    errors = [s for s in samples if not s.ok]
    total = len(samples)

    def rounded(value: float) -> float | None:
        return None if math.isnan(value) else round(value, 3)

    samples_of_errors: list[str] = []
    for sample in errors:
        if sample.error not in samples_of_errors and len(samples_of_errors) < MAX_ERROR_SAMPLES:
            samples_of_errors.append(sample.error)
    return {
        "requests": total,
        "ok": len(good),
        "errors": len(errors),
        "errorRate": round(len(errors) / total, 6) if total else 0.0,
        "p50Ms": rounded(percentile(good, 50)),
        "p90Ms": rounded(percentile(good, 90)),
        "p99Ms": rounded(percentile(good, 99)),
        "meanMs": rounded(sum(good) / len(good)) if good else None,
        "throughputRps": round(len(good) / wall_s, 3) if wall_s > 0 else 0.0,
        "wallS": round(wall_s, 3),
        "errorSamples": samples_of_errors,
    }


# --- agreement (pure) -------------------------------------------------------------------------------


def _flatten(value: Any) -> list[float]:
    if isinstance(value, list):
        out: list[float] = []
        for item in value:
            out.extend(_flatten(item))
        return out
    return [float(value)]


def is_classifier_output(prediction: Any) -> bool:
    """A flat vector of more than one number per instance: class scores (logits or probabilities)."""
    return (
        isinstance(prediction, list)
        and len(prediction) > 1
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in prediction)
    )


def top1(prediction: list[float]) -> int:
    """Index of the highest score (the first one on ties)."""
    return max(range(len(prediction)), key=lambda i: (prediction[i], -i))


def agreement(reference: Sequence[Any], other: Sequence[Any]) -> dict[str, Any]:
    """How far `other`'s answers are from `reference`'s, image by image.

    Classifier outputs: the share of images whose top-1 class matches. Anything else: the largest absolute
    difference of any output element (shapes must match; a mismatch counts as no agreement).
    """
    pairs = [(a, b) for a, b in zip(reference, other, strict=False) if a is not None and b is not None]
    if not pairs:
        return {"kind": "none", "images": 0, "value": None}
    if all(is_classifier_output(a) and is_classifier_output(b) for a, b in pairs):
        same = sum(top1(a) == top1(b) for a, b in pairs)
        return {"kind": "top1", "images": len(pairs), "value": round(same / len(pairs), 6)}
    worst = 0.0
    for a, b in pairs:
        fa, fb = _flatten(a), _flatten(b)
        if len(fa) != len(fb):
            return {"kind": "maxAbsDiff", "images": len(pairs), "value": None, "note": "output shapes differ"}
        worst = max([worst, *(abs(x - y) for x, y in zip(fa, fb, strict=True))])
    return {"kind": "maxAbsDiff", "images": len(pairs), "value": worst}


def agreement_table(outputs: dict[tuple[str, int, str], list[Any]], variants: Sequence[str]) -> dict[str, Any]:
    """Agreement between variants and between sizes, from the warm-up answers keyed by (variant, size, format).

    Between variants: against the first variant, same size and format. Between sizes: against the largest
    size, same variant and format ("smaller images lose little accuracy" is then a number).
    """
    between_variants = []
    between_sizes = []
    keys = sorted(outputs)
    sizes = sorted({k[1] for k in keys})
    formats = sorted({k[2] for k in keys})
    reference_variant = variants[0]
    for size in sizes:
        for fmt in formats:
            ref = outputs.get((reference_variant, size, fmt))
            for variant in variants[1:]:
                got = outputs.get((variant, size, fmt))
                if ref is not None and got is not None:
                    between_variants.append(
                        {"reference": reference_variant, "variant": variant, "size": size, "format": fmt}
                        | agreement(ref, got)
                    )
    largest = sizes[-1] if sizes else 0
    for variant in variants:
        for fmt in formats:
            ref = outputs.get((variant, largest, fmt))
            for size in sizes[:-1]:
                got = outputs.get((variant, size, fmt))
                if ref is not None and got is not None:
                    between_sizes.append(
                        {"variant": variant, "format": fmt, "referenceSize": largest, "size": size}
                        | agreement(ref, got)
                    )
    return {"betweenVariants": between_variants, "betweenSizes": between_sizes}


# --- CPU accounting (pure but for the readers) --------------------------------------------------------


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs this container may use from its cgroup (v2 `cpu.max`, v1 CFS quota); None when unlimited."""
    try:
        quota, period = Path(root, "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int(Path(root, "cpu", "cpu.cfs_quota_us").read_text())
        period_us = int(Path(root, "cpu", "cpu.cfs_period_us").read_text())
        return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None


def cpu_seconds() -> float:
    """User + system CPU seconds this process has used so far (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def client_load(cpu_used_s: float, wall_s: float, limit: float | None) -> dict[str, Any]:
    """The client's CPU use in cores over a cell, and whether it was the bottleneck."""
    cores = cpu_used_s / wall_s if wall_s > 0 else 0.0
    ceiling = min(limit, 1.0) if limit else 1.0
    return {
        "cpuCores": round(cores, 3),
        "cpuLimit": limit,
        "saturated": cores >= SATURATION_SHARE * ceiling,
    }


# --- the image seam ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputSpec:
    """The model's first input as its signature describes it."""

    name: str
    dtype: str
    shape: list[int]
    output: str | None

    @property
    def encoded(self) -> bool:
        """True when the model decodes the image itself (a DT_STRING input takes `{"b64": ...}`)."""
        return self.dtype == "DT_STRING"


class ImagePrep(Protocol):
    """Where images become request inputs; TensorFlow does it in the container, a fake in unit tests."""

    def load(self, paths: Sequence[Path]) -> list[Any]:
        """Decode files into HxWx3 uint8 arrays."""

    def synthetic(self, count: int, size: int) -> list[Any]:
        """Generate `count` deterministic RGB images of `size` x `size` pixels."""

    def encode(self, image: Any, box: int, fmt: str) -> bytes:
        """Resize to fit a `box` x `box` square (aspect kept) and encode as `fmt` (jpeg or png)."""

    def tensor(self, encoded: bytes, spec: InputSpec, box: int) -> Any:
        """Decode `encoded` and shape it for a tensor input (resized to the model's fixed size, if any)."""


class TfImagePrep:
    """`ImagePrep` with `tf.image` and `tf.io`: what the `tensorflow/tensorflow` image already has."""

    def __init__(self) -> None:
        import numpy as np  # noqa: PLC0415 - only this seam needs NumPy and TensorFlow
        import tensorflow as tf  # noqa: PLC0415

        self.np = np
        self.tf = tf

    def load(self, paths: Sequence[Path]) -> list[Any]:
        """Decode files into HxWx3 uint8 arrays."""
        return [self.tf.io.decode_image(p.read_bytes(), channels=3, expand_animations=False).numpy() for p in paths]

    def synthetic(self, count: int, size: int) -> list[Any]:
        """Generate `count` deterministic RGB images of `size` x `size` pixels."""
        # Smooth gradients plus a few solid shapes: compressible like a photo, unlike noise, and made
        # here, so no image of unknown licence has to ship.
        np = self.np
        rng = np.random.default_rng(12)
        y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
        images = []
        for _ in range(count):
            a, b, c = rng.uniform(0.2, 1.0, 3)
            img = np.stack([a * x, b * y, c * (1 - x) * y], axis=-1) * 255.0
            for _ in range(4):
                x0, y0 = rng.integers(0, size // 2, 2)
                w, h = rng.integers(size // 8, size // 2, 2)
                img[y0 : y0 + h, x0 : x0 + w] = rng.uniform(0, 255, 3)
            images.append(img.clip(0, 255).astype(np.uint8))
        return images

    def encode(self, image: Any, box: int, fmt: str) -> bytes:
        """Resize to fit a `box` x `box` square (aspect kept, antialiased) and encode as JPEG (q90) or PNG."""
        tf = self.tf
        resized = tf.image.resize(image, (box, box), preserve_aspect_ratio=True, antialias=True)
        pixels = tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)
        data = tf.io.encode_jpeg(pixels, quality=90) if fmt == "jpeg" else tf.io.encode_png(pixels)
        return bytes(data.numpy())

    def tensor(self, encoded: bytes, spec: InputSpec, box: int) -> Any:
        """Decode, resize to the model's fixed height and width if it has them, scale floats to 0-1."""
        tf = self.tf
        pixels = tf.io.decode_image(encoded, channels=3, expand_animations=False)
        height, width = [*spec.shape[1:3], -1, -1][:2] if len(spec.shape) == 4 else (-1, -1)
        if height > 0 and width > 0:
            pixels = tf.image.resize(pixels, (height, width), antialias=True)
        if spec.dtype in ("DT_FLOAT", "DT_HALF", "DT_DOUBLE"):
            return (tf.cast(pixels, tf.float32) / 255.0).numpy().round(5).tolist()
        return tf.cast(pixels, tf.int32).numpy().tolist()


# --- talking to TF Serving's REST API ---------------------------------------------------------------


class Endpoint:
    """One variant's REST base URL, e.g. http://serving-cpu.ml.svc:8501."""

    def __init__(self, name: str, url: str, timeout_s: float) -> None:
        self.name = name
        parsed = urllib.parse.urlsplit(url)
        self.host = parsed.hostname or "localhost"
        self.port = parsed.port or 80
        self.timeout_s = timeout_s

    def connection(self) -> http.client.HTTPConnection:
        """A new keep-alive connection (one per worker thread: http.client is not thread-safe)."""
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)

    def get_json(self, path: str) -> tuple[int, Any]:
        """GET `path`; the status and the decoded JSON body."""
        conn = self.connection()
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            return response.status, json.loads(body or b"null")
        finally:
            conn.close()


def wait_available(endpoint: Endpoint, model: str, timeout_s: float) -> None:
    """Poll `GET /v1/models/NAME` until a version reports AVAILABLE (TF Serving's readiness answer)."""
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        try:
            status, body = endpoint.get_json(f"/v1/models/{model}")
            states = [v.get("state") for v in (body or {}).get("model_version_status", [])]
            if status == 200 and "AVAILABLE" in states:
                return
            last = f"HTTP {status}, states {states}"
        except (OSError, ValueError, http.client.HTTPException) as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(1.0)
    raise RuntimeError(f"variant {endpoint.name}: model '{model}' not AVAILABLE after {timeout_s:.0f} s ({last})")


def input_spec(metadata: Any, signature: str) -> InputSpec:
    """The first input (and first output) of `signature` from TF Serving's metadata answer."""
    try:
        sig = metadata["metadata"]["signature_def"]["signature_def"][signature]
    except (KeyError, TypeError) as exc:
        raise RuntimeError(f"model metadata has no signature '{signature}'") from exc
    inputs = sig.get("inputs", {})
    if not inputs:
        raise RuntimeError(f"signature '{signature}' has no inputs")
    name = sorted(inputs)[0]
    tensor = inputs[name]
    dims = [int(d.get("size", -1)) for d in tensor.get("tensor_shape", {}).get("dim", [])]
    outputs = sorted(sig.get("outputs", {}))
    return InputSpec(name=name, dtype=tensor.get("dtype", ""), shape=dims, output=outputs[0] if outputs else None)


def request_body(instance: Any, spec: InputSpec, signature: str) -> bytes:
    """A REST predict body for one instance, in TF Serving's row ("instances") format."""
    return json.dumps({"signature_name": signature, "instances": [{spec.name: instance}]}).encode()


def prediction_of(body: Any, spec: InputSpec) -> Any:
    """The first instance's prediction, narrowed to the first output when the model returns several."""
    prediction = body["predictions"][0]
    if isinstance(prediction, dict):
        key = spec.output if spec.output in prediction else sorted(prediction)[0]
        return prediction[key]
    return prediction


# --- the load loop ----------------------------------------------------------------------------------


def predict(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[int, bytes]:
    """POST one predict request on an open connection; the status and the raw body."""
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.read()


def closed_loop(
    endpoint: Endpoint, path: str, bodies: Sequence[bytes], *, concurrency: int, duration_s: float, max_requests: int
) -> tuple[list[Sample], float]:
    """`concurrency` workers, each sending its next request when the last one returns, for `duration_s`."""
    samples: list[Sample] = []
    lock = threading.Lock()
    counter = [0]
    start = time.monotonic()
    stop_at = start + duration_s

    def worker(offset: int) -> None:
        conn = endpoint.connection()
        index = offset
        try:
            while time.monotonic() < stop_at:
                with lock:
                    if max_requests and counter[0] >= max_requests:
                        return
                    counter[0] += 1
                body = bodies[index % len(bodies)]
                index += 1
                began = time.monotonic()
                try:
                    status, payload = predict(conn, path, body)
                    ok = status == 200
                    error = "" if ok else f"HTTP {status}: {payload[:200].decode(errors='replace')}"
                except (OSError, http.client.HTTPException) as exc:
                    ok, error = False, f"{type(exc).__name__}: {exc}"
                    conn.close()
                    conn = endpoint.connection()
                sample = Sample(began - start, time.monotonic() - began, ok, error)
                with lock:
                    samples.append(sample)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples, time.monotonic() - start


@dataclass
class Run:
    """Everything one run needs, from the ConfigMap's config.json."""

    run_id: str
    model: str
    variants: dict[str, str]
    sizes: list[int]
    formats: list[str]
    concurrency: list[int]
    duration_s: float
    out_dir: Path
    inputs_dir: Path | None = None
    synthetic_images: int = 8
    max_requests: int = 0
    signature: str = "serving_default"
    ready_timeout_s: float = 600.0
    request_timeout_s: float = 60.0
    cgroup_root: str = "/sys/fs/cgroup"
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        """Read the camelCase config the CLI writes."""
        return cls(
            run_id=data["runId"],
            model=data["model"],
            variants=dict(data["variants"]),
            sizes=[int(s) for s in data["sizes"]],
            formats=list(data["formats"]),
            concurrency=[int(c) for c in data["concurrency"]],
            duration_s=float(data["durationS"]),
            out_dir=Path(data["outDir"]),
            inputs_dir=Path(data["inputsDir"]) if data.get("inputsDir") else None,
            synthetic_images=int(data.get("syntheticImages", 8)),
            max_requests=int(data.get("maxRequests", 0)),
            signature=data.get("signature", "serving_default"),
            ready_timeout_s=float(data.get("readyTimeoutS", 600)),
            request_timeout_s=float(data.get("requestTimeoutS", 60)),
            cgroup_root=data.get("cgroupRoot", "/sys/fs/cgroup"),
        )


def image_files(directory: Path) -> list[Path]:
    """The JPEG and PNG files directly in `directory`, sorted (the request order is the same everywhere)."""
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def execute(run: Run, prep: ImagePrep, log: Callable[[str], None]) -> dict[str, Any]:
    """Run every cell against every variant; return the summary and write the raw rows."""
    endpoints = {name: Endpoint(name, url, run.request_timeout_s) for name, url in run.variants.items()}
    specs: dict[str, InputSpec] = {}
    for name, endpoint in endpoints.items():
        wait_available(endpoint, run.model, run.ready_timeout_s)
        status, metadata = endpoint.get_json(f"/v1/models/{run.model}/metadata")
        if status != 200:
            raise RuntimeError(f"variant {name}: GET /v1/models/{run.model}/metadata answered HTTP {status}")
        specs[name] = input_spec(metadata, run.signature)
        log(f"variant {name}: input {specs[name].name} {specs[name].dtype} {specs[name].shape}")
    first = next(iter(specs.values()))
    if any((s.name, s.dtype) != (first.name, first.dtype) for s in specs.values()):
        raise RuntimeError(f"variants serve different signatures: { {n: (s.name, s.dtype) for n, s in specs.items()} }")

    if run.inputs_dir is not None:
        files = image_files(run.inputs_dir)
        if not files:
            raise RuntimeError(f"no .jpg/.jpeg/.png files in {run.inputs_dir}")
        images = prep.load(files)
        source = f"{len(files)} images from {run.inputs_dir}"
    else:
        images = prep.synthetic(run.synthetic_images, max(run.sizes))
        source = f"{run.synthetic_images} synthetic images"
    log(f"inputs: {source}")

    bodies: dict[tuple[int, str], list[bytes]] = {}
    for size in run.sizes:
        for fmt in run.formats:
            encoded = [prep.encode(img, size, fmt) for img in images]
            if first.encoded:
                instances: list[Any] = [{"b64": base64.b64encode(e).decode()} for e in encoded]
            else:
                instances = [prep.tensor(e, first, size) for e in encoded]
            bodies[(size, fmt)] = [request_body(i, first, run.signature) for i in instances]

    path = f"/v1/models/{run.model}:predict"
    raw_dir = run.out_dir / run.run_id
    raw_dir.mkdir(parents=True, exist_ok=True)
    limit = cgroup_cpu_limit(run.cgroup_root)
    outputs: dict[tuple[str, int, str], list[Any]] = {}
    cells = []
    total = len(endpoints) * len(bodies) * len(run.concurrency)
    done = 0
    with (raw_dir / "requests.jsonl").open("w") as raw:
        for name, endpoint in endpoints.items():
            for (size, fmt), cell_bodies in bodies.items():
                outputs[(name, size, fmt)] = warm_up(endpoint, path, cell_bodies, specs[name])
                for concurrency in run.concurrency:
                    cpu_before = cpu_seconds()
                    samples, wall = closed_loop(
                        endpoint,
                        path,
                        cell_bodies,
                        concurrency=concurrency,
                        duration_s=run.duration_s,
                        max_requests=run.max_requests,
                    )
                    load = client_load(cpu_seconds() - cpu_before, wall, limit)
                    key = {"variant": name, "size": size, "format": fmt, "concurrency": concurrency}
                    cells.append(key | cell_stats(samples, wall) | {"client": load})
                    for s in samples:
                        raw.write(
                            json.dumps(
                                key
                                | {"startS": round(s.start_s, 6), "latencyS": round(s.latency_s, 6)}
                                | {"ok": s.ok, "error": s.error}
                            )
                            + "\n"
                        )
                    done += 1
                    log(f"cell {done}/{total}: {name} {size}px {fmt} x{concurrency}: {len(samples)} requests")
    return {
        "runId": run.run_id,
        "model": run.model,
        "variants": list(endpoints),
        "singleVariant": len(endpoints) == 1,
        "input": {"name": first.name, "dtype": first.dtype, "shape": first.shape, "encoded": first.encoded},
        "mode": "encoded" if first.encoded else "tensor",
        "inputs": source,
        "images": len(images),
        "sizes": run.sizes,
        "formats": run.formats,
        "concurrency": run.concurrency,
        "durationS": run.duration_s,
        "clientCpuLimit": limit,
        "cells": cells,
        "agreement": agreement_table(outputs, list(endpoints)),
        "raw": str(raw_dir / "requests.jsonl"),
    }


def warm_up(endpoint: Endpoint, path: str, bodies: Sequence[bytes], spec: InputSpec) -> list[Any]:
    """Send every input once (untimed): loads kernels and caches; the answers feed the agreement check."""
    conn = endpoint.connection()
    answers: list[Any] = []
    try:
        for body in bodies:
            try:
                status, payload = predict(conn, path, body)
                answers.append(prediction_of(json.loads(payload), spec) if status == 200 else None)
            except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError):
                answers.append(None)
                conn.close()
                conn = endpoint.connection()
    finally:
        conn.close()
    return answers


def main(argv: Sequence[str]) -> int:
    """Run the config in argv[1]; exit 1 (with an error summary line) when the run cannot go on."""
    if len(argv) != 2:
        print("usage: client.py CONFIG.json", file=sys.stderr)
        return 2
    run = Run.from_json(json.loads(Path(argv[1]).read_text()))

    def log(message: str) -> None:
        print(f"[compare] {message}", file=sys.stderr, flush=True)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        summary = execute(run, TfImagePrep(), log)
    except RuntimeError as exc:
        print(SUMMARY_MARKER + json.dumps({"runId": run.run_id, "error": str(exc)}), flush=True)
        return 1
    print(SUMMARY_MARKER + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
