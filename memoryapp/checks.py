"""System checks for memory settings that can only be verified once the apps are loaded."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register
from django.utils.module_loading import import_string


@register()
def extractor_is_importable(app_configs, **kwargs) -> list[Error]:  # noqa: ARG001 - Django's signature
    """MEMORY_EXTRACTOR, when set, must name a callable: otherwise the first memory write would fail."""
    path = settings.MEMORY_EXTRACTOR
    if not path:
        return []
    try:
        extractor = import_string(path)
    except ImportError as exc:
        return [Error(f"MEMORY_EXTRACTOR={path!r} cannot be imported: {exc}", id="memoryapp.E001")]
    if not callable(extractor):
        return [Error(f"MEMORY_EXTRACTOR={path!r} is not callable", id="memoryapp.E002")]
    return []
