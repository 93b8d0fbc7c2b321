from django.urls import path

from chat import views

app_name = "chat"

urlpatterns = [
    path("", views.conversation_list_view, name="conversation_list"),
    path("conversations/delete-all/", views.conversation_delete_all_view, name="conversation_delete_all"),
    path("c/<str:public_id>/", views.conversation_detail, name="conversation_detail"),
    path("c/<str:public_id>/delete/", views.conversation_delete_view, name="conversation_delete"),
    path("c/<str:public_id>/turns/", views.turn_create, name="turn_create"),
    path("c/<str:public_id>/turns/<int:seq>/reply/", views.turn_reply, name="turn_reply"),
    path("c/<str:public_id>/turns/<int:seq>/reply/stream/", views.turn_reply_stream, name="turn_reply_stream"),
    path("c/<str:public_id>/turns/<int:seq>/reply/stop/", views.turn_reply_stop, name="turn_reply_stop"),
    path("c/<str:public_id>/turns/<int:seq>/memory/", views.turn_memory, name="turn_memory"),
    path("c/<str:public_id>/turns/<int:seq>/redact/", views.turn_redact_view, name="turn_redact"),
]
