from django import forms
from django.conf import settings


class MemoryTextForm(forms.Form):
    text = forms.CharField(
        strip=True,
        max_length=settings.MEMORY_MAX_FACT_CHARS,
        widget=forms.TextInput(attrs={"aria-label": "Memory text"}),
        error_messages={
            "required": "A memory cannot be empty; delete it instead.",
            "max_length": "A memory is at most %(limit_value)d characters (this has %(show_value)d).",
        },
    )


class ForgetAllForm(forms.Form):
    confirm = forms.BooleanField(
        required=True,
        label="I understand that the assistant will stop using everything it remembers about me.",
        error_messages={"required": "Tick the box to confirm."},
    )
