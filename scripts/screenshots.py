"""Screenshot the documentation site's main pages in headless Chromium, for a person to look at (issue 27).

Builds the site (``mkdocs build --strict``) into a temporary folder, serves it on 127.0.0.1 (a free port, this
process only) and saves one full-width PNG per page into OUT_DIR (not committed):

    python scripts/screenshots.py OUT_DIR [--width 1440] [--height 2400] [--chromium PATH] [--page URL ...]

Chromium runs without network access beyond the local server (``--proxy-server`` to a closed port, with the
local address bypassed), so a page that still loads MathJax or a font from a CDN shows it in the picture.
Debian's ``chromium`` package: ``apt-get install -y chromium``. Not a test: the pictures are for eyes.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the main pages: home, quickstart, a formulation with mathematics, an API page with examples, the results index,
# and the results pages whose figures carry the most (DRS, the RAR-DDLS gaps and sweeps, exact total JCT, Blox)
PAGES = ("", "quickstart/", "formulations/deadline/", "formulations/rar-ddls-cpsat/", "api/doors/",
         "api/experiments/", "results/", "results/drs/", "results/rar_exact/", "results/rar_heuristics/",
         "results/total_jct/", "results/blox_policies/")


def find_chromium(explicit: str | None) -> str:
    for name in ([explicit] if explicit else []) + ["chromium", "chromium-browser", "google-chrome"]:
        path = shutil.which(name) if name else None
        if path:
            return path
    raise SystemExit("no Chromium found: apt-get install -y chromium (or pass --chromium PATH)")


def build_site(dest: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if not mkdocs:
        raise SystemExit("mkdocs is missing: pip install -e '.[docs]'")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([mkdocs, "build", "--strict", "--quiet", "--site-dir", str(dest)], cwd=ROOT, env=env, check=True)


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def shoot(chromium: str, url: str, out: Path, width: int, height: int, profile: Path) -> None:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--hide-scrollbars", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
           "--virtual-time-budget=8000", f"--window-size={width},{height}", f"--screenshot={out}", url]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="folder for the PNGs (created; not part of the repository)")
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--height", type=int, default=2400)
    ap.add_argument("--chromium", help="the browser's path (default: chromium on PATH)")
    ap.add_argument("--page", action="append", help="a page path below the site root, e.g. api/sim/ (repeatable)")
    args = ap.parse_args(argv)
    chromium = find_chromium(args.chromium)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build_site(site)
        server, port = serve(site)
        try:
            for page in args.page or PAGES:
                name = (page.strip("/").replace("/", "_") or "index") + ".png"
                with tempfile.TemporaryDirectory() as profile:
                    shoot(chromium, f"http://127.0.0.1:{port}/{page}", args.out_dir / name, args.width,
                          args.height, Path(profile))
                print(args.out_dir / name)
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
