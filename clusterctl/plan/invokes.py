"""Plausible answers for every provider function (invoke) the program calls, for the mock engine:
each cloud's own (clusterctl/clouds/<cloud>.py `mock_invokes`), in one table the engine reads."""

from __future__ import annotations

from clusterctl.clouds import all_clouds
from clusterctl.clouds.base import MockInvoke

MOCK_INVOKES: dict[str, MockInvoke] = {
    token: answer for cloud in all_clouds() for token, answer in cloud.mock_invokes.items()
}
