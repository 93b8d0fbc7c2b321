#!/usr/bin/env python
import os
import signal
import sys


def _exit_on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
    sys.exit(128 + signum)


def main() -> None:
    # SIGTERM runs atexit handlers too, so the embedded PostgreSQL is stopped by the last
    # process that leaves it, not left running behind a terminated server.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
