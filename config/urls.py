from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authtoken.views import obtain_auth_token

from chat import views as chat_views
from chat.ratelimit import by_ip, by_username, rate_limited

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/signup/", chat_views.signup, name="signup"),
    path("accounts/login/", rate_limited("login", by_ip, by_username)(LoginView.as_view()), name="login"),
    path("accounts/delete/", chat_views.account_delete, name="account_delete"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("memories/", include("memoryapp.urls")),
    path("api/memories/", include("memoryapp.api_urls")),
    path("api/conversations/", include("chat.api_urls")),
    path("api/auth/token/", obtain_auth_token, name="api_token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
    path("", include("chat.urls")),
]
