"""Gradio's front-end files compressed once per server (ui/web/assets.py), on the real app and on
Gradio's own file route and Brotli middleware."""

from __future__ import annotations

from pathlib import Path

import brotli
import httpx
import pytest
from gradio.brotli_middleware import BrotliMiddleware
from starlette.applications import Starlette
from starlette.responses import FileResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from tests.browser_support import start_server
from ui.web.assets import GRADIO_ASSETS, CachedBundle, mend_status_tracker, mended_chunks


def _largest_script() -> Path:
    return max(GRADIO_ASSETS.glob("*.js"), key=lambda p: p.stat().st_size)


class _Counted:
    """Gradio's file route behind its Brotli middleware, counting the requests that reach it."""

    def __init__(self, mended: dict[str, bytes] | None = None) -> None:
        self.calls: list[str] = []

        async def bundle(request):
            self.calls.append(request.url.path)
            path = GRADIO_ASSETS / request.path_params["name"]
            return FileResponse(path) if path.is_file() else Response("not found", status_code=404)

        async def page(request):
            self.calls.append(request.url.path)
            return Response("x" * 1000, media_type="text/html")

        inner = Starlette(routes=[Route("/assets/{name}", bundle), Route("/page.html", page)])
        self.app = CachedBundle(BrotliMiddleware(inner), mended=mended)


@pytest.fixture
def counted() -> _Counted:
    return _Counted()


def test_a_bundle_file_is_compressed_once_per_encoding_and_served_whole(counted: _Counted) -> None:
    script = _largest_script()
    client = TestClient(counted.app)
    path = f"/assets/{script.name}"
    replies = [client.get(path, headers={"accept-encoding": "br"}) for _ in range(3)]
    plain = client.get(path, headers={"accept-encoding": "identity"})
    assert counted.calls == [path, path]  # one per compression, the rest replayed
    for reply in replies:  # httpx undoes the Brotli: what a browser gets
        assert reply.status_code == 200 and reply.headers["content-encoding"] == "br"
        assert reply.content == script.read_bytes()
    assert plain.content == script.read_bytes() and "content-encoding" not in plain.headers


def test_a_missing_file_a_range_and_every_other_path_pass_through_each_time(counted: _Counted) -> None:
    client = TestClient(counted.app)
    script = f"/assets/{_largest_script().name}"
    for _ in range(2):
        assert client.get("/assets/no-such-file.js").status_code == 404
        assert client.get("/page.html").status_code == 200
        assert client.get(script, headers={"range": "bytes=0-9"}).status_code in (200, 206)
    assert counted.calls.count("/assets/no-such-file.js") == 2
    assert counted.calls.count("/page.html") == 2
    assert counted.calls.count(script) == 2


def _tracker() -> tuple[str, bytes]:
    """The installed Gradio's status tracker chunk, mended: its path and body."""
    [(path, body)] = mended_chunks().items()
    return path, body


def test_the_status_trackers_timer_stops_once_its_element_is_gone() -> None:
    path, body = _tracker()
    shipped = (GRADIO_ASSETS / path.rsplit("/", 1)[1]).read_text(encoding="utf-8")
    mended = body.decode("utf-8")
    # one loop, changed in one place: it asks for the next frame only while its element is there
    [loop] = [line for line in mended.split("function ") if "performance.now()-" in line and "/1e3)," in line]
    assert ".isConnected)&&" in loop and "!==null&&" in loop
    assert len(mended) - len(shipped) == len("U!==null&&(!U||U.isConnected)&&")
    assert mended.replace("U!==null&&(!U||U.isConnected)&&", "") == shipped
    # another file, or the chunk already mended, is left as it is
    assert mend_status_tracker(mended) is None
    assert mend_status_tracker(_largest_script().read_text(encoding="utf-8")) is None


def test_the_mended_file_is_answered_whole_in_every_encoding_and_never_gradios(counted: _Counted) -> None:
    path, body = _tracker()
    client = TestClient(_Counted(mended={path: body}).app)
    for headers in (
        {"accept-encoding": "br"},
        {"accept-encoding": "gzip"},
        {"accept-encoding": "identity"},
        {"accept-encoding": "br", "if-none-match": '"gradios-own"'},  # a browser holding Gradio's copy
        {"accept-encoding": "identity", "range": "bytes=0-9"},
    ):
        reply = client.get(path, headers=headers)
        assert reply.status_code == 200 and reply.content == body, headers
        assert reply.headers["content-type"] == "text/javascript; charset=utf-8"
        assert "etag" not in reply.headers and "last-modified" not in reply.headers
        assert reply.headers.get("content-encoding", "identity") == headers["accept-encoding"]


def test_the_served_app_replays_a_bundle_file_brotli_compressed_as_gradio_sent_it(tmp_path: Path) -> None:
    server = start_server(tmp_path / "assets.duckdb")
    try:
        script = _largest_script()
        url = f"{server.url}/assets/{script.name}"
        with httpx.Client(timeout=30) as client:
            assert client.get(url).status_code == 401  # the guard still decides who reaches the bundle
            signed = client.post(
                f"{server.url}/login",
                data={"username": "ada", "password": "ada-password"},
                headers={"origin": server.url},
            )
            assert signed.status_code in (200, 303), signed.text
            raw = []
            for _ in range(2):
                with client.stream("GET", url, headers={"accept-encoding": "br"}) as reply:
                    assert reply.status_code == 200 and reply.headers["content-encoding"] == "br"
                    raw.append(b"".join(reply.iter_raw()))
                    length = reply.headers.get("content-length")
            tracker, mended = _tracker()
            assert client.get(f"{server.url}{tracker}").content == mended  # the mended status tracker
        assert int(length) == len(raw[1])  # the replay is one body, its length known
        assert raw[0] == raw[1]
        assert brotli.decompress(raw[1]) == script.read_bytes()
    finally:
        server.stop()
