"""What a run counts as its own: only what the API created for it; 409s, unanswered creates, creates after clean-up."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.infra.verify import checks_training as ct
from gpuplane.infra.verify.model import Cancelled, CheckFailed, Objects
from tests.verify.conftest import RUN, objects_for
from tests.verify.fakes import FakeCluster, healthy_nodes

OTHER = "20261126-100000-fedcba"


class Answer(Exception):
    """A client exception: `status` is the HTTP status the API answered (0: none, as a timeout)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"({status})")
        self.status = status


class Refusing(FakeCluster):
    """A cluster that answers the create of the named objects with an error."""

    def __init__(self, refuse: dict[str, int]) -> None:
        super().__init__([])
        self.refuse = refuse

    def create(self, obj: dict[str, Any]) -> None:
        status = self.refuse.get(obj["metadata"]["name"])
        if status is not None:
            raise Answer(status)
        super().create(obj)


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": {}}


def test_a_409_is_someone_elses_object_and_is_never_deleted(dev):
    cluster = Refusing({"theirs": 409})
    objects = objects_for(cluster, dev)
    with pytest.raises(CheckFailed) as caught:
        objects.create(_pod("theirs", "ml"))
    outcome = caught.value.outcome
    assert outcome.evidence == (
        "Pod ml/theirs exists already (the API server answered 409 Conflict); it is not this run's, so it was left "
        "alone"
    )
    assert "kubectl -n ml delete pod theirs" in outcome.fix
    assert objects.clean_up() == []
    assert cluster.deleted == []


def test_a_create_the_api_refused_is_not_the_runs(dev):
    cluster = Refusing({"denied": 403})
    objects = objects_for(cluster, dev)
    with pytest.raises(Answer):
        objects.create(_pod("denied", "ml"))
    assert objects.clean_up() == [] and cluster.deleted == []


def test_an_unanswered_create_may_exist_and_is_listed_with_its_command(dev):
    cluster = Refusing({"maybe": 0})
    objects = objects_for(cluster, dev)
    with pytest.raises(Answer):
        objects.create(_pod("maybe", "ml"))
    assert objects.clean_up() == ["Pod ml/maybe: its create was not answered (Answer); it may exist"]
    assert objects.remove_commands("/k") == ["kubectl --kubeconfig /k -n ml delete pod maybe"]


def test_an_unanswered_create_in_the_runs_namespace_goes_with_it(dev):
    namespace = f"gpuplane-verify-{RUN}"
    cluster = Refusing({f"gv-x-{RUN}": 0})
    objects = objects_for(cluster, dev)
    with pytest.raises(Answer):
        objects.create(_pod(f"gv-x-{RUN}", namespace))
    assert objects.clean_up() == []
    assert cluster.deleted[-1] == ("Namespace", None, namespace)


def test_no_create_once_clean_up_has_begun(dev):
    cluster = FakeCluster([])
    objects = objects_for(cluster, dev)
    objects.clean_up()
    with pytest.raises(Cancelled):
        objects.create(_pod("late", "ml"))
    assert cluster.created == []


def test_a_create_answered_after_clean_up_began_is_removed_by_it(dev):
    objects: Objects

    class Slow(FakeCluster):
        def create(self, obj: dict[str, Any]) -> None:
            if obj["metadata"]["name"] == "slow":
                import threading  # noqa: PLC0415

                cleaner = threading.Thread(target=objects.clean_up, args=(float("inf"),))
                cleaner.start()  # clean-up begins while this create waits for its answer
                while not objects.closed:
                    pass
                self.cleaner = cleaner
            super().create(obj)

    cluster = Slow([])
    objects = objects_for(cluster, dev)
    with pytest.raises(Cancelled):
        objects.create(_pod("slow", "ml"))
    cluster.cleaner.join(5)
    assert ("Pod", "ml", "slow") in cluster.deleted
    assert objects.left_behind() == []


def test_two_runs_on_one_cluster_each_remove_only_their_own(dev):
    cluster = FakeCluster(healthy_nodes(dev))
    ours, theirs = objects_for(cluster, dev, RUN), objects_for(cluster, dev, OTHER)
    run = dev.training_runs[0]
    ours.create(ct.run_object(run, RUN))
    theirs.create(ct.run_object(run, OTHER))
    assert ours.clean_up() == []
    deleted = {name for _kind, _ns, name in cluster.deleted}
    assert deleted == {"mnist-verify-abcdef"}
    assert ("ml", "mnist-verify-fedcba") in cluster.jobsets
