"""Where the shared data lives (the Philly trace, the Pollux workloads, DeepShare's contention tables), and how
an installed user gets it (``optsched data list|fetch|verify``).

The repository never carries a copy of the traces. DeepShare's three small measured tables ship inside the package
([`optsched.perf.measured.packaged_tables`][], Apache-2.0, the license beside them) for installed users without a
data folder (where there is one, its ``deepshare-contention/`` is read in place); the Philly trace and the
Pollux workloads are read at run time from a *data folder* holding ``philly/`` and ``pollux-workloads/`` (and,
optionally, ``deepshare-contention/``). A file is looked for, in this order:

1. in the ``folder`` argument, when a caller gives one (then nowhere else);
2. in the folder of the environment variable ``OPTSCHED_DATA`` (then nowhere else);
3. in a ``shared/data`` folder beside the checkout: ``P/shared/data`` for the folder ``P`` holding the repository,
   or any folder above it (``<repo>/../shared/data`` in the usual layout);
4. in a ``shared/data`` folder in the current directory or any folder above it;
5. in the user cache that [`fetch`][optsched.data.fetch] (``optsched data fetch``) fills: ``OPTSCHED_CACHE``, else the
platform's
   cache folder (``~/.cache/optsched`` on Linux), with the same layout.

Otherwise [`data_path`][optsched.data.data_path] raises one [`InstanceError`][optsched.errors.InstanceError] naming the
command that fixes it.
[`fetch`][optsched.data.fetch] downloads a data set from its public source ([`DATASETS`][optsched.data.DATASETS]; base
URL ``OPTSCHED_DATA_URL`` or
``base_url=``) and checks each file against its pinned SHA-256 (pooch); no machine-specific path is built in.

```pycon
>>> import os, tempfile
>>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, "philly"))
>>> data_root(d) == Path(d), data_path("philly", root=d).name
(True, 'philly')
>>> try:
...     data_path("philly", "philly.csv", root=d)
... except InstanceError as e:
...     print(e.field, "optsched data fetch philly" in str(e))
data True

```
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import InstanceError

ENV = "OPTSCHED_DATA"
ENV_CACHE = "OPTSCHED_CACHE"
ENV_URL = "OPTSCHED_DATA_URL"
HINT = (f"run 'optsched data fetch' (downloads the public data into the user cache), or set {ENV} to the folder "
        f"holding philly/ and pollux-workloads/ (e.g. export {ENV}=/path/to/shared/data)")

#: Pollux's simulator at the commit the shared copies come from (petuum/adaptdl, Apache-2.0): ``traces/philly.csv``
#: and ``workloads/workload-N.csv`` below it
ADAPTDL_URL = "https://raw.githubusercontent.com/petuum/adaptdl/de25dcc90c350b8ade3a710e437a651a8d2efae6/simulator/"


@dataclass(frozen=True)
class Dataset:
    """A data set of the data folder: its sub-folder, its files ``(name, path below the base URL, sha256)``, the
    base URL it is fetched from (empty: shipped with the package) and where it comes from."""

    name: str
    files: tuple[tuple[str, str, str], ...]
    url: str
    source: str

    @property
    def packaged(self) -> bool:
        return not self.url


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("philly", (("philly.csv", "traces/philly.csv",
                        "ebffb3dd1589bdf4e7bcd74496201c5ded1d557d498ee14f560463f37ec353da"),),
            ADAPTDL_URL, "Microsoft's Philly trace (Jeon et al., ATC'19), 82,248 jobs, as distributed with Pollux's "
                         "simulator (petuum/adaptdl, Apache-2.0); 3.4 MB"),
    Dataset("pollux-workloads", tuple((f"workload-{k}.csv", f"workloads/workload-{k}.csv", h) for k, h in enumerate((
        "0bff9c3a36b52c7025484b666d788001b1478cc4d84be409ca04b28f58f9d162",
        "83bec266667ec209a202c10975ab321e52eb4989e5ba420d18003ed03cf15c4e",
        "d76d5d1e3f9143b5453083de5c7a4c6576e884b41e86434a624b08f2c4277dc0",
        "22c400f59637ba0fc2c9be3b491f67e0765d1bf33d0a57d76101d770e4443f21",
        "4761ea418f2cb618f79e1dcfc003d24de2810ec8d0af2ecf8895690d088c3930",
        "d6517c4d57c72e4f362f9e99f285e4f7fee0348913287033f11f02f5cb88f074",
        "fd29e99deef2c9edb758b431f3a04f896251a0ff6fb443567fb27580239462d5",
        "13618461b7dd45974f77dbf8354aa2a5bf5e6e04b15dbc783b174e111816774d"), start=1)),
            ADAPTDL_URL, "the eight 160-job workloads of the Pollux paper (OSDI'21), petuum/adaptdl, Apache-2.0"),
    Dataset("deepshare-contention", (
        ("isolated_thp.csv", "", "1367539a28b325585db5cc035974f2876efce2d584f8a405f406a822a16c8851"),
        ("shared_thp_ratio.csv", "", "326e7d3083c389e6f50f60769b5cd501944fed32b0c4cae94d0ad9a6bfef65d2"),
        ("total_samples_trained.csv", "", "4962bc22e21cf08c1b91fc24d11fb34276d94d2712c97b5b847db1bc75bc9cdd")),
            "", "DeepShare's measured contention tables (gajagajago/deepshare, Apache-2.0), shipped with the "
                "package"),
)}

__all__ = ["ADAPTDL_URL", "DATASETS", "ENV", "ENV_CACHE", "ENV_URL", "Dataset", "cache_dir", "checkout_root",
           "data_path", "data_root", "fetch", "find_data_file", "find_data_root", "packaged_folder", "verify"]


def checkout_root() -> Path | None:
    """The repository this module was loaded from (``src/optsched/data.py`` three levels down), or None when
    optsched is installed elsewhere (no ``pyproject.toml`` there)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def _candidates() -> list[Path]:
    out: list[Path] = []
    root = checkout_root()
    if root is not None:
        out += [p / "shared" / "data" for p in root.parents]
    cwd = Path.cwd().resolve()
    out += [p / "shared" / "data" for p in (cwd, *cwd.parents)]
    return out


