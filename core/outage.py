"""What the app answers while its database cannot be reached.

The database going away (a restart, a failover, a network cut) is not a bug in the request:
the API answers JSON 503 with `Retry-After`, as it does when the model is unavailable, and the
pages a short plain page that says the service is briefly unavailable. Neither touches the
database (no session, no user, no template context).
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

# What a lost or refused database connection raises (psycopg's errors, as Django wraps them).
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5
DETAIL = "The service is briefly unavailable: its database cannot be reached. Please try again in a few seconds."

_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Briefly unavailable</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<h1>Briefly unavailable</h1>
<p>The service cannot reach its database right now. Nothing you saved is lost. Please try again in a few
seconds.</p>
</body>
</html>
"""


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def unavailable(request: HttpRequest, *, detail: str = DETAIL, **extra: object) -> HttpResponse:
    """503 with `Retry-After`: JSON under /api/ (`detail`, and any `extra` fields), else the plain page."""
    if is_api(request):
        response: HttpResponse = JsonResponse({"detail": detail, **extra}, status=503)
    else:
        response = HttpResponse(_PAGE, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
