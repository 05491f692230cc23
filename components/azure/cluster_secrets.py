"""ClusterSecrets: the munge key and (if none is given) the admin SSH key pair, as secrets."""

from __future__ import annotations

import pulumi
import pulumi_random as random
import pulumi_tls as tls

from clusterctl.spec.model import ClusterSpec

MUNGE_KEY_BYTES = 1024


class ClusterSecrets(pulumi.ComponentResource):
    def __init__(self, name: str, spec: ClusterSpec, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-clusters:azure:ClusterSecrets", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        munge = random.RandomBytes(f"{name}-munge-key", length=MUNGE_KEY_BYTES, opts=child)
        self.munge_key_b64: pulumi.Output[str] = pulumi.Output.secret(munge.base64)
        self.private_key: pulumi.Output[str] | None = None
        if spec.ssh.public_key:
            self.public_key: pulumi.Input[str] = spec.ssh.public_key
        else:
            key = tls.PrivateKey(f"{name}-admin-ssh", algorithm="ED25519", opts=child)
            self.public_key = key.public_key_openssh
            self.private_key = pulumi.Output.secret(key.private_key_openssh)
        self.register_outputs({"publicKey": self.public_key})
