#!/usr/bin/env python3
"""gpuplane Kueue metrics relay: Kueue's HTTPS, authenticated `/metrics` served again as plain HTTP.

Why: the AWS managed collector of Amazon Managed Service for Prometheus scrapes plain HTTP targets with its own
bearer token and takes no `tls_config`, and Kueue v0.19.2 serves its metrics only over HTTPS with a certificate
it makes itself in memory and with authentication and authorization on every request (cmd/kueue/main.go:
`SecureServing: true`, `FilterProvider: filters.WithAuthenticationAndAuthorization`, hard-coded; there is no
second, plain listener). This relay, one small pod in Kueue's namespace, asks Kueue's metrics Service with the
token of its own service account (allowed `get` on the URL `/metrics` and nothing else) and answers `GET
/metrics` on a plain port that only the collector is meant to reach (docs/operations.md, "Kueue's metrics").

It forwards nothing of the caller's request (no headers, no path, no query): whoever reaches the port gets the
metrics text and never the token. Kueue's certificate is self-signed in memory (controller-runtime's metrics
server without a certificate directory), so there is no CA to check it against: the hop to Kueue is
encrypted, not authenticated, exactly as the Kueue chart's own ServiceMonitor (`insecureSkipVerify`).

Runs in the pinned python slim image with the standard library only. Inputs, from the environment:
  RELAY_UPSTREAM     Kueue's metrics URL (https://...:8443/metrics)
  RELAY_PORT         the plain HTTP port to listen on; default 8080
  RELAY_TOKEN_FILE   the bearer token, read again for every request (projected tokens rotate); default the
                     service account's token file
  RELAY_TIMEOUT_SECONDS  for the whole upstream request; default 10
`GET /metrics`: Kueue's answer (200) or 502 with one line saying why; `GET /healthz`: 200 (the probe);
anything else 404 (other paths) or 405 (other methods).
"""

from __future__ import annotations

import contextlib
import http.server
import os
import ssl
import sys
import urllib.error
import urllib.request

DEFAULT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def _unverified_tls() -> ssl.SSLContext:
    """TLS without checking the peer: Kueue's certificate is self-signed in memory, with no CA to trust."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Relay(http.server.BaseHTTPRequestHandler):
    """One request: `/metrics` fetched from Kueue with our token, `/healthz` answered locally."""

    upstream = ""
    token_file = DEFAULT_TOKEN_FILE
    timeout = 10.0
    tls = _unverified_tls()
    server_version = "gpuplane-kueue-metrics-relay"

    def do_GET(self) -> None:
        """Serve `/metrics` (Kueue's text) and `/healthz`; 404 for anything else."""
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._answer(200, b"ok\n", "text/plain; charset=utf-8")
        elif path == "/metrics":
            self._metrics()
        else:
            self._answer(404, b"only /metrics and /healthz\n", "text/plain; charset=utf-8")

    def _metrics(self) -> None:
        try:
            with open(self.token_file, encoding="utf-8") as handle:
                token = handle.read().strip()
        except OSError as exc:
            self._answer(502, f"cannot read the token file {self.token_file}: {exc.strerror}\n".encode(), "text/plain")
            return
        request = urllib.request.Request(self.upstream, headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.tls) as answer:
                body = answer.read()
                content_type = answer.headers.get("Content-Type", "text/plain; version=0.0.4")
        except urllib.error.HTTPError as exc:
            self._answer(502, f"Kueue answered {exc.code} {exc.reason}\n".encode(), "text/plain")
        except (OSError, ValueError) as exc:
            self._answer(502, f"Kueue did not answer: {exc}\n".encode(), "text/plain")
        else:
            self._answer(200, body, content_type)

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        """Like GET, without the body."""
        self.do_GET()

    def _refuse(self) -> None:
        self._answer(405, b"read-only: GET /metrics\n", "text/plain; charset=utf-8")

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Only failures are logged: a scrape every 30 s would otherwise fill the log."""
        if isinstance(code, int) and code < 400:  # http.HTTPStatus is an int
            return
        super().log_request(code, size)


def main() -> int:
    """Serve until killed; 2 on bad input."""
    upstream = os.environ.get("RELAY_UPSTREAM", "")
    if not upstream.startswith("https://"):
        sys.stderr.write(f"RELAY_UPSTREAM='{upstream}' is not an https:// URL (Kueue's metrics Service)\n")
        return 2
    try:
        port = int(os.environ.get("RELAY_PORT", "8080"))
        timeout = float(os.environ.get("RELAY_TIMEOUT_SECONDS", "10"))
    except ValueError as exc:
        sys.stderr.write(f"RELAY_PORT / RELAY_TIMEOUT_SECONDS: {exc}\n")
        return 2
    Relay.upstream = upstream
    Relay.token_file = os.environ.get("RELAY_TOKEN_FILE", DEFAULT_TOKEN_FILE)
    Relay.timeout = timeout
    server = http.server.ThreadingHTTPServer(("", port), Relay)
    sys.stderr.write(f"relaying {upstream} on :{server.server_address[1]}/metrics\n")
    sys.stderr.flush()
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
