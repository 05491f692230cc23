"""The Linux login every cluster VM gets: key-only SSH for the admin user, no passwords."""

from __future__ import annotations

from typing import Any

import pulumi

from clusterctl.spec.model import ClusterSpec


def linux_os_profile(
    spec: ClusterSpec, public_key: pulumi.Input[str], **names: Any
) -> dict[str, Any]:
    """osProfile for a VM (`computer_name=`) or scale set (`computer_name_prefix=`), plus
    `custom_data=` where the VM gets cloud-init."""
    user = spec.ssh.admin_user
    return {
        **{k: v for k, v in names.items() if v is not None},
        "admin_username": user,
        "linux_configuration": {
            "disable_password_authentication": True,
            "ssh": {
                "public_keys": [
                    {"path": f"/home/{user}/.ssh/authorized_keys", "key_data": public_key}
                ]
            },
        },
    }
