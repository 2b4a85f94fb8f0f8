"""Finding the package's files: an explicit path, then the installed share folder, then the source tree."""

import sys
from pathlib import Path

import pytest

from wafer_reasoner.engine import SHIPPED_MODEL_DIR
from wafer_reasoner.runtime import resources
from wafer_reasoner.runtime.resources import ResourceError, config_file, model_dir, scenario_file


def test_an_explicit_path_wins_and_must_exist(tmp_path):
    mine = tmp_path / "map.yaml"
    mine.write_text("places: []\n")
    assert config_file("semantic_map.yaml", explicit=str(mine)) == mine.resolve()
    with pytest.raises(ResourceError, match="does not exist"):
        config_file("semantic_map.yaml", explicit=str(tmp_path / "absent.yaml"))


def test_the_installed_share_folder_comes_before_the_source_tree():
    candidates = resources.config_candidates("emulator.yaml")
    assert candidates[-1] == resources.SOURCE_CONFIG / "emulator.yaml"
    shares = [path for path in candidates[:-1]]
    assert all("share" in path.parts and "wafer_reasoner" in path.parts for path in shares)
    assert config_file("emulator.yaml") == next(path for path in candidates if path.is_file())


def test_the_prefix_share_folder_is_found_without_the_ament_index(monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    prefix_share = Path(sys.prefix) / "share" / "wafer_reasoner"
    assert (prefix_share in resources.share_dirs()) == prefix_share.is_dir()


def test_a_missing_file_lists_every_place_looked(monkeypatch):
    with pytest.raises(ResourceError) as error:
        config_file("no_such_file.yaml")
    assert str(resources.SOURCE_CONFIG / "no_such_file.yaml") in str(error.value)


def test_scenarios_by_name_or_path(tmp_path):
    assert scenario_file("") is None and scenario_file("   ") is None
    assert scenario_file("bring_red_cup").name == "bring_red_cup.yaml"
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\n")
    assert scenario_file(str(mine)) == mine.resolve()
    with pytest.raises(ResourceError):
        scenario_file("no_such_scenario")


def test_the_model_is_the_shipped_one_unless_a_folder_is_given(tmp_path):
    assert model_dir() == SHIPPED_MODEL_DIR and model_dir("") == SHIPPED_MODEL_DIR
    assert model_dir(str(tmp_path)) == tmp_path
