"""Settings for the memory app. One file; the environment decides the rest.

Without DATABASE_URL the app runs on an embedded PostgreSQL with pgvector in
`.data/postgres`; without a model endpoint it embeds with a local ONNX model and
extracts facts with built-in rules. Set the variables below and the same code is
the production system.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORY_DATA_DIR", str(BASE_DIR / ".data")))

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if SECRET_KEY is None:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug-mode"  # noqa: S105
ALLOWED_HOSTS = (env_str("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost") or "").split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_htmx",
    "memoryapp",
    "chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

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

_database_url = env_str("DATABASE_URL")
if _database_url:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.embedded_postgres",
            "NAME": "postgres",
            "USER": "postgres",
            "HOST": "",  # filled in by the backend once the server is up
            "EMBEDDED_DATA_ROOT": str(DATA_DIR),
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

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

TASKS = {"default": {"BACKEND": env_str("MEMORY_TASK_BACKEND", "django.tasks.backends.immediate.ImmediateBackend")}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"memoryapp": {"handlers": ["console"], "level": env_str("MEMORY_LOG_LEVEL", "INFO")}},
}

# --- Models behind the memory --------------------------------------------------------------
# Any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server). Setting
# OPENAI_BASE_URL or OPENAI_API_KEY turns the language model on; without them the app runs
# offline with the rule-based extractor and a labelled no-model reply.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
LLM_ENABLED = bool(OPENAI_BASE_URL or OPENAI_API_KEY)
LLM_CHAT_MODEL = env_str("MEMORY_CHAT_MODEL", "gpt-4o-mini")
LLM_EXTRACT_MODEL = env_str("MEMORY_EXTRACT_MODEL", LLM_CHAT_MODEL)
# A chat turn must not hang for minutes: the client's defaults are 600 s and 2 retries.
LLM_TIMEOUT_SECONDS = env_float("MEMORY_LLM_TIMEOUT", 20.0)
LLM_MAX_RETRIES = env_int("MEMORY_LLM_MAX_RETRIES", 1)

# "local" is all-MiniLM-L6-v2 on onnxruntime, shipped in a wheel; any other value is an
# embedding model name on the endpoint above.
EMBEDDING_MODEL = env_str("MEMORY_EMBEDDING_MODEL", "local")
EMBEDDING_TIMEOUT_SECONDS = env_float("MEMORY_EMBEDDING_TIMEOUT", 10.0)

# Thresholds belong to the embedding model that produced the similarities. Values for the
# local model are calibrated on the labelled suite (`manage.py evaluate_memory --calibrate`,
# see README "Memory quality"): the lowest gate that rejects 98% of invented facts, and the
# floor with the best read F1. An unknown model falls back to the conservative defaults
# until it is calibrated; the environment overrides either.
MEMORY_THRESHOLDS = {
    "all-MiniLM-L6-v2": {"write_gate": 0.49, "recall_floor": 0.26},
    "default": {"write_gate": 0.62, "recall_floor": 0.78},
}
MEMORY_WRITE_GATE = env_str("MEMORY_WRITE_GATE")
MEMORY_RECALL_FLOOR = env_str("MEMORY_RECALL_FLOOR")
MEMORY_RECALL_K = env_int("MEMORY_RECALL_K", 5)
MEMORY_MAX_FACTS_PER_TURN = 2
MEMORY_MAX_FACT_CHARS = 300
# How long a user can undo a memory delete from the memory page (staff can restore any time).
MEMORY_UNDO_SECONDS = env_int("MEMORY_UNDO_SECONDS", 300)

# --- Chat -----------------------------------------------------------------------------------
# The request's context window: system prompt, head summary, recalled memories, then as many
# recent turns as fit. Older turns are folded into the head summary; the log keeps them all.
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 3000)
CHAT_MAX_RECENT_TURNS = env_int("CHAT_MAX_RECENT_TURNS", 20)
CHAT_SUMMARY_MAX_CHARS = 2000
CHAT_MAX_TURN_CHARS = 8000
