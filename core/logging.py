"""Log records carry the id of the request they belong to."""

from __future__ import annotations

import logging

from core.middleware import request_id


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True
