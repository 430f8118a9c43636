"""Debian's nginx as a real reverse proxy in the browser tests, run by the test (no root, no system config): a
configuration written into the work folder around the documentation's own snippets (Examples/nginx/*.conf, included as
they are, only their upstream address pointed at the process under test). Also what it shares with the other servers
the tests run in a folder of their own (openid.py's Apache): a free loopback port, the wait for it to listen, the
logs."""

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import fixtures

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "Examples" / "nginx"


def find_nginx():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def snippet(name, upstream):
    """Examples/nginx/<name> with its upstream (`proxy_pass http://127.0.0.1:<the default port>`, as the documentation shows
    it) pointed at `upstream`; also checks that the documentation (docs/: the MobileFirst and KAAZING guides) shows the
    file exactly as it is (the documented snippet is the tested file)."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    if not any(text in page.read_text(encoding="utf-8") for page in pages):
        raise RuntimeError(f"no page of docs/ shows Examples/nginx/{name} as it is: update one or the other")
    pointed, count = re.subn(r"proxy_pass http://127\.0\.0\.1:\d+;", f"proxy_pass http://{upstream};", text)
    if count != 1:
        raise RuntimeError(f"Examples/nginx/{name} has {count} loopback proxy_pass lines; one is pointed at the server under test")
    return pointed


class FolderServer:
    """A server the test runs (`self.process`) on the loopback port `self.port`, its error.log and access.log in
    `self.folder`, until `stop()`."""

    def wait_listening(self, name, start_timeout, output=lambda: ""):
        """Waits (at most `start_timeout` s) until the port takes connections; raises RuntimeError with the error log
        (after `output()`, what the process printed, if it exited) when the process exits first or time runs out."""
        deadline = time.monotonic() + start_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{name} exited with status {self.process.returncode}:\n"
                                   f"{output()}{self.error_log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not listen within {start_timeout} s:\n{self.error_log()}")
                time.sleep(0.1)

    def error_log(self):
        path = self.folder / "error.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def access_log(self):
        path = self.folder / "access.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def stop(self):
        fixtures.terminate(self.process)


class Nginx(FolderServer):
    """nginx listening on a free loopback port with `server_body` (text inside its `server { }` block), until
    `stop()`. Logs in `folder`."""

    def __init__(self, folder, server_body, start_timeout=15):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        binary = find_nginx()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        temp = self.folder / "temp"
        temp.mkdir(exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""   # workers keep the tester's rights to the files
        config = f"""{user}worker_processes 1;
daemon off;
pid {self.folder}/nginx.pid;
error_log {self.folder}/error.log info;
events {{ worker_connections 512; }}
http {{
    access_log {self.folder}/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    types {{ text/html html; application/javascript js; text/css css; application/json json; image/png png; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
{server_body}
    }}
}}
"""
        self.config = self.folder / "nginx.conf"
        self.config.write_text(config, encoding="utf-8")
        self.process = subprocess.Popen([binary, "-p", str(self.folder), "-e", str(self.folder / "error.log"), "-c", str(self.config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.wait_listening("nginx", start_timeout)
