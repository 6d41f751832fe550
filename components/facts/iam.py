"""What IAM's policy language reads specially inside a resource ARN or a condition value.

Why a fact of its own: the schema refuses user text holding these characters (an `s3://` import source) and
the policy builders refuse them too, so both must agree on the list. The IAM user guide ("IAM JSON policy
elements: Resource" and "Condition operators") says `*` and `?` are wildcards in any ARN segment and in
`ArnLike`/`StringLike` values, and ("IAM policy elements: Variables and tags") that `${...}` is a policy
variable, replaced per request; `${*}`, `${?}` and `${$}` are its only escapes, and they work only where
variables are read, which is why gpuplane refuses the characters instead of escaping them.
"""

from __future__ import annotations

from typing import Final

SPECIAL: Final = ("*", "?", "${")


def special_in(text: str) -> list[str]:
    """The IAM special characters (`*`, `?`, `${`) that `text` holds, in that order; [] when none."""
    return [c for c in SPECIAL if c in text]
