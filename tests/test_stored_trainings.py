"""A net training and a move-model training stored by the code before the kinds became one package
each (tests/data/store-v1/train and moves, made at commit feb16e2: README.md there) are listed,
shown, exported and resumed by today's code as that code did: the same rows, the same status,
the same bytes, and a resume to 4 epochs gives the bytes that code's uninterrupted 4 epochs
gave."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from evotune.kinds.training import train_config_from_dict
from evotune.runs.manifest import parse_manifest

V1 = Path(__file__).resolve().parent / "data" / "store-v1"
OLD = V1 / "old-outputs"
# sha256 of the file an uninterrupted 4-epoch run wrote with the code at feb16e2 (README.md)
FOUR_EPOCHS = {
    "train": ("net.nnue", "708bd1b89b88238ed0f348d85abb60d5857418752545a9b9ee1b246d504ece55"),
    "moves": ("model.evomove", "041188277d6d758acaf50b3774ff2ea6c3c934e810bd702da3e4ef830aaff027"),
}


@pytest.fixture
def v1(tmp_path, monkeypatch) -> Path:
    """A copy of the stored run folders, the working folder (the runs name their data
    relatively)."""
    folder = tmp_path / "v1"
    shutil.copytree(V1, folder)
    monkeypatch.chdir(folder)
    return folder


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_runs_lists_the_stored_trainings_as_before(v1, call_cli):
    code, out, err = call_cli("runs", "--runs-dir", ".")
    assert code == 0, err
    # the cells but STARTED (the folder's time), whatever the columns' widths
    rows = {cells[0]: cells[:-1] for cells in (re.split(r"\s{2,}", line.strip())
                                               for line in out.splitlines()[1:])}
    for was in (OLD / "runs-kinds.txt").read_text().splitlines():
        cells = re.split(r"\s{2,}", was.strip())
        assert rows[cells[0]] == cells


@pytest.mark.parametrize("run_id", ["train", "moves"])
def test_status_of_a_stored_training_is_as_before(v1, call_cli, run_id):
    code, out, err = call_cli("status", run_id, "--runs-dir", ".", "--json")
    assert code == 0, err
    was = json.loads((OLD / f"{run_id}-status.json").read_text())
    got = json.loads(out)  # status --json may add fields, never drop or change one
    assert {k: got[k] for k in was} == was
    code, out, err = call_cli("status", run_id, "--runs-dir", ".")
    assert code == 0, err
    assert out == (OLD / f"{run_id}-status.txt").read_text()


@pytest.mark.parametrize("run_id", ["train", "moves"])
def test_a_stored_training_exports_its_file_and_resumes_to_the_uninterrupted_bytes(
        v1, call_cli, tmp_path, run_id):
    name, four = FOUR_EPOCHS[run_id]
    out_file = tmp_path / "exported"
    code, out, err = call_cli("export", run_id, "--format", "evotune", "--out", out_file,
                              "--runs-dir", ".")
    assert code == 0, err
    assert out_file.read_bytes() == (V1 / run_id / name).read_bytes()
    code, out, err = call_cli("resume", run_id, "--max-games", "9", "--runs-dir", ".")
    assert code == 2 and "raise them with --generations N" in err
    code, out, err = call_cli("resume", run_id, "--generations", "4", "--runs-dir", ".")
    assert code == 0, err
    assert _sha(v1 / run_id / name) == four
    code, out, err = call_cli("status", run_id, "--runs-dir", ".", "--json")
    assert code == 0 and json.loads(out)["epoch"] == json.loads(out)["epochs"] == 4


def test_the_typed_configs_give_the_stored_forms_back_key_for_key():
    """The configs read with the trainer's settings as typed records write back the manifests'
    configs exactly, and a training's identity hashes as the stored identity says."""
    for run in ("train", "moves"):
        stored = json.loads((V1 / run / "manifest.json").read_text())
        cfg = parse_manifest(stored, V1 / run / "manifest.json").config
        assert cfg.to_dict() == stored["config"], run
        assert json.dumps(cfg.to_dict(), sort_keys=True) == json.dumps(stored["config"],
                                                                       sort_keys=True)
    stored = json.loads((V1 / "train" / "manifest.json").read_text())
    cfg = train_config_from_dict(stored["config"])
    digest = hashlib.sha256(json.dumps(cfg.identity_dict(), sort_keys=True).encode()).hexdigest()
    assert digest == stored["identity"]["config"]
    # a training stored before --stream existed: its settings read without it, as stored
    old = {**stored["config"], "settings": {k: v for k, v in stored["config"]["settings"].items()
                                            if k != "stream"}}
    cfg = train_config_from_dict(old)
    assert cfg.absent == {"stream"} and cfg.settings.stream == 0
    assert cfg.to_dict() == old
    assert "stream" not in cfg.identity_dict()["settings"]


def test_a_stored_setting_out_of_range_is_a_damaged_manifest_in_one_line(v1, call_cli):
    """The typed settings check a stored training's values when its manifest is read: a value
    the trainer refuses names the manifest and the setting (exit 2), and `runs` lists the run
    as unreadable instead of failing."""
    path = v1 / "train" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["config"]["settings"]["hidden"] = -1
    path.write_text(json.dumps(doc))
    before = _sha(path)
    for args in (("status", "train"), ("resume", "train")):
        code, out, err = call_cli(*args, "--runs-dir", ".")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "manifest.json is damaged" in err \
            and "hidden must be an integer from 8 to 1024, got -1" in err, err
    code, out, err = call_cli("runs", "--runs-dir", ".")
    assert code == 0, err
    assert re.search(r"^train\s+unreadable: .*manifest\.json is damaged", out, re.M), out
    assert _sha(path) == before
