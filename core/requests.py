"""Requests as the views see them once the sign-in is checked: their `user` is a real account.

`login_required` (pages) and DRF's IsAuthenticated (the API, its default permission) let no
anonymous request through, so a view that takes these types reads `request.user` as a `User`.
Types only: nothing here runs at request time.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request


class SignedInRequest(HttpRequest):
    user: User  # narrower than HttpRequest's, after login_required
    htmx: HtmxDetails  # set by django_htmx's middleware on every request


class SignedInApiRequest(Request):
    user: User  # narrower than Request's, after IsAuthenticated