def find_data_root(folder: str | os.PathLike | None = None) -> Path | None:
    """The data folder by the rules of the module docstring, or None if there is none (no error)."""
    if folder is not None:
        p = Path(folder)
        return p if p.is_dir() else None
    env = os.environ.get(ENV)
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    for c in _candidates():
        if c.is_dir():
            return c
    return None


def data_root(folder: str | os.PathLike | None = None) -> Path:
    """The data folder (see the module docstring); a clear [`InstanceError`][optsched.errors.InstanceError] if there is
    none."""
    p = find_data_root(folder)
    if p is not None:
        return p
    if folder is not None:
        raise InstanceError(f"data folder {str(folder)!r} is not a directory", field="data")
    env = os.environ.get(ENV)
    if env:
        raise InstanceError(f"{ENV}={env!r} is not a directory: {HINT}", field="data")
    raise InstanceError(f"no shared data folder found (no {ENV}, no shared/data beside the checkout or the "
                        f"current directory): {HINT}", field="data")


def cache_dir() -> Path:
    """The user cache [`fetch`][optsched.data.fetch] fills: ``OPTSCHED_CACHE``, else the platform's cache folder for
    optsched."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env)
    import platformdirs  # pooch's own dependency

    return Path(platformdirs.user_cache_dir("optsched"))


#: the data sets shipped inside the package, by their folder below ``optsched/``
PACKAGED = {"deepshare-contention": "perf/deepshare"}


def packaged_folder(name: str) -> Path | None:
    """The folder of a data set shipped with the package (None if it is not one, or a build left it out).

    ```pycon
    >>> packaged_folder("deepshare-contention").name, packaged_folder("philly")
    ('deepshare', None)

    ```
    """
    from importlib.resources import files

    if name not in PACKAGED:
        return None
    p = Path(str(files("optsched"))).joinpath(*PACKAGED[name].split("/"))
    return p if all((p / f).is_file() for f, _, _ in DATASETS[name].files) else None


def _fix(parts: tuple[str, ...]) -> str:
    name = parts[0] if parts and parts[0] in DATASETS else ""
    if name and DATASETS[name].packaged:
        return "reinstall optsched (these tables ship with the package)"
    return (f"run 'optsched data fetch {name}'".rstrip() + f" (into {cache_dir()}), or set {ENV} to a folder "
            f"holding {'/'.join(parts) or 'the data'}")


def find_data_file(*parts: str) -> Path | None:
    """The first of the places in the module docstring (after an explicit folder) that holds ``parts``."""
    env = os.environ.get(ENV)
    if env:
        p = Path(env).joinpath(*parts)
        return p if p.exists() else None
    for c in [*_candidates(), cache_dir()]:
        p = c.joinpath(*parts)
        if p.exists():
            return p
    return None


def data_path(*parts: str, root: str | os.PathLike | None = None) -> Path:
    """Path of a file or folder inside the data folder (or the user cache); a clear
    [`InstanceError`][optsched.errors.InstanceError]
    naming the command that fixes it if it is absent."""
    if root is not None or os.environ.get(ENV):
        p = data_root(root).joinpath(*parts)
        if not p.exists():
            raise InstanceError(f"shared data file not found: {p}: {_fix(parts)}", field="data")
        return p
    found = find_data_file(*parts)
    if found is None:
        raise InstanceError(f"shared data file not found: {'/'.join(parts)} (no {ENV}, not in a shared/data beside "
                            f"the checkout or the current directory, nor in the cache): {_fix(parts)}",
                            field="data")
    return found


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _dataset(name: str) -> Dataset:
    if name not in DATASETS:
        raise InstanceError(f"unknown data set {name!r} (known: {', '.join(DATASETS)})", field="data")
    return DATASETS[name]


def fetch(name: str, *, base_url: str | None = None, cache: str | os.PathLike | None = None,
          progress: bool = False) -> list[Path]:
    """Download the data set ``name`` (a key of [`DATASETS`][optsched.data.DATASETS]) into the user cache (``cache``,
    default
    [`cache_dir`][optsched.data.cache_dir]) from ``base_url`` (default ``OPTSCHED_DATA_URL``, else the data set's public
    source), each
    file checked against its pinned SHA-256; files already there with the right sum are not downloaded again.
    Returns the files' paths. A data set shipped with the package needs no download (its packaged files)."""
    ds = _dataset(name)
    if ds.packaged:
        folder = packaged_folder(name)
        if folder is None:
            raise InstanceError(f"{name} should ship with the package but is missing: {_fix((name,))}", field="data")
        return [folder / f for f, _, _ in ds.files]
    try:
        import pooch
    except ImportError:
        raise InstanceError("fetching data needs pooch: pip install pooch", field="data") from None
    base = base_url or os.environ.get(ENV_URL) or ds.url
    base = base if base.endswith("/") else base + "/"
    target = Path(cache) if cache is not None else cache_dir()
    out = []
    for fname, remote, sha in ds.files:
        url = base + remote
        try:
            got = pooch.retrieve(url, known_hash=f"sha256:{sha}", fname=fname, path=target / ds.name,
                                 progressbar=progress)
        except ValueError as exc:  # pooch: the downloaded file's hash differs from the pinned one
            raise InstanceError(f"{url}: {str(exc).splitlines()[0]} (the file was not kept; a different base URL "
                                f"via {ENV_URL}?)", field="data") from None
        except Exception as exc:  # noqa: BLE001 - requests' and the OS's errors, as one line
            raise InstanceError(f"cannot download {url}: {type(exc).__name__}: {exc} (set {ENV_URL} to a mirror, or "
                                f"copy the files into {target / ds.name})", field="data") from None
        out.append(Path(got))
    return out


def verify(name: str, root: str | os.PathLike | None = None) -> list[tuple[str, str, str]]:
    """``(file, state, path)`` for each file of the data set ``name`` where the data would be read from
    ([`data_path`][optsched.data.data_path]; the packaged copy for a packaged set): state ``ok``, ``missing`` or
    ``checksum mismatch``.

    ```pycon
    >>> [s for _, s, _ in verify("deepshare-contention")]
    ['ok', 'ok', 'ok']

    ```
    """
    ds = _dataset(name)
    folder = packaged_folder(name) if ds.packaged and root is None else None
    out = []
    for fname, _, sha in ds.files:
        if ds.packaged and root is None:
            p: Path | None = folder / fname if folder is not None else None
        else:
            try:
                p = data_path(ds.name, fname, root=root)
            except InstanceError:
                p = None
        if p is None or not p.is_file():
            out.append((fname, "missing", "-"))
        else:
            out.append((fname, "ok" if _sha256(p) == sha else "checksum mismatch", str(p)))
    return out
