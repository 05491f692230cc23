"""The Linux login every cluster VM gets: key-only SSH for the admin user, no passwords."""

from __future__ import annotations

from typing import Any

import pulumi


def linux_os_profile(user: str, public_key: pulumi.Input[str], **names: Any) -> dict[str, Any]:
    """osProfile for a VM (`computer_name=`) or scale set (`computer_name_prefix=`) whose admin
    is `user` (ssh.adminUser), plus `custom_data=` where the VM gets cloud-init."""
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
