"""Backoff for the cloud's known transient dependency failures during teardown.

Deleting in dependency order is not enough on either cloud: AWS keeps a security group "in use"
while an ENI of a just-terminated instance (EFA ones take minutes) still references it, and
Azure refuses a subnet or NSG while a NIC of a deleted scale set is still being released. Both
clear on their own; a second destroy then finishes the job.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

TRANSIENT = {
    # AWS: "api error DependencyViolation: resource sg-... has a dependent object"
    "DependencyViolation": re.compile(r"\bDependencyViolation\b"),
    # Azure: a NIC or endpoint still holds the subnet / NSG
    "InUseSubnetCannotBeDeleted": re.compile(r"\bInUseSubnetCannotBeDeleted\b"),
    "InUseNetworkSecurityGroupCannotBeDeleted": re.compile(
        r"\bInUseNetworkSecurityGroupCannotBeDeleted\b"
    ),
    # Azure: "Code=\"RetryableError\"": the platform itself says to try again
    "RetryableError": re.compile(r"\bRetryableError\b"),
}

DEFAULT_DELAYS = (20.0, 40.0, 80.0, 160.0)


def transient_cause(text: str) -> str | None:
    """The name of the known transient failure in an error text, or None."""
    for name, pattern in TRANSIENT.items():
        if pattern.search(text):
            return name
    return None


class GaveUp(Exception):
    """Still failing after every retry; carries the last error."""

    def __init__(self, last: Exception, attempts: int, cause: str | None):
        self.last = last
        self.attempts = attempts
        self.cause = cause
        super().__init__(str(last))


@dataclass(frozen=True)
class Backoff:
    delays: tuple[float, ...] = DEFAULT_DELAYS
    sleep: Callable[[float], None] | None = None

    def run(
        self,
        attempt: Callable[[], T],
        error_text: Callable[[Exception], str],
        on_retry: Callable[[str, float, int], None] = lambda cause, delay, n: None,
        retry_on: tuple[type[Exception], ...] = (Exception,),
    ) -> T:
        """Call `attempt`; on a transient failure wait and call again, up to len(delays) times.
        Any other failure is raised at once."""
        import time

        sleep = self.sleep or time.sleep
        for n, delay in enumerate((*self.delays, None), start=1):
            try:
                return attempt()
            except retry_on as exc:
                cause = transient_cause(error_text(exc))
                if cause is None:
                    raise
                if delay is None:
                    raise GaveUp(exc, n, cause) from exc
                on_retry(cause, delay, n)
                sleep(delay)
        raise AssertionError("unreachable")
