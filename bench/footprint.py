"""The footprint of a large catalog of real tools (issue #42.1), driven by bench/footprint.sh.

GitHub's REST description, imported by `toolhost import openapi` (1,223 tools: long
descriptions, many inputs), is replicated to N tools in toolkits of at most 1,223 (`Aa`, `Ab`, ...,
`Dd` at 100,000: 82 toolkits), each tool's name prefixed with its copy (`ab_meta_root`). The release
binary serves it on 127.0.0.1 against a local upstream that answers every request with `{}` (so the call ends in
the 502 of an answer without the declared outputs, after the whole call path);
the script reads, from /proc, the peak RSS after a listing page, a signature, a call and a
search; then after `/openapi.json` and the WoA document; then after a reload (SIGHUP). Bytes
per tool are (peak RSS - peak RSS of an empty catalog) / N. Prints one Markdown row per N.

Usage: footprint.py TOOLHOST GITHUB.json WORKDIR N...
"""

import atexit
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

binary, spec, work, sizes = sys.argv[1], sys.argv[2], sys.argv[3], [int(n) for n in sys.argv[4:]]


class Upstream(http.server.BaseHTTPRequestHandler):
    def answer(self):
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    def log_message(self, *args):
        pass


servers = []
atexit.register(lambda: [s.process.kill() for s in servers])
upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
threading.Thread(target=upstream.serve_forever, daemon=True).start()
base_url = f"http://127.0.0.1:{upstream.server_address[1]}"

imported = os.path.join(work, "github")
subprocess.run([binary, "import", "openapi", spec, "--out", imported, "--base-url", base_url],
               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
text = open(os.path.join(imported, "git_hub.yaml")).read()
head, body = text.split("    tools:\n", 1)
# One block per tool: from its `# METHOD /path` comment to the next one.
blocks = re.split(r"(?m)^(?=      # )", body)
blocks = [b for b in blocks if b.strip()]
names = [re.search(r"(?m)^      - name: (\S+)", b).group(1) for b in blocks]
per_kit = len(blocks)


def catalog(n):
    out = os.path.join(work, f"catalog-{n}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    copies = (n + per_kit - 1) // per_kit
    for k in range(copies):
        take = min(per_kit, n - k * per_kit)
        # Two letters keep `{toolkit}_{name}` within OTC's 63 characters, as `GitHub_` did.
        copy = chr(97 + k // 26) + chr(97 + k % 26)
        prefixed = [re.sub(r"(?m)^      - name: ", f"      - name: {copy}_", b, count=1) for b in blocks[:take]]
        kit = head.replace("  - name: GitHub\n", f"  - name: {copy.capitalize()}\n", 1)
        with open(os.path.join(out, f"kit{k:02}.yaml"), "w") as f:
            f.write(kit + "    tools:\n" + "".join(prefixed))
    return out


def status(pid, key):
    return int(re.search(rf"{key}:\s+(\d+) kB", open(f"/proc/{pid}/status").read()).group(1)) * 1024


class Server:
    def __init__(self, catalog_dir):
        self.started = time.monotonic()
        args = [binary, "serve", "--listen", "127.0.0.1:0", "--ui", "false", "--log", "info"]
        if catalog_dir:
            args += ["--catalog", catalog_dir]
        self.process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        servers.append(self)
        self.address = None
        for line in self.process.stderr:
            found = re.search(r"address=(127\.0\.0\.1:\d+)", line)
            if found:
                self.address = found.group(1)
                break
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()
        self.ready = None
        while self.address and time.monotonic() - self.started < 300:
            try:
                if urllib.request.urlopen(f"http://{self.address}/readyz", timeout=1).status == 200:
                    self.ready = time.monotonic() - self.started
                    break
            except Exception:
                time.sleep(0.005)
        host, port = self.address.split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=300)

    def request(self, method, path, body=None, headers=None):
        self.connection.request(method, path, body=body, headers=headers or {})
        response = self.connection.getresponse()
        return response.status, response.read()

    def timed(self, path, times=21):
        """The median time of `times` GETs of `path` on one connection, in milliseconds."""
        took = []
        for _ in range(times):
            started = time.perf_counter()
            code, _ = self.request("GET", path)
            took.append((time.perf_counter() - started) * 1000)
            assert code == 200, (path, code)
        return statistics.median(took)

    def peak(self):
        return status(self.process.pid, "VmHWM")

    def rss(self):
        return status(self.process.pid, "VmRSS")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


empty = Server(None)
empty.request("GET", "/nact/tools?pageLimit=50")
empty_peak = empty.peak()
empty.stop()

print(f"upstream {base_url}; {per_kit} tools in GitHub's import; empty catalog's peak RSS "
      f"{empty_peak / 2**20:.1f} MiB", file=sys.stderr)
print("| tools | start to ready | page of 50 | signature | call | search | peak RSS: after those | bytes per tool "
      "| /openapi.json, WoA (time, size) | peak after them | peak after a reload |")
print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for n in sizes:
    server = Server(catalog(n))
    page = server.timed("/nact/tools?pageLimit=50")
    signature = server.timed(f"/nact/tools/aa_{names[1]}")
    started = time.perf_counter()
    code, answer = server.request("POST", "/nact/tools/aa_meta_root:invoke", b"{}", {"content-type": "application/json"})
    call = (time.perf_counter() - started) * 1000
    # The stub's `{}` lacks the outputs GitHub's answer has: 502, after the whole call path.
    assert code in (200, 502), (code, answer[:300])
    code, _ = server.request("GET", "/nact/tools?q=add%20a%20label%20to%20an%20issue&pageLimit=5")
    search = server.timed("/nact/tools?q=add%20a%20label%20to%20an%20issue&pageLimit=5", 5) if code == 200 else None
    peak = server.peak()
    documents = []
    for path in ["/openapi.json", "/.well-known/woa.json"]:
        started = time.perf_counter()
        code, document = server.request("GET", path)
        assert code == 200, (path, code)
        documents.append(f"{(time.perf_counter() - started):.1f} s, {len(document) / 1e6:.0f} MB")
        del document
    documents_peak = server.peak()
    reloads = server.request("GET", "/readyz")[1]
    os.kill(server.process.pid, signal.SIGHUP)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.request("GET", "/readyz")[1] == reloads:
        time.sleep(0.2)
    time.sleep(0.5)
    server.request("GET", "/nact/tools?pageLimit=50")
    server.request("GET", f"/nact/tools/aa_{names[1]}")
    reload_peak = server.peak()
    server.stop()
    mib = lambda b: f"{b / 2**20:,.0f} MiB"
    print(f"| {n:,} | {server.ready:.1f} s | {page:.2f} ms | {signature:.2f} ms | {call:.1f} ms | "
          f"{'-' if search is None else f'{search:.1f} ms'} | {mib(peak)} | {(peak - empty_peak) / n / 1024:,.1f} KB | "
          f"{'; '.join(documents)} | {mib(documents_peak)} | {mib(reload_peak)} |", flush=True)
