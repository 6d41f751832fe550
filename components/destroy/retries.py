"""The retries every AWS client of gpuplane makes: the teardown hooks' and the CLI's (`gpuplane.infra.aws`).

Why a module of its own: `gpuplane token` (run by kubectl before every call it makes) and the other AWS commands
need this policy and nothing else of `teardown`, which imports Pulumi for its hooks (0.3 s of CPU at each start).
"""

from __future__ import annotations

from typing import Any, Final

# Standard mode backs off exponentially on throttling and transient errors, bounded in attempts: the first try
# and 8 retries (botocore's `total_max_attempts`).
RETRY_TOTAL_ATTEMPTS: Final = 9


def retry_config() -> Any:
    """A botocore `Config` with the retries every client of gpuplane makes, new for each caller.

    New each time: botocore rewrites the `retries` dict it is given when it makes a client, so a shared one
    would not keep saying what it said. Made here, not at import: `botocore.config` loads botocore's HTTP stack
    (urllib3, http.client: half a second of CPU), which a render, importing the teardown module for its hook
    names, never uses.
    """
    from botocore.config import Config  # noqa: PLC0415

    return Config(
        retries={"total_max_attempts": RETRY_TOTAL_ATTEMPTS, "mode": "standard"}, connect_timeout=10, read_timeout=60
    )
