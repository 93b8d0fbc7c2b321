from django import forms
from django.conf import settings


class TurnForm(forms.Form):
    content = forms.CharField(
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Say something…", "autofocus": True}),
        error_messages={"required": "Say something first: an empty message was not sent."},
    )

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        limit = settings.CHAT_MAX_TURN_CHARS
        if len(content) > limit:
            raise forms.ValidationError(
                f"Messages are limited to {limit:,} characters; this one has {len(content):,}. Nothing was sent."
            )
        return content


class DeleteAccountForm(forms.Form):
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        label="Your password",
        error_messages={"required": "Enter your password to confirm."},
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password; nothing was deleted.")
        return password
