"""ClusterSecrets: the munge key and (if none is given) the admin SSH key pair, as secrets."""

from __future__ import annotations

import pulumi
import pulumi_random as random
import pulumi_tls as tls

from components.azure.slurm.props import SecretsProps

MUNGE_KEY_BYTES = 1024


class ClusterSecrets(pulumi.ComponentResource):
    def __init__(self, name: str, props: SecretsProps, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:azure:ClusterSecrets", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        munge = random.RandomBytes(f"{name}-munge-key", length=MUNGE_KEY_BYTES, opts=child)
        self.munge_key_b64: pulumi.Output[str] = pulumi.Output.secret(munge.base64)
        self.private_key: pulumi.Output[str] | None = None
        if props.public_key:
            self.public_key: pulumi.Input[str] = props.public_key
        else:
            key = tls.PrivateKey(f"{name}-admin-ssh", algorithm="ED25519", opts=child)
            self.public_key = key.public_key_openssh
            self.private_key = pulumi.Output.secret(key.private_key_openssh)
        # slurmdbd's MariaDB password: a secret in the state and inside the (secret) customData.
        self.db_password: pulumi.Output[str] | None = None
        if props.accounting:
            db = random.RandomPassword(f"{name}-slurmdbd-db", length=32, special=False, opts=child)
            self.db_password = pulumi.Output.secret(db.result)
        self.register_outputs({"publicKey": self.public_key})

    def scheduler_inputs(self) -> pulumi.Output[dict[str, str | None]]:
        """What the scheduler's user-data needs of these secrets, as render_cloud_init keywords."""
        return pulumi.Output.all(self.munge_key_b64, self.db_password).apply(
            lambda v: {"munge_key_b64": v[0], "db_password": v[1]}
        )
