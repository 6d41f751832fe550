"""A stand-in for TF Serving's REST API over a real SavedModel (run with a Python that has TensorFlow).

Usage:
    standin.py MODEL_DIR KIND NAME DELAY_S:FAIL_EVERY:PORT_FILE...
        write a small SavedModel (KIND: encoded | tensor) to MODEL_DIR, load it back, and serve it as model
        NAME, once per DELAY_S:FAIL_EVERY:PORT_FILE, each on a port of its own of 127.0.0.1 (written to
        PORT_FILE): every request sleeps DELAY_S, and every FAIL_EVERY-th predict answers HTTP 500 (0 = never).

One process builds and serves every variant: starting TensorFlow is most of a stand-in's cost, and each
variant still has its own server, counter and delay, as two TF Serving deployments would.

The answers follow TF Serving's shapes: `GET /v1/models/NAME` (model_version_status with state AVAILABLE),
`GET /v1/models/NAME/metadata` (signature_def with dtype and tensor_shape, sizes as strings), and
`POST /v1/models/NAME:predict` with the row format (`instances`, `{"b64": ...}` for DT_STRING inputs)
answering `{"predictions": [...]}`.
"""

# mypy: disable-error-code="misc, untyped-decorator"
from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import types_pb2

CLASSES = 6
SIDE = 32


def _weights() -> tf.Tensor:
    # Fixed, deterministic weights: class scores from the mean colour of each image quadrant.
    rng = np.random.default_rng(7)
    return tf.constant(rng.normal(size=(12, CLASSES)).astype(np.float32))


def _features(pixels: tf.Tensor) -> tf.Tensor:
    """Mean RGB of the four quadrants of a batch of SIDE x SIDE float images in 0-1."""
    half = SIDE // 2
    quads = [pixels[:, :half, :half], pixels[:, :half, half:], pixels[:, half:, :half], pixels[:, half:, half:]]
    return tf.concat([tf.reduce_mean(q, axis=[1, 2]) for q in quads], axis=1)


class EncodedClassifier(tf.Module):
    """Takes encoded images (DT_STRING), like the seed's Inception export."""

    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(_weights())

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="image_bytes")])
    def serve(self, image_bytes: tf.Tensor) -> dict[str, tf.Tensor]:
        def one(data: tf.Tensor) -> tf.Tensor:
            img = tf.io.decode_image(data, channels=3, expand_animations=False)
            img.set_shape([None, None, 3])
            return tf.image.resize(tf.cast(img, tf.float32) / 255.0, (SIDE, SIDE), antialias=True)

        pixels = tf.map_fn(one, image_bytes, fn_output_signature=tf.TensorSpec([SIDE, SIDE, 3], tf.float32))
        return {"scores": tf.nn.softmax(tf.matmul(_features(pixels) * 8.0, self.w))}


class TensorClassifier(tf.Module):
    """Takes a decoded float tensor of fixed size."""

    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(_weights())

    @tf.function(input_signature=[tf.TensorSpec([None, SIDE, SIDE, 3], tf.float32, name="pixels")])
    def serve(self, pixels: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"scores": tf.nn.softmax(tf.matmul(_features(pixels) * 8.0, self.w))}


def build(model_dir: str, kind: str) -> None:
    module = EncodedClassifier() if kind == "encoded" else TensorClassifier()
    tf.saved_model.save(module, model_dir, signatures={"serving_default": module.serve})


def _metadata(name: str, signature: Any) -> dict[str, Any]:
    def tensor_info(spec: tf.TensorSpec) -> dict[str, Any]:
        dims = [{"size": str(-1 if d is None else d), "name": ""} for d in spec.shape.as_list()]
        return {
            "dtype": types_pb2.DataType.Name(spec.dtype.as_datatype_enum),
            "tensor_shape": {"dim": dims, "unknown_rank": False},
            "name": spec.name,
        }

    inputs = {k: tensor_info(v) for k, v in signature.structured_input_signature[1].items()}
    outputs = {k: tensor_info(v) for k, v in signature.structured_outputs.items()}
    return {
        "model_spec": {"name": name, "signature_name": "", "version": "1"},
        "metadata": {
            "signature_def": {
                "signature_def": {
                    "serving_default": {
                        "inputs": inputs,
                        "outputs": outputs,
                        "method_name": "tensorflow/serving/predict",
                    }
                }
            }
        },
    }


def serve(signature: Any, name: str, delay_s: float, fail_every: int, port_file: str) -> ThreadingHTTPServer:
    """A server of its own for one variant, on a free port written to `port_file`, serving in a thread."""
    metadata = _metadata(name, signature)
    ((input_name, input_spec),) = signature.structured_input_signature[1].items()
    lock = threading.Lock()
    counter = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == f"/v1/models/{name}":
                self._send(200, {"model_version_status": [{"version": "1", "state": "AVAILABLE"}]})
            elif self.path == f"/v1/models/{name}/metadata":
                self._send(200, metadata)
            else:
                self._send(404, {"error": f"Could not find any versions of model {self.path}"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            if self.path != f"/v1/models/{name}:predict":
                self._send(404, {"error": "no such model"})
                return
            time.sleep(delay_s)
            with lock:
                counter[0] += 1
                fail = fail_every > 0 and counter[0] % fail_every == 0
            if fail:
                self._send(500, {"error": "injected failure"})
                return
            rows = [row[input_name] if isinstance(row, dict) else row for row in body["instances"]]
            if input_spec.dtype == tf.string:
                tensor = tf.constant([base64.b64decode(r["b64"]) for r in rows])
            else:
                tensor = tf.constant(rows, dtype=input_spec.dtype)
            result = signature(**{input_name: tensor})
            scores = result["scores"].numpy().tolist()
            self._send(200, {"predictions": scores})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(port_file + ".tmp", "w") as fh:
        fh.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)  # the test reads the file once it exists: never half-written
    return server


def main(model_dir: str, kind: str, name: str, *variants: str) -> None:
    build(model_dir, kind)
    signature = tf.saved_model.load(model_dir).signatures["serving_default"]
    for variant in variants:
        delay_s, fail_every, port_file = variant.split(":", 2)
        serve(signature, name, float(delay_s), int(fail_every), port_file)
    threading.Event().wait()  # until the test kills the process


if __name__ == "__main__":
    main(*sys.argv[1:])
