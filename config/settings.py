"""Settings for the memory app. One file; the environment decides the rest.

Without DATABASE_URL the app runs on an embedded PostgreSQL with pgvector in
`.data/postgres`; without a model endpoint it embeds with a local ONNX model and
extracts facts with built-in rules. Set the variables below and the same code is
the production system.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config.env import env_bool, env_choice, env_float, env_int, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORY_DATA_DIR", str(BASE_DIR / ".data")))

DEBUG = env_bool("DJANGO_DEBUG", True)
BEHIND_TLS_PROXY = env_bool("DJANGO_BEHIND_TLS_PROXY", False)
# How many proxies in front of the app append to X-Forwarded-For: the client's address is the entry
# that many places from the right (config/wsgi.py); anything further left was written by the client.
# 0 takes the peer address (REMOTE_ADDR) as the client's.
TRUSTED_PROXY_COUNT = env_int("DJANGO_TRUSTED_PROXIES", 1 if BEHIND_TLS_PROXY else 0, minimum=0)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if SECRET_KEY is None:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug-mode"  # noqa: S105
ALLOWED_HOSTS = (env_str("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost") or "").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in (env_str("DJANGO_CSRF_TRUSTED_ORIGINS", "") or "").split(",") if o]

# Transport and cookie hardening: on whenever debug is off (`manage.py check --deploy` passes).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)
    if BEHIND_TLS_PROXY:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_tasks_db",
    "core",
    "memoryapp",
    "chat",
    # The tools, each owning its management commands: the quality harness and the benchmarks.
    "eval",
    "bench",
]

MIDDLEWARE = [
    "core.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files in every mode, debug off included, from one process: no separate file server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.middleware.RejectNulMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.middleware.NoStoreForUsersMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# Django's built-in Content-Security-Policy, enforced in every mode so tests and the browser
# see what production sees: scripts and styles only from this origin, no inline code.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _default_shared_buffers_mb() -> int:
    """The embedded server's buffer pool: a quarter of the machine's memory, as PostgreSQL's own
    tuning advice has it, between its default (128 MB) and 1 GB, which holds the vector index of
    a user with 100,000 past turns with room to spare (docs/benchmarks.md)."""
    quarter = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4 // (1 << 20)
    return max(128, min(1024, quarter))


_database_url = env_str("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]]
if _database_url:
    DATABASES = {"default": dict(dj_database_url.parse(_database_url, conn_max_age=60))}
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.embedded_postgres",
            "NAME": "postgres",
            "USER": "postgres",
            "HOST": "",  # filled in by the backend once the server is up
            "EMBEDDED_DATA_ROOT": str(DATA_DIR),
            "EMBEDDED_SHARED_BUFFERS_MB": env_int(
                "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB", _default_shared_buffers_mb(), minimum=16, maximum=1 << 20
            ),
        }
    }
# Two test runs on one server must not share a test database.
DATABASES["default"]["TEST"] = {"NAME": env_str("MEMORY_TEST_DATABASE", "test_memory")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise serves what `collectstatic` gathered into STATIC_ROOT, and with its finders the
# app's few files where they live, so a checkout serves them without that step too.
WHITENOISE_USE_FINDERS = True

# --- REST API -------------------------------------------------------------------------------
# An API token lasts this long from its creation; a password change revokes it at once.
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 30, minimum=1, maximum=3650)
# Token first: an anonymous request then gets 401 with `WWW-Authenticate: Token` rather than
# a bare 403. Session auth serves the browser and keeps DRF's CSRF check.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.tokens.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Bodies are JSON (any other type is a 415; the token endpoint also takes a form); nested past
    # 64 levels is a 400 before parsing (the decoder would recurse into a 500).
    "DEFAULT_PARSER_CLASSES": ["core.api.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "core.api.PageNumberPagination",
    "PAGE_SIZE": 25,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory API",
    "DESCRIPTION": "The caller's own memories (list, trace, correct, delete, search, export) and chat.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the sidecar package's static files (no CDN), its start-up script a separate
    # request (SpectacularSwaggerSplitView) so the Content-Security-Policy needs no inline code.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The one PATCH (correct a memory) needs its text: no separate all-optional component.
    "COMPONENT_SPLIT_PATCH": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.document_shared_errors",
    ],
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# The memory write of a chat turn is a task. "worker": queued in the database and run by
# `manage.py memory_worker` (django-tasks-db's worker, kept alive through database outages: chat.worker),
# which `make run` starts beside the web
# server, so a model extractor's seconds are never spent inside the request. "immediate": run in
# the request, after its transaction commits (no worker needed; the test suite's default).
TASKS = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"},
    "worker": {"BACKEND": "django_tasks_db.DatabaseBackend"},
}
MEMORY_TASK_BACKEND = env_choice("MEMORY_TASK_BACKEND", "worker", ("worker", "immediate"))
# A write that fails on the model endpoint is tried again this many times in all, with
# back-off (2 s, 4 s, ...), when the backend can defer; then the turn offers "Retry memory".
MEMORY_WRITE_ATTEMPTS = env_int("MEMORY_WRITE_ATTEMPTS", 3, minimum=1, maximum=10)
# A memory worker renews its lease six times in this period; a write still running under a
# worker whose lease is older than this was abandoned and is queued again (chat.worker).
MEMORY_WORKER_LEASE_SECONDS = env_int("MEMORY_WORKER_LEASE_SECONDS", 60, minimum=2, maximum=3600)

LOG_LEVEL = env_choice("MEMORY_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
# Errors and tracebacks go to stderr in every mode, each line with its request's id (debug off,
# Django's own configuration would send a 500's traceback nowhere). Application logs name turn
# ids and counts, never the text of a turn or a fact.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.logging.RequestIdFilter"}},
    "formatters": {"line": {"format": "%(asctime)s %(levelname)s %(name)s [request %(request_id)s] %(message)s"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "filters": ["request_id"],
            "formatter": "line",
        }
    },
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
        "django.security": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        **{app: {"handlers": ["stderr"], "level": LOG_LEVEL} for app in ("memoryapp", "chat", "core", "eval")},
    },
}

# --- Models behind the memory --------------------------------------------------------------
# Any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server). Setting
# OPENAI_BASE_URL or OPENAI_API_KEY turns the language model on; without them the app runs
# offline with the rule-based extractor and a labelled no-model reply.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
LLM_ENABLED = bool(OPENAI_BASE_URL or OPENAI_API_KEY)
# Why the local model that `make run` serves is not running, when it is not ("it could not be
# fetched"): set by the Makefile, said on the chat page.
LOCAL_MODEL_UNAVAILABLE = env_str("LOCAL_MODEL_UNAVAILABLE")
LLM_CHAT_MODEL = env_str("MEMORY_CHAT_MODEL", "gpt-4o-mini")
LLM_EXTRACT_MODEL = env_str("MEMORY_EXTRACT_MODEL", LLM_CHAT_MODEL)
# A chat turn must not hang for minutes: the client's defaults are 600 s and 2 retries. With
# 10 s and one retry a failing endpoint answers a turn within about 21 s (about 42 s when the
# head summary is due in the same turn), after which the page offers Retry.
LLM_TIMEOUT_SECONDS = env_float("MEMORY_LLM_TIMEOUT", 10.0, minimum=0.1)
LLM_MAX_RETRIES = env_int("MEMORY_LLM_MAX_RETRIES", 1, minimum=0, maximum=10)
# The longest reply the model may write, in tokens; a longer one is cut off and says so.
CHAT_REPLY_MAX_TOKENS = env_int("CHAT_REPLY_MAX_TOKENS", 1024, minimum=16)
# Extraction runs beside the chat (in the memory worker), so it may wait longer than a reply; a
# local model on a CPU needs seconds for its first prompt.
LLM_EXTRACT_TIMEOUT_SECONDS = env_float("MEMORY_EXTRACT_TIMEOUT", 30.0, minimum=0.1)
# With MEMORY_WARM_UP, the memory worker has the model read the write path's instructions once
# when it starts (memoryapp.write.extract.warm_up), so that a server's prompt cache holds them
# before the first turn; `make run` turns it on for the local model, which reads them in about
# 40 s on 2 cores. A hosted endpoint reads them in well under a second and needs none.
MEMORY_WARM_UP = env_bool("MEMORY_WARM_UP", False)
LLM_WARM_UP_TIMEOUT_SECONDS = env_float("MEMORY_WARM_UP_TIMEOUT", 180.0, minimum=0.1)

# A dotted path to a callable `(text) -> list[str]` used instead of the model or the rules, for
# a custom extractor (the write benchmark plugs in a fixed one). Empty: model if configured, else rules.
MEMORY_EXTRACTOR = env_str("MEMORY_EXTRACTOR", "")
# With a model configured, an English turn whose parse states facts keeps those and the model
# is asked only about the other turns (other languages, facts the parse cannot read). Off: the
# model extracts from every turn. Measured both ways in README "Memory quality".
MEMORY_GRAMMAR_FIRST = env_bool("MEMORY_GRAMMAR_FIRST", True)
# With a model configured, a turn in another language is first translated into English by it;
# the parse reads the translation, and the gate weighs facts against it too when the
# multilingual encoder finds it at least MEMORY_READING_FLOOR close to the turn (a translation
# that drifts, or a language the encoder does not read, is not used). README "Memory quality".
MEMORY_READ_IN_ENGLISH = env_bool("MEMORY_READ_IN_ENGLISH", True)
MEMORY_READING_FLOOR = env_float("MEMORY_READING_FLOOR", 0.55, minimum=0.0)
# With a model, a fact from a turn in another language may be kept only when the model, shown the
# turn, gives "yes" at least MEMORY_CONFIRM_FLOOR probability that the turn states it
# (memoryapp.write.confirm). Off by default: the local model refuses true facts in languages it
# reads poorly as readily as mistranslated ones (docs/quality/2026-12-07-confirming-translated-facts.md).
MEMORY_CONFIRM_TRANSLATED = env_bool("MEMORY_CONFIRM_TRANSLATED", False)
MEMORY_CONFIRM_FLOOR = env_float("MEMORY_CONFIRM_FLOOR", 0.5, minimum=0.0)

# "local-multilingual" is the Universal Sentence Encoder multilingual v3 (16 languages, 512
# dimensions) and "local" all-MiniLM-L6-v2 (English, 384), both shipped in wheels; any other
# value is an embedding model name on the endpoint above. One model serves the write gate,
# recall and the paraphrase check; `manage.py reembed_memories` moves stored memories to it.
EMBEDDING_MODEL = env_str("MEMORY_EMBEDDING_MODEL", "local-multilingual")
EMBEDDING_TIMEOUT_SECONDS = env_float("MEMORY_EMBEDDING_TIMEOUT", 10.0, minimum=0.1)

# Thresholds belong to the embedding model that produced the similarities. Values for the
# local model are calibrated on the labelled suite (`manage.py evaluate_memory --calibrate`,
# see README "Memory quality"): the lowest gate that rejects 98% of invented facts, and the
# floor with the best read F1. An unknown model falls back to the conservative defaults
# until it is calibrated; the environment overrides either.
MEMORY_THRESHOLDS = {
    "all-MiniLM-L6-v2": {
        "write_gate": 0.49,
        "recall_floor": 0.26,
        "sensitive_floor": 0.5,
        "key_offset": 0.2,
        "question_offset": 0.05,
        "recall_gap": 0.2,
        "paraphrase": 0.92,
        # not calibrated to the target: this English encoder gives 0.067 of the suite's probes
        # needing nothing an excerpt at 0.5 (`evaluate_memory --history`)
        "history_floor": 0.5,
        "history_question_floor": 0.5,
    },
    # Calibrated on the suite the same way: set between the paraphrases and the different values
    # of one attribute (`evaluate_memory --calibrate`; the measurement log in docs/quality/).
    "use-multilingual-v3": {
        "write_gate": 0.42,
        "recall_floor": 0.29,
        "sensitive_floor": 0.31,
        "key_offset": 0.2,
        "question_offset": 0.05,
        "recall_gap": 0.11,
        "paraphrase": 0.88,
        # `evaluate_memory --history` on the suite: the pair with the best F1 of evidence found
        # and excerpts that are evidence at which at most 0.02 of the probes needing nothing get
        # an excerpt (a request's floor, and a question's: chat.history.excerpt_floor). Since the
        # suite's advice questions near an unrelated past turn were added, 0.047 of them get one
        # here, and only floors that lose 0.23 of the evidence meet 0.02 (docs/quality/).
        "history_floor": 0.34,
        "history_question_floor": 0.32,
    },
    "default": {
        "write_gate": 0.62,
        "recall_floor": 0.78,
        "sensitive_floor": 0.85,
        "key_offset": 0.2,
        "question_offset": 0.05,
        "recall_gap": 0.2,
        "paraphrase": 0.95,
        "history_floor": 0.85,
        "history_question_floor": 0.85,
    },
}
# Cosine similarities, so within [-1, 1]; None means "the embedding model's own value".
MEMORY_WRITE_GATE = env_float("MEMORY_WRITE_GATE", None, minimum=-1.0, maximum=1.0)
MEMORY_RECALL_FLOOR = env_float("MEMORY_RECALL_FLOOR", None, minimum=-1.0, maximum=1.0)
MEMORY_RECALL_K = env_int("MEMORY_RECALL_K", 5, minimum=1, maximum=50)
# A user with this many live memories of one embedding model gets approximate indexes of their
# own (memoryapp.user_index): IVFFlat lists (one per 33 memories) over their facts asked and the
# texts of memories with none, searched MEMORY_USER_INDEX_PROBES lists deep, and a graph over
# their needs' wordings, searched
# MEMORY_USER_INDEX_EF_SEARCH deep. Below it recall sorts the user's rows exactly. Off (unset)
# by default (docs/benchmarks.md, "Heavy users", says how close to the exact answer they come). 0 is off.
MEMORY_USER_INDEX_AT = env_int("MEMORY_USER_INDEX_AT", 0, minimum=0) or None
MEMORY_USER_INDEX_EF_SEARCH = env_int("MEMORY_USER_INDEX_EF_SEARCH", 200, minimum=1, maximum=1000)
MEMORY_USER_INDEX_PROBES = env_int("MEMORY_USER_INDEX_PROBES", 240, minimum=1, maximum=10000)
MEMORY_MAX_FACTS_PER_TURN = 2
MEMORY_MAX_FACT_CHARS = 300
# How long a deleted memory stays under "Recently deleted", restorable by its user (staff can
# restore any time); `purge_deleted` removes it for good after that.
MEMORY_RESTORE_DAYS = env_int("MEMORY_RESTORE_DAYS", 30, minimum=1, maximum=3650)

# --- Chat -----------------------------------------------------------------------------------
# The request's context window: system prompt, head summary, recalled memories, then as many
# recent turns as fit. Older turns are folded into the head summary; the log keeps them all.
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 3000, minimum=100)
CHAT_MAX_RECENT_TURNS = env_int("CHAT_MAX_RECENT_TURNS", 20, minimum=1)
CHAT_SUMMARY_MAX_CHARS = 2000
# A temporary chat is deleted for good this long after its last turn (`purge_deleted`); the
# pages stop showing it at that moment, whenever the purge runs.
CHAT_TEMPORARY_HOURS = env_int("CHAT_TEMPORARY_HOURS", 24, minimum=1, maximum=24 * 30)
CHAT_MAX_TURN_CHARS = 8000
# The chat history reference (chat.history): at most this many excerpts of the user's past
# conversations go into a reply's request, within this many tokens, each clearing the embedding
# model's `history_floor` (MEMORY_THRESHOLDS) unless CHAT_HISTORY_FLOOR overrides it.
CHAT_HISTORY_EXCERPTS = env_int("CHAT_HISTORY_EXCERPTS", 3, minimum=0, maximum=10)
CHAT_HISTORY_TOKENS = env_int("CHAT_HISTORY_TOKENS", 400, minimum=50)
CHAT_HISTORY_FLOOR = env_float("CHAT_HISTORY_FLOOR", None, minimum=-1.0, maximum=1.0)
CHAT_HISTORY_QUESTION_FLOOR = env_float("CHAT_HISTORY_QUESTION_FLOOR", None, minimum=-1.0, maximum=1.0)
# A probe's word too common to match past turns by (it only ranks those its other words match):
# in more than this share of the indexed turns and more than this many of them, by the table's
# statistics (chat.history). A share of 1 matches by every word.
CHAT_HISTORY_COMMON_SHARE = env_float("CHAT_HISTORY_COMMON_SHARE", 0.01, minimum=0.0, maximum=1.0)
CHAT_HISTORY_COMMON_TURNS = env_int("CHAT_HISTORY_COMMON_TURNS", 1000, minimum=0)

# Requests per window, counted in PostgreSQL (core/ratelimit.py): (limit, seconds, what).
RATE_LIMITS = {
    "login": (env_int("RATE_LIMIT_LOGIN", 10, minimum=1), 60, "sign-in attempts"),
    "signup": (env_int("RATE_LIMIT_SIGNUP", 5, minimum=1), 600, "sign-ups from this address"),
    "chat": (env_int("RATE_LIMIT_CHAT", 30, minimum=1), 60, "messages"),
    "search": (env_int("RATE_LIMIT_SEARCH", 60, minimum=1), 60, "searches"),
}
