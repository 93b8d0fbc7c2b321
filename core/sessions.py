"""Signing out everywhere: every browser session of a user and their API token, ended at once."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from core.models import SignedInSession
from core.tokens import token_revoke


def _record(sender, request, user, **kwargs) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    if session.session_key is None:
        session.save()
    SignedInSession.objects.update_or_create(session_id=session.session_key, defaults={"user": user})


def signed_in_sessions(*, user) -> int:
    """How many unexpired browser sessions the user is signed in with."""
    return SignedInSession.objects.filter(user=user, session__expire_date__gt=timezone.now()).count()


@transaction.atomic
def sign_out_everywhere(*, user) -> int:
    """End every session the user signed in with (this one too) and revoke their API token;
    returns how many sessions ended."""
    keys = SignedInSession.objects.filter(user=user).values("session_id")
    _, deleted = Session.objects.filter(session_key__in=keys).delete()  # their rows here go by cascade
    token_revoke(user)
    return deleted.get(Session._meta.label, 0)


def connect() -> None:
    user_logged_in.connect(_record, dispatch_uid="core.sessions.record")
