"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests (no internet).

    with ScriptedLLMServer([{"status": 429}, {"content": "```cpp ...```"}]) as srv:
        ChatOpenAI(base_url=srv.url, ...)

Each request to ``/v1/chat/completions`` takes the next step of the script (the last step
repeats): ``{"status": 429 | 500 | ...}`` answers that error; ``{"sleep": S, ...}`` waits S
seconds first; ``{"content": text, "prompt_tokens": P, "completion_tokens": C,
"cached_tokens": K}`` answers a completion with that ``usage``. ``srv.requests`` holds the
request bodies received.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedLLMServer:
    def __init__(self, script: list[dict[str, Any]]):
        self.script = list(script)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _next(self, body: dict) -> dict:
        with self._lock:
            self.requests.append(body)
            i = len(self.requests) - 1
            return self.script[min(i, len(self.script) - 1)]

    def _handler(self):
        srv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _send(self, code: int, payload: dict, headers: dict | None = None):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                step = srv._next(body)
                if step.get("sleep"):
                    time.sleep(step["sleep"])
                status = step.get("status", 200)
                if status != 200:
                    return self._send(status, {"error": {"message": f"scripted {status}", "type": "scripted"}},
                                      {"retry-after-ms": "20", "retry-after": "0"})
                usage = {"prompt_tokens": step.get("prompt_tokens", 100),
                         "completion_tokens": step.get("completion_tokens", 20),
                         "prompt_tokens_details": {"cached_tokens": step.get("cached_tokens", 0)}}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                self._send(200, {
                    "id": f"chatcmpl-{len(srv.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": step.get("content", "")}}],
                    "usage": usage})

        return H

    def __enter__(self) -> "ScriptedLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
