"""Static files with debug off: served by the app itself (WhiteNoise), not a 404."""

import pytest
from django.test import Client


@pytest.mark.parametrize("name", ["app.css", "app.js", "favicon.svg"])
def test_static_files_are_served_with_debug_off(settings, name):
    settings.DEBUG = False
    response = Client().get(f"/static/{name}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content if response.streaming else [response.content])
    assert "max-age" in response.headers.get("Cache-Control", "")


def test_a_missing_static_file_is_a_404(settings):
    settings.DEBUG = False
    assert Client().get("/static/no-such-file.css").status_code == 404
