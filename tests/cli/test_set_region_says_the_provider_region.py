"""`plan --set region=X` is a what-if the file is not changed by; plan says the provider's region
in the file would have to change too, as it would refuse the same region written in the file."""

from __future__ import annotations


def test_a_set_region_names_the_provider_region_left_behind(cli) -> None:
    res = cli("plan", "-s", "azure-h100", "--set", "region=westus3")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "warning: azure-native:location: eastus: this plan's region is westus3" in text
    plain = cli("plan", "-s", "azure-h100")
    assert "azure-native:location" not in plain.output
