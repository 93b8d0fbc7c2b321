from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from chat import views as chat_views
from chat.api import TokenObtainApi
from core.ratelimit import by_ip, by_user, by_username, rate_limited

urlpatterns = [
    # Staff sign-in is limited like every other credential endpoint, per username and address.
    path("admin/login/", rate_limited("login", by_ip, by_username)(admin.site.login), name="admin_login"),
    path("admin/", admin.site.urls),
    path("accounts/", chat_views.account_view, name="account"),
    path("accounts/signup/", chat_views.signup, name="signup"),
    path("accounts/login/", rate_limited("login", by_ip, by_username)(auth_views.LoginView.as_view()), name="login"),
    path("accounts/delete/", chat_views.account_delete, name="account_delete"),
    # Sign-in and password change only: without an email service, a reset link could not be delivered.
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/sign-out-everywhere/", chat_views.sign_out_everywhere_view, name="sign_out_everywhere"),
    # Each attempt checks the current password: limited like a sign-in, per account and address.
    path(
        "accounts/password_change/",
        rate_limited("login", by_user, by_ip)(auth_views.PasswordChangeView.as_view()),
        name="password_change",
    ),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("memories/", include("memoryapp.urls")),
    path("api/memories/", include("memoryapp.api_urls")),
    path("api/conversations/", include("chat.api_urls")),
    path("api/auth/token/", TokenObtainApi.as_view(), name="api_token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
    path("", include("chat.urls")),
]


def handler404(request, exception):  # noqa: ARG001 - Django's signature
    """Under /api/ a 404 is JSON like every other API answer; elsewhere Django's page."""
    from django.http import JsonResponse
    from django.views.defaults import page_not_found

    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


def handler500(request):
    """A database that cannot be reached is an outage, not a bug: 503 with Retry-After (JSON under
    /api/, a plain page elsewhere; core.outage). Any other error: JSON under /api/, else Django's
    page. Django calls this inside its handler for the exception, so the exception is at hand."""
    import sys

    from django.http import JsonResponse
    from django.views.defaults import server_error

    from core.outage import DATABASE_UNAVAILABLE, is_api, unavailable

    if isinstance(sys.exc_info()[1], DATABASE_UNAVAILABLE):
        return unavailable(request)
    if is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return server_error(request)
