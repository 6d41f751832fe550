"""Kubernetes' name rules, stated once in facts/name_limits.py (k8s.io/apimachinery pkg/util/validation)."""

from __future__ import annotations

import pytest

from gpuplane.components.facts.name_limits import (
    DNS1035_LABEL_RE,
    DNS1123_LABEL_RE,
    DNS1123_SUBDOMAIN_RE,
    LABEL_VALUE_RE,
    QUALIFIED_NAME_RE,
)


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (DNS1123_LABEL_RE, ["a", "0ab", "a-b", "a" * 63], ["", "A", "-a", "a-", "a.b", "a" * 64]),
        (DNS1035_LABEL_RE, ["a", "a-0", "a" * 63], ["0a", "", "a_b", "a" * 64]),
        (DNS1123_SUBDOMAIN_RE, ["a.b-c", "a" * 253], ["", "A.b", "a_b", "a" * 254, ".a"]),
        (
            QUALIFIED_NAME_RE,
            ["nvidia.com/gpu", "gpu", "Gpu_1.x", "example.com/" + "a" * 63],
            ["", "Nvidia.com/gpu", "/gpu", "a/b/c", "example.com/" + "a" * 64, "-gpu"],
        ),
        (LABEL_VALUE_RE, ["", "true", "A-1_b.c", "a" * 63], ["-a", "a-", "a b", "a" * 64]),
    ],
)
def test_each_rule_admits_what_kubernetes_admits(pattern, good, bad):
    assert [v for v in good if not pattern.fullmatch(v)] == []
    assert [v for v in bad if pattern.fullmatch(v)] == []
