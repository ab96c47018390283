"""A scheme is one folder: ALiBi's folder, copied under a new name into a temporary directory on
the schemes' package path (the name changed inside the copy only, no other file edited), is
found by Position schemes, Compare schemes, the URL, the lab's registry, the checker's kinds
(the command's --help and the Check page) and Your model's list of what it recognises."""

from __future__ import annotations

import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import relpos_core.schemes as schemes
from explorer.frame.params import ViewParams
from explorer.stories.your_model.sources import nothing_found
from explorer.weights.example import example_inputs
from relpos_core.check import EQUAL, KINDS, check_implementation
from relpos_core.schemes import alibi_slopes, make_scheme, scheme_entry, scheme_names
from relpos_core.schemes.folders import folders
from relpos_lab import check as check_command
from relpos_lab.extract import looked_for
from relpos_lab.family.model import build_model
from relpos_lab.family.registry import model_config, specs, untrained_schemes
from tests.app.conftest import assert_clean, open_page
from tests.app.panels import panel_z
from tests.check.examples import alibi as alibi_examples

ROOT = Path(__file__).resolve().parents[2]
NEW = "alibi_copy"
PACKAGE = f"relpos_core.schemes.{NEW}"
CLOSE = {"rtol": 1e-4, "atol": 1e-5}


def forget_copy() -> None:
    folders.cache_clear()
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """ALiBi's folder as ``alibi_copy``: every ``alibi`` that starts a word inside it (the
    scheme's name, its kind's, its URL keys and its functions' prefixes) becomes the new name,
    and its entry names no trained model (none of the copy was trained)."""
    target = tmp_path / NEW
    source = ROOT / "relpos_core" / "schemes" / "alibi"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.glob("*.py"):
        path.write_text(re.sub(r"\balibi", NEW, path.read_text()))
    entry = target / "entry.py"
    entry.write_text(entry.read_text().replace(f'model="{NEW}"', "model=None"))
    monkeypatch.setattr(schemes, "__path__", [*schemes.__path__, str(tmp_path)])
    forget_copy()
    yield target
    monkeypatch.undo()
    forget_copy()
    assert NEW not in scheme_names() and NEW not in KINDS  # gone with its folder


def bias(heads: int, n: int, max_bias: float) -> np.ndarray:
    """ALiBi's definition, -m_h |j - i| with m_h = 2^(-max_bias h / H): (heads, n, n)."""
    distance = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
    return -alibi_slopes(heads, max_bias).double().numpy()[:, None, None] * distance


def test_the_catalogue_finds_the_copy_and_builds_its_own_class(copied: Path) -> None:
    names = scheme_names()
    assert names[names.index("alibi") + 1] == NEW  # ALiBi's place in the list, then by name
    entry = scheme_entry(NEW)
    assert entry.folder == PACKAGE and entry.setting("max_bias").url_key == f"{NEW}_bias"
    scheme = make_scheme(NEW, 3, 4)
    assert scheme.name == NEW and type(scheme).__module__ == f"{PACKAGE}.maths"
    assert Path(sys.modules[f"{PACKAGE}.maths"].__file__).parent == copied


def test_position_schemes_draws_it_from_the_url_with_its_own_setting(copied: Path) -> None:
    at = open_page("family", scheme=NEW, **{f"{NEW}_bias": "4"})
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert at.query_params["scheme"] == NEW  # bound: kept in the URL as given
    assert at.button_group(key=f"{NEW}_bias").value == 4
    params = ViewParams()
    expected = bias(params.heads, params.length, 4.0)
    for h in range(params.heads):
        np.testing.assert_allclose(panel_z(at, "family_heads", h), expected[h], **CLOSE)


def test_compare_draws_its_weights(copied: Path) -> None:
    at = open_page("compare", compare_a=NEW, compare_b="shaw", mask="causal")
    assert_clean(at)
    params = ViewParams(mask="causal")
    inputs = example_inputs(params)
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 0].double().numpy()
    logits = content / math.sqrt(params.head_dim) + bias(params.heads, params.length, 8.0)[0]
    allowed = np.tril(np.ones(logits.shape, bool))
    shifted = np.where(allowed, logits - logits.max(-1, keepdims=True), -np.inf)
    expected = np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True)
    drawn = panel_z(at, "compare_weights", 0)
    np.testing.assert_allclose(np.where(allowed, drawn, 0), expected, **CLOSE)


def test_the_lab_registry_builds_a_model_of_it(copied: Path) -> None:
    assert specs()[NEW] == {"position": NEW} and NEW in untrained_schemes()
    model = build_model(model_config(NEW, vocab=10, context=8))
    assert type(model.blocks[0].attention.scheme).__module__ == f"{PACKAGE}.maths"
    assert model(torch.zeros(1, 8, dtype=torch.long)).shape == (1, 8, 10)


def test_the_checker_knows_its_kind_in_the_library_the_command_and_the_page(
    copied: Path, capsys: pytest.CaptureFixture
) -> None:
    kinds = list(KINDS)
    assert kinds[kinds.index("alibi") + 1] == NEW
    assert check_implementation(NEW, alibi_examples.right_press).status == EQUAL
    assert check_implementation(NEW, alibi_examples.right_bloom).ok  # a constant per row
    with pytest.raises(SystemExit):
        check_command.main(["--help"])
    assert f"\n  {NEW}\n" in capsys.readouterr().out
    at = open_page("check", check_kind=NEW, check_alibi_heads="12", n="10")
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    drawn = panel_z(at, "check_reference", 0)
    np.testing.assert_allclose(np.where(np.tril(np.ones((10, 10), bool)), drawn, 0),
                               np.tril(bias(12, 10, 8.0)[0]), **CLOSE)  # fmt: skip


def test_your_model_lists_what_the_copy_says_checkpoints_hold(copied: Path) -> None:
    line = f"ALiBi in the config ({NEW}, attn_config.{NEW}, a BLOOM model type)"
    assert line in looked_for()
    assert line in nothing_found("upload.safetensors")
