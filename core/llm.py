"""The language-model boundary: one OpenAI client with a short timeout and bounded retries,
and what its failures mean to a user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam


class ModelUnavailable(Exception):
    """The model endpoint failed (timeout, refused, error status, or an unusable answer)."""


def as_messages(messages: Sequence[dict[str, str]]) -> list[ChatCompletionMessageParam]:
    """The request's messages as the client types them: each is a {"role", "content"} dict with
    the role one of "system", "user" or "assistant", as every message built here is."""
    return cast("list[ChatCompletionMessageParam]", list(messages))


def endpoint_errors() -> tuple[type[BaseException], ...]:
    """What a call to the endpoint can raise when the endpoint, not our code, is at fault.

    Besides the client's own errors, a body that is not the JSON it promised (an HTML page
    from a proxy, a truncated answer) surfaces as a ValueError or a validation error.
    """
    import openai

    return (openai.OpenAIError, ValueError, KeyError, TypeError)


def explain(exc: BaseException) -> str:
    """One sentence for the user about a failed call to the language model."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "The language model did not answer in time."
    if isinstance(exc, openai.APIConnectionError):
        return "The language model could not be reached."
    if isinstance(exc, openai.RateLimitError):
        return "The language model is rate-limiting requests."
    if isinstance(exc, openai.APIStatusError):
        return f"The language model answered with an error ({exc.status_code})."
    return "The language model returned an unreadable answer."


def openai_client(*, timeout: float | None = None) -> openai.OpenAI:
    import openai

    return openai.OpenAI(
        base_url=settings.OPENAI_BASE_URL,
        # Local servers (Ollama, vLLM, llama.cpp) accept any key; the client insists on one.
        api_key=settings.OPENAI_API_KEY or "not-needed",
        timeout=timeout if timeout is not None else settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
