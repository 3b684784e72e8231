"""``optsched data list|fetch|verify [NAME ...]``: the public data sets the simulator reads (the Philly trace, the
Pollux workloads) and DeepShare's tables (shipped with the package), where each is read from, downloading them into
the user cache with their pinned SHA-256 ([`optsched.data`][]).

```pycon
>>> from optsched.cli import main
>>> main(["data", "verify", "deepshare-contention"])      # doctest: +ELLIPSIS
deepshare-contention isolated_thp.csv ok ...
deepshare-contention shared_thp_ratio.csv ok ...
deepshare-contention total_samples_trained.csv ok ...
0

```
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

MISSING = 1  # exit code of verify: a file is missing or its checksum differs


def register(sub) -> None:
    from ..data import DATASETS, ENV, ENV_CACHE, ENV_URL

    p = sub.add_parser("data", help="list, fetch and verify the public data sets (Philly trace, Pollux workloads)",
                       description="The simulator's public data sets: 'list' shows each with where it would be "
                                   "read from; 'fetch' downloads the Philly trace and the Pollux workloads into the "
                                   "user cache, each file checked against its pinned SHA-256; 'verify' checks the "
                                   "files that would be read. DeepShare's tables ship with the package. The data is "
                                   f"read from {ENV} when set, else a shared/data folder beside the checkout or "
                                   f"the current directory, else the cache ({ENV_CACHE} or the platform's cache "
                                   "folder).",
                       epilog=f"Examples: optsched data list; optsched data fetch philly; {ENV_URL}=https://mirror/"
                              "adaptdl/simulator/ optsched data fetch; optsched data verify --json")
    p.add_argument("action", choices=("list", "fetch", "verify"), help="what to do")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"data sets (default: all): {', '.join(DATASETS)}")
    p.add_argument("--url", default=None, metavar="BASE_URL",
                   help=f"fetch from this base URL instead of the public source (default: ${ENV_URL}, else "
                        "Pollux's simulator folder on GitHub at a pinned commit)")
    p.add_argument("--cache", default=None, metavar="DIR", help=f"fetch into this folder (default: ${ENV_CACHE}, "
                                                                "else the platform's cache folder)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import DATASETS, fetch, find_data_file, verify
    from ..errors import InstanceError

    names = list(dict.fromkeys(args.names)) or list(DATASETS)
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise InstanceError(f"unknown data set(s) {', '.join(unknown)} (known: {', '.join(DATASETS)})", field="NAME")
    for flag, value in (("--url", args.url), ("--cache", args.cache)):
        if value is not None and args.action != "fetch":
            raise InstanceError("applies to 'optsched data fetch' only", field=flag)
    if args.action == "list":
        doc = []
        for n in names:
            ds = DATASETS[n]
            where = "shipped with the package" if ds.packaged else (
                str(found) if (found := find_data_file(n)) else f"not found (optsched data fetch {n})")
            doc.append({"name": n, "files": len(ds.files), "source": ds.source, "read_from": where})
        if args.json:
            print(json.dumps(doc, indent=1))
        else:
            for d in doc:
                print(f"{d['name']:<21} {d['files']} file(s)  {d['read_from']}\n{'':<21} {d['source']}")
        return 0
    if args.action == "fetch":
        got = {}
        for n in names:
            paths = fetch(n, base_url=args.url, cache=args.cache, progress=sys.stderr.isatty() and not args.json)
            got[n] = [str(p) for p in paths]
            if not args.json:
                where = "ships with the package" if DATASETS[n].packaged else f"in {paths[0].parent}"
                print(f"{n}: {len(paths)} file(s) {where}, checksums ok")
        if args.json:
            print(json.dumps(got, indent=1))
        return 0
    rows = [(n, f, state, path) for n in names for f, state, path in verify(n)]
    if args.json:
        print(json.dumps([{"name": n, "file": f, "state": s, "path": p} for n, f, s, p in rows], indent=1))
    else:
        for n, f, state, path in rows:
            print(f"{n} {f} {state} {path}")
        bad = sorted({n for n, _, s, _ in rows if s != "ok"})
        if bad:
            logging.getLogger(__name__).warning("to fix: optsched data fetch %s", " ".join(bad))
    return 0 if all(s == "ok" for _, _, s, _ in rows) else MISSING
