"""What more than one concern of the stack config checks: the profile, log retention, CIDRs, DNS labels."""

from __future__ import annotations

import re
from typing import Final, Literal

Profile = Literal["dev", "prod"]

# CloudWatch Logs accepts only these retention periods (PutRetentionPolicy API reference).
LOG_RETENTION_DAYS: Final = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip


_DURATION_RE: Final = re.compile(r"([0-9]+)(h|m|s)")


def duration_seconds(value: str) -> int:
    """Seconds of a Go duration made of h/m/s parts (`1h30m`); ValueError otherwise."""
    if not re.fullmatch(r"([0-9]+(h|m|s))+", value):
        raise ValueError(f"'{value}' is not a duration like 40m, 1h or 1h30m")
    factor = {"h": 3600, "m": 60, "s": 1}
    return sum(int(n) * factor[unit] for n, unit in _DURATION_RE.findall(value))
