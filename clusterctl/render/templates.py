"""The jinja2 environment over templates/: the only place jinja2 is set up (strict undefined,
blocks trimmed, trailing newlines kept)."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from clusterctl.project import templates_dir


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
