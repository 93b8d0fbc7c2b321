from django.urls import path

from memoryapp import api

app_name = "memory_api"

urlpatterns = [
    path("", api.MemoryListApi.as_view(), name="memory_list"),
    path("search/", api.MemorySearchApi.as_view(), name="memory_search"),
    path("export/", api.MemoryExportApi.as_view(), name="memory_export"),
    path("deleted/", api.MemoryDeletedListApi.as_view(), name="memory_deleted"),
    path("settings/", api.MemorySettingsApi.as_view(), name="memory_settings"),
    path("<int:memory_id>/", api.MemoryDetailApi.as_view(), name="memory_detail"),
    path("<int:memory_id>/restore/", api.MemoryRestoreApi.as_view(), name="memory_restore"),
]
