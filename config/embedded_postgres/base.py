from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base

from .server import socket_dir


class DatabaseWrapper(base.DatabaseWrapper):
    """PostgreSQL backend whose server is started on the first connection."""

    def get_connection_params(self) -> dict[str, Any]:
        if not self.settings_dict.get("HOST"):
            self.settings_dict["HOST"] = socket_dir(
                Path(self.settings_dict["EMBEDDED_DATA_ROOT"]),
                shared_buffers_mb=self.settings_dict["EMBEDDED_SHARED_BUFFERS_MB"],
            )
        return super().get_connection_params()
