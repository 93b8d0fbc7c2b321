"""The account page: the password changed in the app's own page, the API token created (its key
shown once) and revoked, the sessions counted, each of them for the signed-in user only."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.api.test_sign_out_everywhere import PASSWORD, dana, signed_in  # noqa: F401 - fixture
from tests.api.test_tokens import memories, obtain

pytestmark = pytest.mark.django_db


def test_the_header_links_to_the_account_page_which_speaks_of_this_user_only(dana, bob):  # noqa: F811
    laptop, _phone = signed_in("dana", PASSWORD), signed_in("dana", PASSWORD)
    signed_in("bob", "bob-password-1")
    page = laptop.get(reverse("chat:conversation_list")).content.decode()
    assert f'href="{reverse("account")}"' in page
    account = laptop.get(reverse("account"))
    assert account.status_code == 200 and "no-store" in account["Cache-Control"]
    text = account.content.decode()
    assert "Signed in as <strong>dana</strong>" in text
    assert "signed in on 2 browser sessions" in text  # dana's two, not bob's
    assert "No API token is active" in text
    assert Client().get(reverse("account")).status_code == 302  # signed out: to the sign-in page


def test_a_token_is_created_shown_once_used_and_revoked(dana):  # noqa: F811
    laptop = signed_in("dana", PASSWORD)
    created = laptop.post(reverse("account"), {"action": "create-token"}).content.decode()
    key = Token.objects.get(user=dana).key
    assert key in created and "shown this once" in created
    assert key not in laptop.get(reverse("account")).content.decode()  # never again
    assert memories(key).status_code == 200

    response = laptop.post(reverse("account"), {"action": "revoke-token"})
    assert response.status_code == 302
    assert not Token.objects.filter(user=dana).exists()
    assert memories(key).status_code == 401
    assert "No API token is active" in laptop.get(reverse("account")).content.decode()


def test_revoking_here_leaves_another_users_token(dana, bob):  # noqa: F811
    bobs = Token.objects.create(user=bob).key
    signed_in("dana", PASSWORD).post(reverse("account"), {"action": "revoke-token"})
    assert memories(bobs).status_code == 200


def test_the_password_is_changed_in_the_apps_own_page(dana):  # noqa: F811
    laptop, phone = signed_in("dana", PASSWORD), signed_in("dana", PASSWORD)
    token = obtain()["token"]
    page = laptop.get(reverse("password_change")).content.decode()
    assert "Change your password" in page and "Django administration" not in page
    new = "a-new-long-passphrase-77"
    response = laptop.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
    )
    assert response.status_code == 302
    done = laptop.get(response["Location"]).content.decode()
    assert "Password changed" in done and "Django administration" not in done
    assert laptop.get(reverse("account")).status_code == 200  # this browser stays signed in
    assert phone.get(reverse("account")).status_code == 302  # the other session is signed out
    assert memories(token).status_code == 401  # and the token revoked
    wrong = laptop.post(
        reverse("password_change"), {"old_password": "nope", "new_password1": new, "new_password2": new}
    )
    assert wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
