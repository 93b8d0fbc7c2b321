from django.urls import path

from memoryapp import views

app_name = "memoryapp"

urlpatterns = [
    path("", views.memory_list_view, name="memory_list"),
    path("add/", views.memory_add_view, name="memory_add"),
    path("pause/", views.memory_pause_view, name="memory_pause"),
    path("chat-history/", views.memory_reference_history_view, name="memory_reference_history"),
    path("export/", views.memory_export_view, name="memory_export"),
    path("about-me/", views.memory_profile_view, name="memory_profile"),
    path("deleted/", views.memory_deleted_view, name="memory_deleted"),
    path("forget-all/", views.memory_forget_all_view, name="memory_forget_all"),
    path("<int:memory_id>/", views.memory_detail, name="memory_detail"),
    path("<int:memory_id>/edit/", views.memory_edit, name="memory_edit"),
    path("<int:memory_id>/delete/", views.memory_delete, name="memory_delete"),
    path("<int:memory_id>/undo/", views.memory_undo, name="memory_undo"),
]
