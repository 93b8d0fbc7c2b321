from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryapp.selectors import memory_trace


@login_required
@require_GET
def memory_detail(request: HttpRequest, memory_id: int) -> HttpResponse:
    """One memory with its provenance: where it came from, who restated it, where it was used."""
    trace = memory_trace(user=request.user, memory_id=memory_id)
    return render(request, "memoryapp/memory_detail.html", {"trace": trace})
