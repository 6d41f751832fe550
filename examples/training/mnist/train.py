#!/usr/bin/env python3
"""Distributed MNIST training for gpuplane: parameter-server or multi-worker mirrored, from TF_CONFIG.

Why a custom training loop: TensorFlow 2.20 ships Keras 3, whose `model.fit` refuses parameter-server
training ("you need to pass this dataset to ClusterCoordinator.create_per_worker_dataset") and fails under
MultiWorkerMirroredStrategy (keras-team/keras#20585). Keras 3 layers and optimizers do work inside
`strategy.run` (mirrored) and `ClusterCoordinator.schedule` (parameter servers), so this program uses them
there: the same model, loss and optimizer either way.

What it does, from the `TF_CONFIG` that gpuplane's runtime helper builds for each pod:
- a cluster with `ps` tasks: ParameterServerStrategy. Workers and parameter servers start a TF server and
  wait (they never exit; the JobSet ends when the chief succeeds); the chief drives the training.
- a cluster without `ps`: MultiWorkerMirroredStrategy; worker 0 (or the chief) writes checkpoints and logs.
- no `TF_CONFIG`: a single process (handy to try the program on a laptop).

Data: MNIST in its distribution format, the four gzipped IDX files, read from `--data-dir` (default: this
file's own directory, i.e. `/data/mnist` when the data import put the example there). Nothing is
downloaded; `make_data.py` writes a synthetic set in the same format. Output under `--model-dir` (the logs
volume): `checkpoints/` (restored on start, so a rerun resumes) and `train/`, TensorBoard event files.
The chief prints one `FINAL {json}` line with the test accuracy when it is done.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def scalar(tf: Any, name: str, value: float, step: int) -> None:
    """One TensorBoard scalar, written with TensorFlow alone.

    Why not `tf.summary.scalar`: that API lives in the `tensorboard` package, which TensorFlow 2.21 no
    longer depends on; the 2.21 images (`tensorflow/tensorflow:2.21.0`, the 2.21 training DLC) do not carry
    it, and the call raises TBNotInstalledError there. `tf.summary.write` is TensorFlow's own op; with the
    scalars plugin's metadata (what `tf.summary.scalar` itself writes) TensorBoard reads it as a scalar.
    """
    from tensorflow.core.framework import summary_pb2  # noqa: PLC0415 - TensorFlow is imported late, on purpose

    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    tf.summary.write(name, tf.constant(value, dtype=tf.float32), step=step, metadata=metadata)


FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, default=here, help="the IDX files; default: this file's directory")
    parser.add_argument("--model-dir", type=Path, required=True, help="checkpoints and TensorBoard logs")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=64, help="examples per step (per worker with ps)")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    args = parser.parse_args(argv)
    for key in ("epochs", "steps_per_epoch", "batch_size"):
        if getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be at least 1, got {getattr(args, key)}")
    missing = [name for pair in FILES.values() for name in pair if not (args.data_dir / name).is_file()]
    if missing:
        parser.error(
            f"no MNIST data in {args.data_dir}: missing {', '.join(missing)}. Put the four gzipped IDX files "
            "there (the original MNIST files, or `python make_data.py --out DIR` for a synthetic set)"
        )
    return args


def load_split(tf: Any, data_dir: Path, split: str) -> Any:
    """A dataset of (image float32 28x28 in [0, 1], label int64), read with TF ops only.

    TF ops, not NumPy: with parameter servers the chief traces the dataset function and each worker runs
    it, reading the files from its own mount of the volume instead of receiving them inside the graph.
    """
    images_name, labels_name = FILES[split]

    def raw(name: str, header: int) -> Any:
        data = tf.io.decode_compressed(tf.io.read_file(str(data_dir / name)), compression_type="GZIP")
        return tf.io.decode_raw(data, tf.uint8)[header:]

    images = tf.reshape(raw(images_name, 16), (-1, 28, 28))
    labels = tf.cast(raw(labels_name, 8), tf.int64)
    return tf.data.Dataset.from_tensor_slices((tf.cast(images, tf.float32) / 255.0, labels))


def build_model(keras: Any) -> Any:
    return keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10),
        ]
    )


def cluster_kind(tf_config: dict[str, Any]) -> str:
    cluster = tf_config.get("cluster") or {}
    if cluster.get("ps"):
        return "parameterServer"
    if len(cluster.get("worker", [])) + len(cluster.get("chief", [])) > 1:
        return "multiWorkerMirrored"
    return "single"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import keras  # noqa: PLC0415 - after the cheap checks: importing TensorFlow takes seconds
    import tensorflow as tf  # noqa: PLC0415

    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    kind = cluster_kind(tf_config)
    task = tf_config.get("task") or {}
    task_type, task_index = task.get("type", "chief"), int(task.get("index", 0))
    print(f"{task_type}:{task_index} {kind} TensorFlow {tf.__version__} Keras {keras.__version__}", flush=True)

    if kind == "parameterServer":
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        if task_type in ("worker", "ps"):
            # Variables live on the ps, steps run on the workers; both serve until the pod is stopped.
            server = tf.distribute.Server(
                resolver.cluster_spec(), job_name=task_type, task_index=task_index, protocol="grpc", start=True
            )
            server.join()
            return 0
        strategy: Any = tf.distribute.ParameterServerStrategy(resolver)
        is_chief = True
        spec = resolver.cluster_spec()
        print(f"chief:0 connected to {spec.num_tasks('worker')} workers and {spec.num_tasks('ps')} ps", flush=True)
    elif kind == "multiWorkerMirrored":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        # The chief if there is one, else worker 0 (TensorFlow's own convention).
        has_chief = "chief" in tf_config["cluster"]
        is_chief = task_type == "chief" or (task_type == "worker" and task_index == 0 and not has_chief)
    else:
        strategy = tf.distribute.get_strategy()
        is_chief = True

    with strategy.scope():
        model = build_model(keras)
        optimizer = keras.optimizers.Adam(args.learning_rate)
        optimizer.build(model.trainable_variables)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
        # Epochs done, for resuming: not optimizer.iterations, which asynchronous ps updates may undercount.
        epochs_done = tf.Variable(0, dtype=tf.int64, trainable=False, name="epochs_done")

    def dataset_fn(input_context: Any = None) -> Any:
        ds = load_split(tf, args.data_dir, "train")
        if input_context is not None and input_context.num_input_pipelines > 1:
            ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        per_replica = input_context.get_per_replica_batch_size(global_batch) if input_context else global_batch
        seed = 7 + (input_context.input_pipeline_id if input_context else 0)
        return ds.shuffle(4096, seed=seed).repeat().batch(per_replica, drop_remainder=True).prefetch(2)

    def step_fn(images: Any, labels: Any) -> tuple[Any, Any]:
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = tf.nn.compute_average_loss(loss_fn(labels, logits), global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, axis=1), labels), tf.float32))
        return loss, correct

    # Checkpoints: the chief writes the real ones; MultiWorkerMirrored's other workers must save too (the
    # save is collective) but into a scratch directory they delete.
    ckpt_dir = args.model_dir / "checkpoints"
    write_dir = ckpt_dir if is_chief else Path(tempfile.mkdtemp(prefix=f"ckpt-{task_type}-{task_index}-"))
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epochs_done=epochs_done)
    manager = tf.train.CheckpointManager(checkpoint, str(write_dir), max_to_keep=3)
    latest = tf.train.latest_checkpoint(str(ckpt_dir))
    if latest:
        checkpoint.restore(latest)
    first_epoch = int(epochs_done.numpy())
    writer = tf.summary.create_file_writer(str(args.model_dir / "train")) if is_chief else None
    if latest:
        print(f"resumed from {latest} at epoch {first_epoch}", flush=True)

    started = time.monotonic()
    if kind == "parameterServer":
        global_batch = args.batch_size  # one batch per scheduled step, on whichever worker takes it
        coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        per_worker = iter(coordinator.create_per_worker_dataset(dataset_fn))

        def ps_step(iterator: Any) -> Any:
            images, labels = next(iterator)
            return strategy.run(step_fn, args=(images, labels))

        train_step = tf.function(ps_step)

        def run_epoch() -> tuple[float, float]:
            results = [coordinator.schedule(train_step, args=(per_worker,)) for _ in range(args.steps_per_epoch)]
            coordinator.join()
            values = [r.fetch() for r in results]
            return (
                sum(float(loss) for loss, _ in values) / len(values),
                sum(float(c) for _, c in values) / (len(values) * global_batch),
            )

    else:
        global_batch = args.batch_size * max(1, strategy.num_replicas_in_sync)
        iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))

        def mirrored_step(it: Any) -> tuple[Any, Any]:
            loss, correct = strategy.run(step_fn, args=next(it))
            reduce = tf.distribute.ReduceOp.SUM
            return strategy.reduce(reduce, loss, axis=None), strategy.reduce(reduce, correct, axis=None)

        train_step_mirrored = tf.function(mirrored_step)

        def run_epoch() -> tuple[float, float]:
            loss_sum, correct_sum = 0.0, 0.0
            for _ in range(args.steps_per_epoch):
                loss, correct = train_step_mirrored(iterator)
                loss_sum += float(loss)
                correct_sum += float(correct)
            return loss_sum / args.steps_per_epoch, correct_sum / (args.steps_per_epoch * global_batch)

    for epoch in range(first_epoch, args.epochs):
        loss, accuracy = run_epoch()
        epochs_done.assign(epoch + 1)
        manager.save(checkpoint_number=epoch + 1)
        if writer is not None:
            with writer.as_default():
                scalar(tf, "loss", loss, epoch + 1)
                scalar(tf, "accuracy", accuracy, epoch + 1)
            writer.flush()
        print(f"epoch {epoch + 1}/{args.epochs}: loss {loss:.4f} accuracy {accuracy:.3f}", flush=True)
    if not is_chief:
        shutil.rmtree(write_dir, ignore_errors=True)
        return 0

    # Test accuracy, on the chief: with parameter servers it reads the variables from the ps.
    correct = total = 0
    for images, labels in load_split(tf, args.data_dir, "test").batch(512):
        predicted = tf.argmax(model(images, training=False), axis=1)
        correct += int(tf.reduce_sum(tf.cast(tf.equal(predicted, labels), tf.int32)))
        total += int(labels.shape[0])
    test_accuracy = correct / total
    if writer is not None:
        with writer.as_default():
            scalar(tf, "test_accuracy", test_accuracy, args.epochs)
        writer.flush()
    final = {
        "strategy": kind,
        "test_accuracy": round(test_accuracy, 4),
        "epochs": args.epochs,
        "steps_this_run": (args.epochs - first_epoch) * args.steps_per_epoch,
        "seconds": round(time.monotonic() - started, 1),
        "checkpoint": manager.latest_checkpoint,
    }
    print("FINAL " + json.dumps(final), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
