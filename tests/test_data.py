"""Issue 26: data for installed users. DeepShare's tables ship with the package; the Philly trace and the Pollux
workloads are fetched on request into a user cache, each file checked against its pinned SHA-256, from a base URL
the user may change. Every fetch here is served by a local HTTP server on 127.0.0.1: no test reaches the internet.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from optsched import data
from optsched.cli import main
from optsched.errors import InstanceError
from optsched.perf.measured import load_tables, packaged_tables

SMALL = b"timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-03 12:00:00,66,1,66,1\n"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request lines on stderr
        pass


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over a folder laid out like Pollux's simulator folder (traces/, workloads/)."""
    root = tmp_path / "www"
    (root / "traces").mkdir(parents=True)
    (root / "traces" / "philly.csv").write_bytes(SMALL)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def small_philly(monkeypatch):
    """Pin the Philly data set to the small file the server serves (the real sum pins the real trace)."""
    sha = hashlib.sha256(SMALL).hexdigest()
    monkeypatch.setitem(data.DATASETS, "philly", data.Dataset("philly", (("philly.csv", "traces/philly.csv", sha),),
                                                              data.ADAPTDL_URL, "test"))
    return sha


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No OPTSCHED_DATA, no shared/data found, an empty cache: what an installed user starts from."""
    monkeypatch.delenv(data.ENV, raising=False)
    monkeypatch.delenv(data.ENV_URL, raising=False)
    monkeypatch.setattr(data, "_candidates", lambda: [])
    monkeypatch.setenv(data.ENV_CACHE, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_deepshare_tables_ship_with_the_package_and_match_the_pinned_sums():
    folder = packaged_tables()
    assert folder is not None and (folder / "LICENSE-deepshare-Apache-2.0").is_file()
    isolated, ratio = load_tables()
    assert len(isolated) == 36 and len(ratio) == 36 * 36
    assert [s for _, s, _ in data.verify("deepshare-contention")] == ["ok"] * 3


def test_missing_trace_names_the_command_that_fixes_it(isolated):
    with pytest.raises(InstanceError, match="optsched data fetch philly") as ei:
        data.data_path("philly", "philly.csv")
    assert ei.value.field == "data"


def test_fetch_from_a_local_server_into_the_cache_then_read_from_there(isolated, server, small_philly,
                                                                         monkeypatch, capsys):
    url, _ = server
    monkeypatch.setenv(data.ENV_URL, url)
    assert main(["data", "verify", "philly"]) == 1
    assert "optsched data fetch philly" in capsys.readouterr().err
    assert main(["data", "fetch", "philly"]) == 0
    got = isolated / "philly" / "philly.csv"
    assert got.read_bytes() == SMALL
    # the trace is now found in the cache by every reader, and verifies
    assert data.data_path("philly", "philly.csv") == got
    assert main(["data", "verify", "philly"]) == 0
    assert "philly philly.csv ok" in capsys.readouterr().out


def test_a_wrong_checksum_is_refused_and_not_kept(isolated, server, monkeypatch):
    url, root = server
    monkeypatch.setitem(data.DATASETS, "philly", data.Dataset("philly", (("philly.csv", "traces/philly.csv",
                                                                          "0" * 64),), url, "test"))
    with pytest.raises(InstanceError, match="traces/philly.csv") as ei:
        data.fetch("philly")
    assert ei.value.field == "data"
    assert not (isolated / "philly" / "philly.csv").exists()


def test_an_unreachable_url_is_one_line_naming_it_and_the_variable(isolated, server, small_philly):
    url, _ = server
    with pytest.raises(InstanceError, match=f"cannot download {url}nothing/traces/philly.csv.*OPTSCHED_DATA_URL"):
        data.fetch("philly", base_url=url + "nothing/")


def test_cli_data_list_and_bad_names(isolated, capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "not found (optsched data fetch philly)" in out and "shipped with the package" in out
    assert main(["data", "fetch", "nope"]) == 2
    assert "unknown data set" in capsys.readouterr().err
    assert main(["data", "list", "--url", "http://127.0.0.1:1/"]) == 2


def test_fetch_of_the_packaged_set_needs_no_network(isolated):
    paths = data.fetch("deepshare-contention", base_url="http://127.0.0.1:1/")
    assert [p.name for p in paths] == ["isolated_thp.csv", "shared_thp_ratio.csv", "total_samples_trained.csv"]
    assert all(Path(p).is_file() for p in paths)
