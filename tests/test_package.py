from __future__ import annotations

import evotune


def test_numba_cache_moves_to_a_user_folder_only_for_read_only_installs(tmp_path):
    ro = tmp_path / "pkg"
    (ro / "engine").mkdir(parents=True)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    evotune.configure_numba_cache(env, str(tmp_path / "no-such-package"))  # not writable: moved
    assert env["NUMBA_CACHE_DIR"] == str(tmp_path / "cache" / "evotune" / "numba")
    env2 = {}
    evotune.configure_numba_cache(env2, str(ro))  # writable: numba's default (next to the sources)
    assert "NUMBA_CACHE_DIR" not in env2
    env3 = {"NUMBA_CACHE_DIR": "/x"}
    evotune.configure_numba_cache(env3, str(tmp_path / "no-such-package"))  # the user's choice wins
    assert env3["NUMBA_CACHE_DIR"] == "/x"
