"""The model zoo's parameter counts match the published sizes within 2%."""

import pytest

from sysmodel.models import available, load_model


@pytest.mark.parametrize("name", available())
def test_params_match_published(name: str) -> None:
    cfg = load_model(name)
    assert cfg.params() == pytest.approx(cfg.published_params, rel=0.02)


def test_exact_counts_where_published() -> None:
    assert load_model("llama2-70b").params() == 68_976_648_192
    assert load_model("llama2-7b").params() == 6_738_415_616
    assert load_model("mixtral-8x7b").params() == 46_702_792_704


def test_unknown_model() -> None:
    with pytest.raises(ValueError, match="model: unknown 'gpt-5'"):
        load_model("gpt-5")
