"""API token lifetime: tokens expire, a password change revokes them, and a holder can revoke its own.

DRF's `authtoken` keeps one token per user with its creation time, which is all a lifetime needs,
so it stays (no second token library): expiry is checked on every authentication here, the
password signal below revokes, and the API's DELETE on the token endpoint revokes on request.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import pre_save
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed


def token_lifetime() -> timedelta:
    return timedelta(days=settings.API_TOKEN_DAYS)


def token_expired(token: Token) -> bool:
    return token.created < timezone.now() - token_lifetime()


def token_for(user) -> Token:
    """The user's live token, a new one when there is none or it has expired."""
    token = Token.objects.filter(user=user).first()
    if token is not None and token_expired(token):
        Token.objects.filter(user=user, pk=token.pk).delete()
        token = None
    return token or Token.objects.create(user=user)


def token_revoke(user) -> int:
    """Revoke every API token of the user; returns how many."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted


class ExpiringTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, refused once the token is older than API_TOKEN_DAYS."""

    def authenticate_credentials(self, key: str):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            Token.objects.filter(user=user, pk=token.pk).delete()
            raise AuthenticationFailed("Token expired: request a new one with your username and password.")
        return user, token


def _revoke_on_password_change(sender, instance, update_fields=None, **kwargs) -> None:
    """Whatever changes a password (the page, the admin, `changepassword`), its tokens go."""
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password:
        token_revoke(instance)


def connect() -> None:
    pre_save.connect(_revoke_on_password_change, sender=get_user_model(), dispatch_uid="core.tokens.password")
