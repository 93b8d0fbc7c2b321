from django.urls import path

from chat import api

app_name = "chat_api"

urlpatterns = [
    path("", api.ConversationListApi.as_view(), name="conversation_list"),
    path("<str:public_id>/", api.ConversationDetailApi.as_view(), name="conversation_detail"),
    path("<str:public_id>/turns/", api.TurnListApi.as_view(), name="turn_list"),
    path("<str:public_id>/turns/<int:seq>/reply/", api.TurnReplyApi.as_view(), name="turn_reply"),
    path("<str:public_id>/turns/<int:seq>/redact/", api.TurnRedactApi.as_view(), name="turn_redact"),
]
