import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from werkzeug.middleware.proxy_fix import ProxyFix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def application_behind(proxies: int):
    """The Django application, with REMOTE_ADDR set to the client's address when `proxies` trusted proxies
    append to X-Forwarded-For. Entries left of theirs are the client's own claims and are ignored; a request
    with fewer entries than that keeps its peer address."""
    application = get_wsgi_application()
    # X-Forwarded-Proto is Django's own SECURE_PROXY_SSL_HEADER; only the address is taken here.
    return ProxyFix(application, x_for=proxies, x_proto=0) if proxies else application


application = application_behind(settings.TRUSTED_PROXY_COUNT)
