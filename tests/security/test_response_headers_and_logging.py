"""Every response carries its request id and, for a signed-in user, no-store; errors reach stderr."""

import io
import logging
import sys

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory

from core.logging import RequestIdFilter
from core.middleware import RequestIdMiddleware

pytestmark = pytest.mark.django_db


def test_every_response_carries_its_request_id():
    first = Client().get("/accounts/login/")["X-Request-ID"]
    second = Client().get("/accounts/login/")["X-Request-ID"]
    assert len(first) == 16 and first != second


def test_a_server_error_is_written_to_stderr_with_the_request_id_and_traceback(settings):
    assert settings.DEBUG is False  # as in production
    handlers = logging.getLogger("django.request").handlers
    (handler,) = [h for h in handlers if any(isinstance(f, RequestIdFilter) for f in h.filters)]
    assert handler.stream is sys.stderr or handler.stream.name == "<stderr>"
    written = io.StringIO()
    original = handler.setStream(written)  # the configured handler, filter and format; read back here

    def failing_view(request):
        try:
            raise RuntimeError("the database went away")
        except RuntimeError:
            logging.getLogger("django.request").error("Internal Server Error: %s", request.path, exc_info=True)
        return HttpResponse(status=500)

    try:
        response = RequestIdMiddleware(failing_view)(RequestFactory().get("/memories/"))
    finally:
        handler.setStream(original)
    err = written.getvalue()
    assert f"[request {response['X-Request-ID']}] Internal Server Error: /memories/" in err
    assert "Traceback" in err and "RuntimeError: the database went away" in err


def test_responses_to_a_signed_in_user_are_never_cached(alice_client, alice):
    from rest_framework.test import APIClient

    for url in ["/memories/", "/memories/export/", "/"]:
        assert "no-store" in alice_client.get(url)["Cache-Control"], url
    api = APIClient()
    api.force_authenticate(alice)
    assert "no-store" in api.get("/api/memories/")["Cache-Control"]
