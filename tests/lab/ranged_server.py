"""A loopback HTTP server that answers Range requests for files a test writes, as the Hub's
resolve URLs do (206 with Content-Range), and counts the bytes it sends."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class RangedServer:
    """Serves ``root``/<model>/resolve/<revision>/<file> at ``self.url``; ``sent`` counts
    body bytes; ``ranges`` honours Range headers (False: answers 200 with the whole file)."""

    def __init__(self, root: Path, ranges: bool = True) -> None:
        self.root, self.ranges, self.sent = root, ranges, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                parts = self.path.strip("/").split("/")
                if "resolve" not in parts:
                    return self.send_error(404)
                at = parts.index("resolve")
                path = owner.root.joinpath(*parts[:at], *parts[at + 2 :])
                if not path.is_file():
                    return self.send_error(404)
                size = path.stat().st_size
                header = self.headers.get("Range")
                with path.open("rb") as handle:
                    if header and owner.ranges:
                        start, stop = (int(x) for x in header.split("=")[1].split("-"))
                        handle.seek(start)
                        body = handle.read(stop - start + 1)
                        self.send_response(206)
                        self.send_header("Content-Range", f"bytes {start}-{stop}/{size}")
                    else:
                        body = handle.read()
                        self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                owner.sent += len(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
